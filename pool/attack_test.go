package pool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
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

// An agent that puts a link to the main checkout in its worktree's place,
// or puts its worktree's HEAD on main, gets no git command of
// orchestrate's run there: nothing is committed onto main, the person's
// change not committed stays as it is, and the worktree that is no longer
// it is a failure of the issue, recorded, that ends its work in the run.
func TestAgentsWorktreeSwappedForALink(t *testing.T) {
	for _, tc := range []struct {
		name, attack, said string
		kept               int // worktrees kept, with work not merged
	}{
		{"link", `d=$PWD; cd / && rm -rf "$d" && ln -s ROOT "$d"`, "is no longer the one orchestrate made: a link to ROOT", 0},
		{"head", `echo x > x.txt && git symbolic-ref HEAD refs/heads/main`, "is no longer the one orchestrate made: its HEAD is on refs/heads/main", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var root string
			w := agentsRepo(t, func(w loop.Workspace) string {
				root = w.Root()
				return "agent:\n  command: '" + logLaunch(w) + strings.ReplaceAll(tc.attack, "ROOT", w.Root()) + "'\n" +
					"gates:\n  - name: test\n    command: 'true'\n"
			}, "one")
			if err := os.WriteFile(filepath.Join(w.Root(), "shared.txt"), []byte("the person's edit\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res := runAgents(t, w, 1)
			if got := gitIn(t, w.Root(), "rev-list", "--count", "main"); got != "1" {
				t.Errorf("main has %s commits, want 1: %s", got, gitIn(t, w.Root(), "log", "--stat", "-1"))
			}
			if got := gitIn(t, w.Root(), "status", "--porcelain", "--untracked-files=no"); got != "M shared.txt" {
				t.Errorf("the checkout's status: %q; want the person's change, not committed", got)
			}
			if n := launches(t, w); len(res.Worked) != 1 || n[res.Worked[0].Issue] != 1 {
				t.Fatalf("worked %+v, launches %v; want one issue launched once", res.Worked, n)
			}
			id, said := res.Worked[0].Issue, strings.ReplaceAll(tc.said, "ROOT", root)
			is := loadIssue(t, w, id)
			if d := is.Section(queue.SectionFailureDetails); d == nil || !strings.Contains(d.Body(), said) {
				t.Errorf("%s: failure %v; want %q", id, d, said)
			}
			if res.Outcome == loop.RunPassed || !strings.Contains(res.Worked[0].Reason, said) {
				t.Errorf("RunAgents = %s %q, %s: %q", res.Outcome, res.Reason, id, res.Worked[0].Reason)
			}
			if _, err := os.Stat(w.Path(loop.QueueFile)); err != nil {
				t.Errorf("the checkout lost its queue: %v", err)
			}
			if out := gitIn(t, w.Root(), "worktree", "list"); strings.Count(out, "\n") != tc.kept || len(res.Left) != tc.kept {
				t.Errorf("worktrees left:\n%s\nreported: %q; want %d", out, res.Left, tc.kept)
			}
		})
	}
}

// A person's directories in agents.worktrees stay as they are, whatever
// their names: orchestrate removes only the worktrees and temporary
// directories it made. One named as the worktree of an issue to work is
// in the way: the run says so, and deletes nothing.
func TestAgentsKeepThePersonsDirectories(t *testing.T) {
	trees := t.TempDir()
	mine := []string{"notes", "notes.tmp", "ISSUE-20241213-009", "ISSUE-20241213-009.tmp", "ISSUE-20241213-002.tmp.tmp"}
	for _, d := range mine {
		if err := os.MkdirAll(filepath.Join(trees, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(trees, d, "mine.txt"), []byte("mine\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agents:\n  worktrees: " + trees + "\n" +
			"agent:\n  command: '" + `id=${ORCHESTRATE_CLAIM%%:*}; echo "$id" > "$id.txt"'` + "\n" +
			"gates:\n  - name: test\n    command: 'ls ISSUE-*.txt'\n"
	}, "one", "two")
	// A killed run's branch of the issue whose name the person's
	// directories have: the cleanup at the start removes it, and only it.
	gitIn(t, w.Root(), "branch", "orchestrate/ISSUE-20241213-009")
	res := runAgents(t, w, 2)
	if res.Outcome != loop.RunPassed || len(res.Merged) != 2 {
		t.Errorf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	if out := gitIn(t, w.Root(), "branch", "--list", "orchestrate/*"); out != "" {
		t.Errorf("branches left: %s", out)
	}
	kept := func() {
		t.Helper()
		for _, d := range mine {
			if _, err := os.Stat(filepath.Join(trees, d, "mine.txt")); err != nil {
				t.Errorf("the person's %s: %v", d, err)
			}
		}
	}
	kept()

	// A directory of the person's where the next issue's worktree, or its
	// temporary directory, would go.
	for _, suffix := range []string{"", ".tmp"} {
		t.Run("worktree"+suffix, func(t *testing.T) {
			added, err := w.AddIssue(t.Context(), testNow, loop.NewIssue{Sections: map[string]string{queue.SectionSummary: "three"}})
			if err != nil {
				t.Fatal(err)
			}
			in := added.ID + suffix
			mine = append(mine, in)
			if err := os.MkdirAll(filepath.Join(trees, in), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(trees, in, "mine.txt"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Run(t.Context(), w, Options{Agents: 1})
			if err == nil || !strings.Contains(err.Error(), filepath.Join(trees, in)+" is in the way") {
				t.Errorf("a run with the person's %s in the way: %v", in, err)
			}
			kept()
			os.RemoveAll(filepath.Join(trees, in))
			mine = mine[:len(mine)-1]
		})
	}
}

// An agent whose worktree is deleted, by itself or after orchestrate last
// looked at it, spends at most one retry of its issue: its work stops,
// said as a failure of the machine, the issue is left open for the next
// run, and the other agents go on.
func TestAgentsWorktreeDeleted(t *testing.T) {
	for _, tc := range []struct{ name, attack string }{
		{"by the agent", `d=$PWD; cd / && rm -rf "$d"`},
		{"after the check", `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := agentsRepo(t, func(w loop.Workspace) string {
				return "retry:\n  max_retries: 3\nagent:\n  command: '" + logLaunch(w) + `case $id in *-001) ` + tc.attack + `;; *) echo "$id" > "$id.txt";; esac'` + "\n" +
					"gates:\n  - name: test\n    command: 'true'\n"
			}, "one", "two")
			if tc.attack == "true" {
				testAfterCheck = func(dir string) {
					if strings.HasSuffix(dir, "-001") {
						os.RemoveAll(dir)
					}
				}
				t.Cleanup(func() { testAfterCheck = nil })
			}
			res := runAgents(t, w, 1)
			n := launches(t, w)
			var first *loop.Worked
			for i := range res.Worked {
				if strings.HasSuffix(res.Worked[i].Issue, "-001") {
					first = &res.Worked[i]
				}
			}
			if first == nil || n[first.Issue] != 1 {
				t.Fatalf("worked %+v, launches %v; want the first issue launched once", res.Worked, n)
			}
			if !strings.Contains(first.Reason, "is gone: it was deleted while its agent worked: a failure of the machine, not of the issue, which is left for the next run") {
				t.Errorf("%s: %s %q; want its worktree gone said", first.Issue, first.Outcome, first.Reason)
			}
			is := loadIssue(t, w, first.Issue)
			if d := is.Section(queue.SectionFailureDetails); d != nil && strings.Contains(d.Body(), "is gone") {
				t.Errorf("%s: the machine's failure recorded as the issue's: %q", first.Issue, d.Body())
			}
			if is.Int(queue.FieldRetryCount, 0) > 1 || is.Status() == queue.StatusResolved || is.Status() == queue.StatusStuck || claim.Of(is).Holder != "" {
				t.Errorf("%s: status %s, Retry-Count %d, claim %+v; want it open, one retry at most, released", first.Issue, is.Status(), is.Int(queue.FieldRetryCount, 0), claim.Of(is))
			}
			if len(res.Merged) != 1 || res.Outcome == loop.RunError {
				t.Errorf("RunAgents = %s %q, merged %v; want the other issue merged", res.Outcome, res.Reason, res.Merged)
			}
			if out := gitIn(t, w.Root(), "worktree", "list"); strings.Count(out, "\n") != 0 {
				t.Errorf("worktrees left:\n%s", out)
			}
		})
	}
}

// An agent that moves the integration branch onto its own failing commit
// stops the run at once: the run names the commit, builds nothing on it,
// and does not blame the person's checkout, which did not move.
func TestAgentsBranchMovedByAnAgent(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "retry:\n  max_retries: 1\nagent:\n  command: '" + logLaunch(w) + `case $id in *-001) echo bad > bad.txt && git add -A && git -c user.name=a -c user.email=a@a commit -qm "the agent moves main" && git update-ref refs/heads/main HEAD;; *) echo "$id" > "$id.txt";; esac'` + "\n" +
			"gates:\n  - name: test\n    command: 'test ! -e bad.txt'\n"
	}, "one", "two")
	before := gitIn(t, w.Root(), "rev-parse", "main")
	res, err := Run(t.Context(), w, Options{Agents: 1})
	moved := gitIn(t, w.Root(), "rev-parse", "main")
	if moved == before {
		t.Fatal("the agent did not move main")
	}
	want := fmt.Sprintf("main moved from %.12s to %.12s (the agent moves main), which no merge of orchestrate's made", before, moved)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "local changes") {
		t.Errorf("Run: %v; want %q, and no word of local changes", err, want)
	}
	if n := launches(t, w); len(n) != 1 || n["ISSUE-20241213-001"] != 1 {
		t.Errorf("launches %v; want the run stopped after the agent that moved main", n)
	}
	if res != nil && len(res.Merged) > 0 {
		t.Errorf("merged %v onto the agent's commit", res.Merged)
	}
	if got := gitIn(t, w.Root(), "rev-list", "--count", "main"); got != "2" {
		t.Errorf("main has %s commits; want the agent's alone on the first", got)
	}
}
