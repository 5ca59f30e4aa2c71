package pool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// plantHooks is an agent command's start that plants, in the repository's
// common git directory, a hook of each kind orchestrate's git commands
// could run and a file system monitor, each noting its name in marks.
func plantHooks(marks string) string {
	hooks := []string{"post-checkout", "post-commit", "post-merge", "post-rewrite", "pre-rebase",
		"reference-transaction", "prepare-commit-msg", "pre-commit", "commit-msg", "pre-auto-gc", "pre-push", "post-index-change"}
	s := `common=$(git rev-parse --path-format=absolute --git-common-dir) && mkdir -p "$common/hooks" && `
	for _, h := range hooks {
		s += `printf "#!/bin/sh\necho ` + h + ` >> ` + marks + `\n" > "$common/hooks/` + h + `" && chmod +x "$common/hooks/` + h + `" && `
	}
	return s + `printf "#!/bin/sh\necho fsmonitor >> ` + marks + `\nexit 1\n" > "$common/fsmon" && chmod +x "$common/fsmon" && ` +
		`git config core.fsmonitor "$common/fsmon" && git config commit.gpgSign true && git config gpg.program "$common/fsmon" && `
}

// An agent that plants git hooks and a file system monitor in the
// repository runs none of them through orchestrate: its work is
// committed, rebased and merged into the checkout with every hook off.
func TestAgentsPlantedHooksDoNotRun(t *testing.T) {
	marks := filepath.Join(t.TempDir(), "marks")
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agent:\n  command: '" + plantHooks(marks) + `id=${ORCHESTRATE_CLAIM%%:*}; echo "$id" > "$id.txt"'` + "\n" +
			"gates:\n  - name: test\n    command: 'ls ISSUE-*.txt'\n"
	}, "one", "two")
	res := runAgents(t, w, 2)
	ran, _ := os.ReadFile(marks)
	if res.Outcome != loop.RunPassed || len(res.Merged) != 2 {
		t.Errorf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	if s := strings.Fields(string(ran)); len(s) > 0 {
		t.Errorf("orchestrate's git ran what the agent planted: %v", s)
	}
}
