package loop

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// git runs git in the workspace's repository and returns its stdout. Its
// commands are local and quick: git.DefaultTimeout bounds each.
func (w Workspace) git(ctx context.Context, args ...string) (string, error) {
	return git.In(w.Root()).Output(ctx, args...)
}

// inGit reports whether the repository is a git work tree (and git is
// installed).
func (w Workspace) inGit(ctx context.Context) bool {
	out, err := w.git(ctx, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(out) == "true"
}

// outsideWorkspace is the pathspec of the repository without the workspace
// directory: the agent's changes are the tree's, the tool's own files are
// not (a stash of them would roll the queue back).
func (w Workspace) outsideWorkspace() []string {
	spec := []string{"--", "."}
	for _, dir := range w.diffExclude() {
		spec = append(spec, ":(exclude)"+filepath.ToSlash(dir))
	}
	return spec
}

// filesChanged returns git diff --stat against HEAD and the new files not
// ignored, outside the workspace directory, in a repository that is a git
// work tree (the run asked once, at its start): two git processes.
func (w Workspace) filesChanged(ctx context.Context) string {
	var b strings.Builder
	if out, err := w.git(ctx, append([]string{"diff", "--stat", "HEAD"}, w.outsideWorkspace()...)...); err == nil {
		b.WriteString(strings.TrimRight(out, "\n"))
	}
	if out, err := w.git(ctx, append([]string{"ls-files", "--others", "--exclude-standard"}, w.outsideWorkspace()...)...); err == nil {
		for _, f := range strings.Fields(out) {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(" " + f + " (new)")
		}
	}
	return b.String()
}

// stashExhausted keeps the failed attempt's changes in a git stash entry
// named after the issues, which also restores the tree to HEAD. It returns
// the entry's message, or "" when there was nothing to stash or no git
// repository.
func (w Workspace) stashExhausted(ctx context.Context, ids []string) (string, error) {
	if !w.inGit(ctx) {
		return "", nil
	}
	status, err := w.git(ctx, append([]string{"status", "--porcelain", "--untracked-files=all"}, w.outsideWorkspace()...)...)
	if err != nil || strings.TrimSpace(status) == "" {
		return "", err
	}
	what := strings.Join(ids, " ")
	if what == "" {
		what = "run"
	}
	msg := "orchestrate: " + what + " exhausted"
	if _, err := w.git(ctx, append([]string{"stash", "push", "--include-untracked", "-m", msg}, w.outsideWorkspace()...)...); err != nil {
		return "", err
	}
	return msg, nil
}
