package pool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// The train, on real worktrees: three cars board while the branch has
// moved, so each is to be checked again; A's work fails the gates. The
// last car's check covers the cars ahead: theirs are stopped as each
// boards behind them, and only C's runs, on the work of all three. It
// fails, so A and B are checked on their own: A's fails, and A leaves with
// its failure recorded; B and C, checked with its work, are put onto the
// branch without it, and C's check, covering B's, passes: both are merged
// at once, in order, with no failure of their own. Four checks at most,
// where each car checked on its own would be five.
func TestTrainFailedCarLeaves(t *testing.T) {
	root, repo := trainRepo(t, "base.txt")
	trees := map[string]*worktree.Tree{}
	for _, name := range []string{"A", "B", "C"} {
		trees[name] = carTree(t, repo, name, name+".txt", name+"\n", name)
	}
	// The branch moves: every car's rebase moves it, and it is checked.
	os.WriteFile(filepath.Join(root, "moved.txt"), []byte("moved\n"), 0o644)
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "moved")

	tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"}}
	release := make(chan struct{})
	var mu sync.Mutex
	seen := map[string][]string{} // car → what each of its checks saw
	recorded := map[string]int{}
	var cars riders
	for i, name := range []string{"A", "B", "C"} {
		c := &car{tree: trees[name]}
		c.check = func(ctx context.Context) (*loop.GateRun, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			names := treeFiles(c.tree.Dir)
			mu.Lock()
			seen[c.tree.Issue] = append(seen[c.tree.Issue], names)
			mu.Unlock()
			// A's work breaks whatever holds it.
			return &loop.GateRun{Evaluation: &gate.Evaluation{Passed: !strings.HasPrefix(names, "A,")}}, nil
		}
		c.record = func(context.Context, *loop.GateRun) error {
			mu.Lock()
			recorded[c.tree.Issue]++
			mu.Unlock()
			return nil
		}
		cars.ride(t, tr, c, i+1) // in this order
	}
	close(release)
	cars.wait(t)
	if r := cars.end("A"); r.failed == nil || r.merged != "" || recorded["A"] != 1 {
		t.Errorf("A: %+v, recorded %d times", r, recorded["A"])
	}
	for _, name := range []string{"B", "C"} {
		if r := cars.end(name); r.merged == "" || r.err != nil || recorded[name] != 0 {
			t.Errorf("%s: %+v, recorded %d times", name, r, recorded[name])
		}
	}
	want := map[string]string{
		"A": "A,base,moved",
		"C": "A,B,C,base,moved B,C,base,moved",
	}
	for name, w := range want {
		if got := strings.Join(seen[name], " "); got != w {
			t.Errorf("%s's checks saw %q; want %q", name, got, w)
		}
	}
	// B's own check, at once with A's, is in before A leaves, or is
	// stopped as A leaves: B, put onto the branch, is then covered by C.
	if got := strings.Join(seen["B"], " "); got != "A,B,base,moved" && got != "" {
		t.Errorf("B's checks saw %q; want one, on A's work, or none", got)
	}
	if b, c := cars.end("B").merged, cars.end("C").merged; b == "" || gitIn(t, root, "rev-parse", "main~1") != b || gitIn(t, root, "rev-parse", "main") != c {
		t.Errorf("B merged as %.12s, C as %.12s; want main~1 and main", b, c)
	}
	log := gitIn(t, root, "log", "--format=%s", "main")
	if log != "C\nB\nmoved\ninit" {
		t.Errorf("main's log:\n%s", log)
	}
}

// riders are the cars of a test riding a train, each merging in a
// goroutine of its own, and how each one's merge ended, by its issue.
type riders struct {
	mu   sync.Mutex
	wg   sync.WaitGroup
	ends map[string]carResult
}

// ride puts c on tr, and waits until tr holds n cars.
func (r *riders) ride(t *testing.T, tr *train, c *car, n int) {
	t.Helper()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		end := tr.merge(context.Background(), c)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.ends == nil {
			r.ends = map[string]carResult{}
		}
		r.ends[c.tree.Issue] = end
	}()
	waitCars(t, tr, n)
}

// end is how the merge of issue's car ended: zero while it rides.
func (r *riders) end(issue string) carResult {
	e, _ := r.ended(issue)
	return e
}

// ended is how the merge of issue's car ended, and whether it did.
func (r *riders) ended(issue string) (carResult, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.ends[issue]
	return e, ok
}

// wait waits for every car's merge to end, a minute at most: a train
// that waits for ever fails the test.
func (r *riders) wait(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the train never ended: its cars still wait")
	}
}

// treeFiles names the .txt files of dir, by their names without .txt, in
// order, joined with commas.
func treeFiles(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".txt"))
	}
	return strings.Join(names, ",")
}

