package pool

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// A run is killed after its train put B, whose agent committed nothing,
// onto A's work, not merged: B's branch is left on A's commit, and the
// upstream the run knew died with it. The run that takes both issues over
// reads it from the branch (leftUpstream): B boards first, without A's
// work; A boards behind it; B's check fails and B leaves; A, put back onto
// the branch, still holds its own work, and is merged. Taken for B's own,
// A's commit would ride in B's car, and A, put back onto the branch
// without B's car, would lose it: its check would fail, and be recorded
// against A.
func TestTakenOverBranchOnOthersWork(t *testing.T) {
	root, repo := trainRepo(t, "base.txt")
	ctx := context.Background()
	a := carTree(t, repo, "A", "A.txt", "A\n", agentCommitMessage(loop.Claimed{ID: "A"}))
	b, err := repo.Add(ctx, "B", "main")
	if err != nil {
		t.Fatal(err)
	}
	aWork := gitIn(t, root, "rev-parse", "refs/heads/"+a.Branch)
	// The killed run's train: B, with no commit of its own, onto A's work.
	if err := b.RebaseOnto(ctx, aWork, ""); err != nil {
		t.Fatal(err)
	}
	// The next run takes both up as they were left.
	base := gitIn(t, root, "rev-parse", "main")
	p := &pool{repo: repo}
	var ups [2]string
	for i, id := range []string{"A", "B"} {
		tree, up, err := p.takeUp(ctx, id, base)
		if err != nil {
			t.Fatal(err)
		}
		ups[i] = up
		if id == "A" {
			a = tree
		} else {
			b = tree
		}
	}
	if ups[0] != "" || ups[1] != aWork {
		t.Errorf("upstreams of A and B left: %q, %q; want none and A's work %q", ups[0], ups[1], aWork)
	}

	tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"}}
	release := make(chan struct{})
	var mu sync.Mutex
	recorded := map[string]int{}
	var cars riders
	for i, tree := range []*worktree.Tree{b, a} {
		// Each issue learns its tests: checked on its own. Its gate
		// passes when its file is in its worktree.
		c := &car{tree: tree, upstream: ups[1-i], fresh: true, alone: true}
		c.check = func(ctx context.Context) (*loop.GateRun, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			_, err := os.Stat(filepath.Join(tree.Dir, tree.Issue+".txt"))
			return &loop.GateRun{Evaluation: &gate.Evaluation{Passed: err == nil}}, nil
		}
		c.record = func(context.Context, *loop.GateRun) error {
			mu.Lock()
			recorded[tree.Issue]++
			mu.Unlock()
			return nil
		}
		cars.ride(t, tr, c, i+1) // B first, then A behind it
	}
	close(release)
	cars.wait(t)
	if r := cars.end("B"); r.failed == nil || r.merged != "" || recorded["B"] != 1 {
		t.Errorf("B: %+v, recorded %d times; want failed once", r, recorded["B"])
	}
	if r := cars.end("A"); r.merged == "" || r.err != nil || recorded["A"] != 0 {
		t.Errorf("A: %+v, recorded %d times; want merged", r, recorded["A"])
	}
	if files := gitIn(t, root, "ls-tree", "--name-only", "main"); files != "A.txt\nbase.txt" {
		t.Errorf("main holds %q; want A.txt and base.txt", files)
	}
}
