package pool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// What a killed run left, at the next run's start: a worktree with one
// uncommitted line, and a branch with one commit not merged (its worktree
// deleted by hand), are kept and reported with the commands to look at
// them; a worktree and a branch that hold nothing a merge has not kept
// are removed.
func TestAgentsStartCleansWhatAKilledRunLeft(t *testing.T) {
	w := agentsRepo(t, func(loop.Workspace) string {
		return "agent:\n  command: 'true'\ngates:\n  - name: ok\n    command: 'true'\n"
	})
	ctx := context.Background()
	repo, err := worktree.Open(ctx, w.Root())
	if err != nil {
		t.Fatal(err)
	}
	trees := map[string]*worktree.Tree{}
	for _, id := range []string{"DIRTY", "AHEAD", "CLEAN", "GONE"} {
		if trees[id], err = repo.Add(ctx, id, "main"); err != nil {
			t.Fatal(err)
		}
	}
	dirty := filepath.Join(trees["DIRTY"].Dir, "shared.txt")
	if err := os.WriteFile(dirty, []byte("base\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(trees["AHEAD"].Dir, "ahead.txt"), []byte("ahead\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := trees["AHEAD"].Commit(ctx, "ahead"); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(trees["AHEAD"].Dir)
	os.RemoveAll(trees["GONE"].Dir)

	res := runAgents(t, w, 1)

	if len(res.Left) != 2 || !strings.HasPrefix(res.Left[0], "AHEAD: kept with 1 commit(s) not merged into main") ||
		!strings.HasPrefix(res.Left[1], "DIRTY: kept with uncommitted changes: look with git -C "+trees["DIRTY"].Dir+" status") {
		t.Errorf("left: %q", res.Left)
	}
	if data, _ := os.ReadFile(dirty); string(data) != "base\nmine\n" {
		t.Errorf("the uncommitted line was lost: shared.txt = %q", data)
	}
	if got := gitIn(t, w.Root(), "rev-list", "--count", "main..orchestrate/AHEAD"); got != "1" {
		t.Errorf("orchestrate/AHEAD holds %s commits not merged; want its 1", got)
	}
	if got := gitIn(t, w.Root(), "branch", "--list", "--format=%(refname:short)", "orchestrate/*"); got != "orchestrate/AHEAD\norchestrate/DIRTY" {
		t.Errorf("branches: %q; want those with work", got)
	}
	for _, id := range []string{"CLEAN", "GONE"} {
		if _, err := os.Stat(trees[id].Dir); err == nil {
			t.Errorf("%s: the worktree with nothing in it is still there", id)
		}
	}
	if out := gitIn(t, w.Root(), "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 2 {
		t.Errorf("worktrees: %s; want the checkout and DIRTY's", out)
	}
}

// agents.worktrees, when relative, is relative to the repository (not to
// the workspace directory, nor to where run was started).
func TestAgentsWorktreesRelativeToTheRepository(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agents:\n  worktrees: ../trees\n" +
			"agent:\n  command: 'pwd > \"" + filepath.Join(w.Root(), "where") + "\"; echo done > done.txt'\n" +
			"gates:\n  - name: ok\n    command: 'test -f done.txt'\n"
	}, "where")
	runAgents(t, w, 1)
	data, err := os.ReadFile(filepath.Join(w.Root(), "where"))
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(filepath.Dir(w.Root()), "trees", "ISSUE-20241213-001")
	if got := strings.TrimSpace(string(data)); got != want {
		t.Errorf("the agent worked in %s; want %s", got, want)
	}
}