// trainRepo is a repository on main whose one commit holds file, and its
// worktree.Repo; the worktrees go in a directory of the test's.
func trainRepo(t *testing.T, file string) (string, *worktree.Repo) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	gitIn(t, root, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(root, file), []byte("base\n"), 0o644)
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "init")
	repo, err := worktree.Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	return root, repo
}

// carTree makes the worktree of issue name on main, with text written to
// its file and committed with message: a car's work.
func carTree(t *testing.T, repo *worktree.Repo, name, file, text, message string) *worktree.Tree {
	t.Helper()
	ctx := context.Background()
	tree, err := repo.Add(ctx, name, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree.Dir, file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Commit(ctx, message); err != nil {
		t.Fatal(err)
	}
	return tree
}

// waitCars waits until the train holds n cars.
func waitCars(t *testing.T, tr *train, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		tr.mu.Lock()
		got := len(tr.cars)
		tr.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("the train never held %d cars", n)
}

// A car that conflicts with the work of a car ahead, not merged yet, waits
// for it and boards again: it goes back to its agent only once that work
// is on the branch, where a rebase finds it. Sent back at once, its agent
// rebased onto a branch without that work, and conflicted again: a second
// attempt spent on nothing (TestAgentsConflict, on a loaded machine).
func TestTrainConflictWaitsForTheCarAhead(t *testing.T) {
	root, repo := trainRepo(t, "shared.txt")
	ctx := context.Background()
	cars := map[string]*car{}
	release := make(chan struct{})
	for _, name := range []string{"A", "B"} {
		cars[name] = &car{tree: carTree(t, repo, name, "shared.txt", name+"\n", name),
			check: func(ctx context.Context) (*loop.GateRun, error) {
				select {
				case <-release:
					return nil, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			},
			record: func(context.Context, *loop.GateRun) error { return nil }}
	}
	// A moves on the branch first, so that its check runs (and waits).
	os.WriteFile(filepath.Join(root, "other.txt"), []byte("other\n"), 0o644)
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "other")

	tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"}}
	gotA := make(chan carResult, 1)
	go func() { gotA <- tr.merge(ctx, cars["A"]) }()
	waitCars(t, tr, 1)
	gotB := make(chan carResult, 1)
	go func() { gotB <- tr.merge(ctx, cars["B"]) }()
	// B's answer, or B waiting for the train to move, whichever comes
	// first; then A may land.
	var b carResult
	answered := false
	for deadline := time.Now().Add(time.Minute); !answered; time.Sleep(5 * time.Millisecond) {
		select {
		case b = <-gotB:
			answered = true
		default:
		}
		tr.mu.Lock()
		waiting := tr.left != nil
		tr.mu.Unlock()
		if waiting || time.Now().After(deadline) {
			break
		}
	}
	onMain := func() string { return gitIn(t, root, "log", "--format=%s", "main") }
	if answered {
		t.Fatalf("B was sent back while A was not merged (main: %q): %+v", onMain(), b)
	}
	close(release)
	if a := <-gotA; a.merged == "" {
		t.Fatalf("A: %+v", a)
	}
	b = <-gotB
	if b.conflict == nil || len(b.ahead) != 0 {
		t.Fatalf("B: %+v; want a conflict with the branch", b)
	}
	if log := onMain(); log != "A\nother\ninit" {
		t.Errorf("main when B was sent back:\n%s", log)
	}
}

// The car behind covers the car ahead: A's check is stopped when B boards
// behind it, and nothing is merged until B's check, on both cars' work, is
// in. A commit of a person's on the branch meanwhile is no failure of the
// cars: the train goes onto it, checks B again, and merges both on top, in
// order, with one fast-forward.
func TestTrainInOrderOntoTheBranchMoved(t *testing.T) {
	root, repo := trainRepo(t, "base.txt")
	trees := map[string]*worktree.Tree{}
	for _, name := range []string{"A", "B"} {
		trees[name] = carTree(t, repo, name, name+".txt", name+"\n", name)
	}
	commit := func(name string) string {
		os.WriteFile(filepath.Join(root, name+".txt"), []byte(name+"\n"), 0o644)
		gitIn(t, root, "add", ".")
		gitIn(t, root, "commit", "-qm", name)
		return gitIn(t, root, "rev-parse", "main")
	}
	base := commit("moved") // every car's rebase moves it: each is checked

	// Judged by their issues, on a base whose results are known: each
	// check fixes two tests.
	bases := &baselines{}
	bases.note(base, nil)
	tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"}, bases: bases}
	releaseB := make(chan struct{})
	var mu sync.Mutex
	var cars riders
	seen := map[string][]string{}
	started := map[string]int{}
	recorded := 0
	for i, name := range []string{"A", "B"} {
		c := &car{tree: trees[name], fresh: true}
		c.judge = func(gr *loop.GateRun, _ []results.Report) error {
			gr.Verdict = &results.Verdict{Pass: true, Fixed: []results.Unit{{Gate: "tests", ID: "T1"}, {Gate: "tests", ID: "T2"}}}
			return nil
		}
		c.check = func(ctx context.Context) (*loop.GateRun, error) {
			mu.Lock()
			started[c.tree.Issue]++
			mu.Unlock()
			if c.tree.Issue == "A" {
				<-ctx.Done() // only a car ahead of none would pass
				return nil, ctx.Err()
			}
			select {
			case <-releaseB:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			mu.Lock()
			seen[c.tree.Issue] = append(seen[c.tree.Issue], treeFiles(c.tree.Dir))
			mu.Unlock()
			return &loop.GateRun{Evaluation: &gate.Evaluation{Passed: true}}, nil
		}
		c.record = func(context.Context, *loop.GateRun) error {
			mu.Lock()
			recorded++
			mu.Unlock()
			return nil
		}
		cars.ride(t, tr, c, i+1) // in this order
	}
	tr.mu.Lock()
	aRunning, bRunning := tr.cars[0].running != nil, tr.cars[1].running != nil
	tr.mu.Unlock()
	if aRunning || !bRunning {
		t.Errorf("A's check running: %v, B's: %v; want B's alone", aRunning, bRunning)
	}
	if head := gitIn(t, root, "rev-parse", "main"); head != base {
		t.Errorf("main moved to %.12s before the check of the last car was in", head)
	}
	person := commit("person") // the branch moves under the train
	bases.note(person, nil)
	close(releaseB)
	cars.wait(t)
	for _, name := range []string{"A", "B"} {
		if r := cars.end(name); r.merged == "" || r.err != nil || r.conflict != nil || r.failed != nil {
			t.Errorf("%s: %+v; want merged", name, r)
		}
	}
	if recorded != 0 {
		t.Errorf("%d failures recorded; want none", recorded)
	}
	if got, want := strings.Join(seen["B"], " "), "A,B,base,moved A,B,base,moved,person"; got != want {
		t.Errorf("B's checks saw %q; want %q", got, want)
	}
	// The tests fixed are told once, on the car whose check fixed them.
	for name, want := range map[string]int{"A": 0, "B": 2} {
		if v := cars.end(name).verdict; v == nil || len(v.Fixed) != want {
			t.Errorf("%s's verdict: %+v; want %d tests fixed", name, v, want)
		}
	}
	if started["A"] != 1 {
		t.Errorf("A's check started %d times; want once, stopped when B boarded", started["A"])
	}
	if log := gitIn(t, root, "log", "--format=%s", "main"); log != "B\nA\nperson\nmoved\ninit" {
		t.Errorf("main's log:\n%s", log)
	}
}

// A car with no commits of its own (an agent that changed nothing),
// checked alone, fails and leaves while the check of the car behind it
// runs: that car, put back onto the same work, is not moved, and its check
// goes on, and counts. Stopped and counted, it was an error of the car
// behind ("context canceled"), which ended its agent's run.
func TestTrainCarWithoutCommitsLeaves(t *testing.T) {
	root, repo := trainRepo(t, "base.txt")
	ctx := context.Background()
	a, err := repo.Add(ctx, "A", "main")
	if err != nil {
		t.Fatal(err)
	}
	b := carTree(t, repo, "B", "B.txt", "B\n", "B")
	tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"}}
	releaseA, releaseB := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	started := map[string]int{}
	var cars riders
	for i, tree := range []*worktree.Tree{a, b} {
		c := &car{tree: tree, fresh: true, alone: true}
		c.check = func(ctx context.Context) (*loop.GateRun, error) {
			mu.Lock()
			started[c.tree.Issue]++
			mu.Unlock()
			release := releaseA
			if c.tree.Issue == "B" {
				release = releaseB
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &loop.GateRun{Evaluation: &gate.Evaluation{Passed: c.tree.Issue == "B"}}, nil
		}
		c.record = func(context.Context, *loop.GateRun) error { return nil }
		cars.ride(t, tr, c, i+1) // in this order
	}
	// A fails and leaves; then B's check, under way all along, passes.
	close(releaseA)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if _, left := cars.ended("A"); left {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A never left")
		}
	}
	close(releaseB)
	cars.wait(t)
	if r := cars.end("A"); r.failed == nil {
		t.Errorf("A: %+v; want failed", r)
	}
	if r := cars.end("B"); r.merged == "" || r.err != nil {
		t.Errorf("B: %+v; want merged", r)
	}
	if started["B"] != 1 {
		t.Errorf("B's check started %d times; want once", started["B"])
	}
	if log := gitIn(t, root, "log", "--format=%s", "main"); log != "B\ninit" {
		t.Errorf("main's log:\n%s", log)
	}
}
