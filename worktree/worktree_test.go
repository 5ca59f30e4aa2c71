package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repo makes a git repository with one commit on main.
func repo(t *testing.T) *Repo {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	run(t, dir, "init", "-q", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "a\n")
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-qm", "init")
	r, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := gitIn(dir).Output(context.Background(), append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenFromLinkedWorktree(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "ISSUE-1", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tree.Dir, os.Getenv("XDG_DATA_HOME")+"/orchestrate/worktrees/") || strings.HasPrefix(tree.Dir, r.Root+"/") {
		t.Errorf("worktree %s is not in the data directory, outside the working tree %s", tree.Dir, r.Root)
	}
	if got := MainRoot(tree.Dir); got != r.Root {
		t.Errorf("MainRoot(linked) = %q, want %q", got, r.Root)
	}
	if got := MainRoot(r.Root); got != "" {
		t.Errorf("MainRoot(main) = %q, want \"\"", got)
	}
	r2, err := Open(ctx, filepath.Join(tree.Dir))
	if err != nil || r2.Root != r.Root || r2.Common != r.Common {
		t.Errorf("Open(linked) = %+v, %v; want %+v", r2, err, r)
	}
	if _, err := Open(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("Open(not a repository) = %v", err)
	}
}

// A rebase that conflicts is undone and names the files; a clean one
// fast-forwards main, with the main worktree's files following when main
// is checked out there, and without touching it when it is not.
func TestRebaseAndAdvance(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	one, _ := r.Add(ctx, "I1", "main")
	two, _ := r.Add(ctx, "I2", "main")
	write(t, filepath.Join(one.Dir, "a.txt"), "one\n")
	write(t, filepath.Join(one.Dir, "b.txt"), "b\n")
	write(t, filepath.Join(two.Dir, "a.txt"), "two\n")
	write(t, filepath.Join(two.Dir, "c.txt"), "c\n")
	c1, err := one.Commit(ctx, "one")
	if err != nil || c1 == "" {
		t.Fatal(c1, err)
	}
	if c, err := one.Commit(ctx, "nothing"); c != "" || err != nil {
		t.Errorf("Commit with nothing = %q, %v", c, err)
	}
	if _, err := two.Commit(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	old, _ := r.Head(ctx, "main")
	if err := one.RebaseOnto(ctx, "main", ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Advance(ctx, "main", old, c1); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Root, "b.txt")); string(data) != "b\n" {
		t.Errorf("the checkout of main did not follow: b.txt = %q", data)
	}
	if err := r.Advance(ctx, "main", old, c1); !errors.Is(err, ErrMoved) {
		t.Errorf("Advance from a stale head = %v", err)
	}
	before, _ := r.Head(ctx, "orchestrate/I2")
	err = two.RebaseOnto(ctx, "main", "")
	var conflict *ConflictError
	if !errors.As(err, &conflict) || strings.Join(conflict.Files, ",") != "a.txt" {
		t.Fatalf("Rebase = %v", err)
	}
	if after, _ := r.Head(ctx, "orchestrate/I2"); after != before {
		t.Error("a conflicting rebase moved the branch")
	}
	if st := run(t, two.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("a conflicting rebase left %q", st)
	}

	// The person's checkout on another branch is not touched.
	run(t, r.Root, "checkout", "-q", "-b", "mine")
	write(t, filepath.Join(r.Root, "mine.txt"), "mine\n")
	three, _ := r.Add(ctx, "I3", "main")
	write(t, filepath.Join(three.Dir, "d.txt"), "d\n")
	c3, _ := three.Commit(ctx, "three")
	head, _ := r.Head(ctx, "main")
	if err := r.Advance(ctx, "main", head, c3); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Head(ctx, "main"); got != c3 {
		t.Errorf("main = %s, want %s", got, c3)
	}
	if _, err := os.Stat(filepath.Join(r.Root, "d.txt")); err == nil {
		t.Error("the person's checkout of another branch got the merge's files")
	}
	if cur, _ := r.CurrentBranch(ctx); cur != "mine" {
		t.Errorf("the person's checkout is on %s", cur)
	}
}

// Leftovers: a clean merged worktree loses nothing; uncommitted changes
// and unmerged commits are kept; a worktree deleted by hand is pruned.
func TestLeftoversAndRemove(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	clean, _ := r.Add(ctx, "CLEAN", "main")
	dirty, _ := r.Add(ctx, "DIRTY", "main")
	ahead, _ := r.Add(ctx, "AHEAD", "main")
	gone, _ := r.Add(ctx, "GONE", "main")
	write(t, filepath.Join(dirty.Dir, "x.txt"), "x\n")
	write(t, filepath.Join(ahead.Dir, "y.txt"), "y\n")
	ahead.Commit(ctx, "ahead")
	os.RemoveAll(gone.Dir)
	left, err := r.Leftovers(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range left {
		got[l.Issue] = l.Unmerged
	}
	want := map[string]string{"AHEAD": "1 commit(s) not merged into main", "CLEAN": "", "DIRTY": "uncommitted changes", "GONE": ""}
	if len(got) != len(want) {
		t.Errorf("Leftovers = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Leftovers[%s] = %q, want %q", k, got[k], v)
		}
	}

	// Remove takes the worktree, its branch, its temporary directory and
	// every process working in it.
	sleeper := exec.Command("sleep", "60")
	sleeper.Dir = clean.Dir
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	if err := r.Remove(ctx, "CLEAN", false); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		sleeper.Process.Kill()
		t.Error("a process working in the worktree survived its removal")
	}
	for _, p := range []string{clean.Dir, r.TempDir("CLEAN")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := r.Head(ctx, "refs/heads/orchestrate/CLEAN"); err == nil {
		t.Error("the branch is still there")
	}
	if err := r.Remove(ctx, "GONE", false); err != nil {
		t.Errorf("removing a worktree deleted by hand: %v", err)
	}
}

// Add takes up the work a killed run left: its worktree as it is, or its
// branch alone in a new worktree.
func TestAddTakesUpLeftWork(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, _ := r.Add(ctx, "I", "main")
	write(t, filepath.Join(tree.Dir, "w.txt"), "work\n")
	write(t, filepath.Join(tree.Dir, "a.txt"), "a\none line more\n") // a tracked file's one uncommitted line
	again, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(again.Dir, "w.txt")); string(data) != "work\n" {
		t.Errorf("the worktree left was not taken up: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(again.Dir, "a.txt")); string(data) != "a\none line more\n" {
		t.Errorf("the uncommitted line of the worktree left was lost: a.txt = %q", data)
	}
	c, _ := again.Commit(ctx, "work")
	os.RemoveAll(tree.Dir) // deleted by hand: the branch holds the work
	third, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	if head, _ := r.Head(ctx, "refs/heads/"+third.Branch); head != c {
		t.Errorf("the branch left was not taken up: at %s, want %s", head, c)
	}
	if data, _ := os.ReadFile(filepath.Join(third.Dir, "w.txt")); string(data) != "work\n" {
		t.Errorf("the new worktree lacks the branch's work: %q", data)
	}
}

// Checkouts names the main worktree and every linked one, from either.
func TestCheckouts(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tr, _ := r.Add(ctx, "I", "main")
	for _, from := range []string{r.Root, tr.Dir} {
		got := Checkouts(from)
		if len(got) != 2 || got[0] != r.Root || got[1] != tr.Dir {
			t.Errorf("Checkouts(%s) = %v, want [%s %s]", from, got, r.Root, tr.Dir)
		}
	}
	if got := Checkouts(t.TempDir()); got != nil {
		t.Errorf("Checkouts(not a repository) = %v", got)
	}
}

// A worktree a killed git command left locked, or in the middle of a
// rebase, is taken up clean.
func TestAddRecoversKilledGit(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, _ := r.Add(ctx, "I", "main")
	write(t, filepath.Join(tree.Dir, "a.txt"), "mine\n")
	tree.Commit(ctx, "mine")
	write(t, filepath.Join(r.Root, "a.txt"), "theirs\n")
	run(t, r.Root, "commit", "-qam", "theirs")
	// A rebase that stops on its conflict, as a kill would leave it, and
	// the index lock of a git add killed midway.
	exec.Command("git", "-C", tree.Dir, "-c", "user.name=t", "-c", "user.email=t@t", "rebase", "main").Run()
	gitdir := strings.TrimSpace(strings.TrimPrefix(run(t, tree.Dir, "rev-parse", "--git-dir"), "gitdir:"))
	if _, err := os.Stat(filepath.Join(gitdir, "rebase-merge")); err != nil {
		t.Fatalf("no rebase in progress to recover from: %v", err)
	}
	write(t, filepath.Join(gitdir, "index.lock"), "")
	write(t, filepath.Join(gitdir, "HEAD.lock"), "")
	write(t, filepath.Join(r.Common, "refs", "heads", "orchestrate", "I.lock"), "")
	again, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(again.Dir, "b.txt"), "more\n")
	if c, err := again.Commit(ctx, "more"); err != nil || c == "" {
		t.Errorf("commit in the taken-up worktree: %q, %v", c, err)
	}
}

// rebaseKilledAtItsStart makes the worktree of an issue, with a commit of
// its own, behind a commit on main, and leaves in it what a git rebase
// killed at its start leaves: its state directory, without what git
// rebase --abort reads (its head-name), and, detached, HEAD on main.
func rebaseKilledAtItsStart(t *testing.T, detached bool) (*Repo, *Tree) {
	t.Helper()
	r := repo(t)
	ctx := context.Background()
	tree, _ := r.Add(ctx, "I", "main")
	write(t, filepath.Join(tree.Dir, "a.txt"), "mine\n")
	tree.Commit(ctx, "mine")
	write(t, filepath.Join(r.Root, "b.txt"), "theirs\n")
	run(t, r.Root, "add", "b.txt")
	run(t, r.Root, "commit", "-qm", "theirs")
	if detached {
		run(t, tree.Dir, "checkout", "-q", "--detach", "main")
	}
	gitdir := strings.TrimSpace(strings.TrimPrefix(run(t, tree.Dir, "rev-parse", "--git-dir"), "gitdir:"))
	if err := os.Mkdir(filepath.Join(gitdir, "rebase-merge"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("git", "-C", tree.Dir, "rebase", "--abort").Run(); err == nil {
		t.Fatal("git rebase --abort ended the rebase: nothing to recover from")
	}
	return r, tree
}

// A rebase killed at its start leaves its state directory without what
// git rebase --abort reads (its head-name), and HEAD detached: taken up,
// the worktree is back on its branch with its work, and rebases again.
func TestAddRecoversARebaseKilledAtItsStart(t *testing.T) {
	r, _ := rebaseKilledAtItsStart(t, true)
	ctx := context.Background()
	again, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(run(t, again.Dir, "symbolic-ref", "HEAD")); head != "refs/heads/"+again.Branch {
		t.Errorf("HEAD is %q; want its branch", head)
	}
	if data, err := os.ReadFile(filepath.Join(again.Dir, "a.txt")); err != nil || string(data) != "mine\n" {
		t.Errorf("a.txt = %q, %v; want its work", data, err)
	}
	if err := again.RebaseOnto(ctx, "main", ""); err != nil {
		t.Fatalf("rebase of the taken-up worktree: %v", err)
	}
	if log := run(t, again.Dir, "log", "--format=%s", "-2"); log != "mine\ntheirs" {
		t.Errorf("log after the rebase:\n%s", log)
	}
}

// A rebase state git cannot abort, met by a rebase of the train's (an
// agent killed the rebase before at its start): the rebase fails, and the
// state is dropped, so that the next rebase goes through.
func TestRebaseOntoDropsARebaseGitCannotAbort(t *testing.T) {
	_, tree := rebaseKilledAtItsStart(t, false)
	ctx := context.Background()
	if err := tree.RebaseOnto(ctx, "main", ""); err == nil {
		t.Fatal("the rebase went through a rebase under way")
	}
	if err := tree.RebaseOnto(ctx, "main", ""); err != nil {
		t.Fatalf("the next rebase: %v", err)
	}
	if log := run(t, tree.Dir, "log", "--format=%s", "-2"); log != "mine\ntheirs" {
		t.Errorf("log after the rebase:\n%s", log)
	}
}

// Reapply puts a branch's work onto main, not committed, with the conflict
// marked in its file and nothing staged; with an upstream, only the work
// after it; onto nothing, it changes nothing.
func TestReapply(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	one, _ := r.Add(ctx, "I1", "main")
	write(t, filepath.Join(one.Dir, "a.txt"), "one\n")
	write(t, filepath.Join(one.Dir, "b.txt"), "b\n")
	c1, _ := one.Commit(ctx, "one")
	two, _ := r.Add(ctx, "I2", c1) // put onto I1's work, not merged
	write(t, filepath.Join(two.Dir, "c.txt"), "c\n")
	c2, _ := two.Commit(ctx, "two")
	write(t, filepath.Join(r.Root, "a.txt"), "main\n")
	run(t, r.Root, "commit", "-qam", "main")
	main, _ := r.Head(ctx, "main")

	files, err := one.Reapply(ctx, "main", "", "the work on I1")
	if err != nil || strings.Join(files, ",") != "a.txt" {
		t.Fatalf("Reapply = %v, %v; want a.txt", files, err)
	}
	if head, _ := r.Head(ctx, "orchestrate/I1"); head != main {
		t.Errorf("the branch is at %s, want main's %s", head, main)
	}
	if st := run(t, one.Dir, "status", "--porcelain"); st != "M a.txt\n?? b.txt" {
		t.Errorf("status %q; want the work, not staged", st)
	}
	data, _ := os.ReadFile(filepath.Join(one.Dir, "a.txt"))
	if !strings.Contains(string(data), "<<<<<<< HEAD\nmain\n=======\none\n>>>>>>> ") || !strings.Contains(string(data), "the work on I1") {
		t.Errorf("a.txt = %q", data)
	}
	if got := one.Marked([]string{"a.txt", "b.txt", "gone.txt"}); strings.Join(got, ",") != "a.txt" {
		t.Errorf("Marked = %v", got)
	}
	write(t, filepath.Join(one.Dir, "a.txt"), "main\none\n")
	if got := one.Marked([]string{"a.txt"}); got != nil {
		t.Errorf("Marked after the resolution = %v", got)
	}

	files, err = two.Reapply(ctx, "main", c1, "the work on I2")
	if err != nil || len(files) != 0 {
		t.Fatalf("Reapply after upstream = %v, %v; want no conflict", files, err)
	}
	if st := run(t, two.Dir, "status", "--porcelain"); st != "?? c.txt" {
		t.Errorf("status %q; want its own work only", st)
	}
	run(t, two.Dir, "reset", "-q", "--hard", c2)
	if _, err := two.Reapply(ctx, "no-such-branch", "", "x"); err == nil {
		t.Error("Reapply onto no branch: no error")
	}
	if head, _ := r.Head(ctx, "orchestrate/I2"); head != c2 {
		t.Error("a Reapply that failed moved the branch")
	}
}

// With the integration branch not checked out, the fast-forward is still a
// compare-and-swap: a branch moved meanwhile (another's commit) is left
// where it is, with ErrMoved; and a commit that does not descend from the
// branch is never put on it.
func TestAdvanceElsewhereIsCompareAndSwap(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	run(t, r.Root, "checkout", "-q", "-b", "mine")
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree.Dir, "w.txt"), "work\n")
	work, err := tree.Commit(ctx, "work")
	if err != nil {
		t.Fatal(err)
	}
	old, _ := r.Head(ctx, "refs/heads/main")
	moved := run(t, r.Root, "commit-tree", "-p", old, "-m", "meanwhile", old+"^{tree}")
	run(t, r.Root, "update-ref", "refs/heads/main", moved)
	if err := r.Advance(ctx, "main", old, work); !errors.Is(err, ErrMoved) {
		t.Errorf("Advance of a branch moved meanwhile = %v; want ErrMoved", err)
	}
	if err := r.Advance(ctx, "main", moved, work); err == nil || errors.Is(err, ErrMoved) {
		t.Errorf("Advance to a commit that is not a fast-forward = %v; want an error", err)
	}
	if head, _ := r.Head(ctx, "refs/heads/main"); head != moved {
		t.Errorf("main = %.12s; want the commit made meanwhile, %.12s", head, moved)
	}
}

// The worktree's temporary directory is beside it, not in it: what an
// agent's tools write there is not its work, and is never committed.
func TestTempDirBesideTheWorktree(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	tmp := r.TempDir("I")
	if rel, err := filepath.Rel(tree.Dir, tmp); err != nil || !strings.HasPrefix(rel, "..") || filepath.Dir(tmp) != r.Dir() {
		t.Errorf("TempDir = %s; want it beside the worktree %s", tmp, tree.Dir)
	}
	write(t, filepath.Join(tmp, "scratch"), "scratch\n")
	if c, err := tree.Commit(ctx, "nothing"); c != "" || err != nil {
		t.Errorf("a file in the temporary directory was committed: %q, %v", c, err)
	}
}

// With the integration branch checked out, its files follow a merge as
// git merge --ff-only makes them: a change of yours not committed is
// never overwritten; a merge that would is refused, and the branch stays.
func TestAdvanceKeepsYourChanges(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree.Dir, "b.txt"), "theirs\n")
	work, err := tree.Commit(ctx, "work")
	if err != nil {
		t.Fatal(err)
	}
	old, _ := r.Head(ctx, "refs/heads/main")
	write(t, filepath.Join(r.Root, "a.txt"), "a\nmine\n")
	if err := r.Advance(ctx, "main", old, work); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Root, "a.txt")); string(data) != "a\nmine\n" {
		t.Errorf("your change was overwritten by the merge: a.txt = %q", data)
	}

	again, err := r.Add(ctx, "J", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(again.Dir, "a.txt"), "a\ntheirs\n")
	next, err := again.Commit(ctx, "next")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Advance(ctx, "main", work, next); err == nil || errors.Is(err, ErrMoved) {
		t.Errorf("a merge over your change of the same file = %v; want it refused", err)
	}
	if data, _ := os.ReadFile(filepath.Join(r.Root, "a.txt")); string(data) != "a\nmine\n" {
		t.Errorf("your change was overwritten by the merge: a.txt = %q", data)
	}
	if head, _ := r.Head(ctx, "refs/heads/main"); head != work {
		t.Errorf("main = %.12s; want it left at %.12s", head, work)
	}
}

// A run killed between the making of an issue's temporary directory and
// its mark leaves it empty: the next Add takes it as its own, where it
// stopped every later run as someone's in the way. One that holds a file
// is still in the way.
func TestAddTakesAnEmptyTempDir(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	if err := os.MkdirAll(r.TempDir("I"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(ctx, "I", "main"); err != nil {
		t.Errorf("Add with the empty temporary directory a killed run left: %v", err)
	}
	if err := os.MkdirAll(r.TempDir("J"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(r.TempDir("J"), "mine.txt"), "mine\n")
	var in *InTheWayError
	if _, err := r.Add(ctx, "J", "main"); !errors.As(err, &in) {
		t.Errorf("Add with a person's directory in the way: %v; want an InTheWayError", err)
	}
}

// A run killed between the making of a worktree (git worktree add
// --no-checkout) and the writing of its files leaves it with no index and
// no files: the next Add writes them, where it took the worktree up as it
// was, and the work committed there deleted every file of the branch.
func TestAddChecksOutAWorktreeLeftEmpty(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	dir := filepath.Join(r.Dir(), "I")
	if err := os.MkdirAll(r.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, r.Root, "worktree", "add", "--quiet", "--no-checkout", "-b", Branch("I"), dir, "main")
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree.Dir, "b.txt"), "work\n")
	c, err := tree.Commit(ctx, "work")
	if err != nil || c == "" {
		t.Fatalf("Commit = %q, %v", c, err)
	}
	if got := run(t, r.Root, "diff", "--name-status", "main", c); got != "A\tb.txt" {
		t.Errorf("the work committed changes %q; want b.txt added alone", got)
	}
}

// A link an agent put in its worktree's place, left by a run killed
// before it saw it, goes at the next Add, never what it points to: it
// stopped every later run as someone's in the way.
func TestAddRemovesALinkLeftInTheWorktreesPlace(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(tree.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(r.Root, tree.Dir); err != nil {
		t.Fatal(err)
	}
	again, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatalf("Add with a link in the worktree's place: %v", err)
	}
	if fi, err := os.Lstat(again.Dir); err != nil || !fi.IsDir() {
		t.Errorf("the worktree is not a directory again: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(r.Root, "a.txt")); err != nil {
		t.Errorf("what the link pointed to: %v", err)
	}
}

// A git killed while it held the lock of an issue's branch (a crash, a
// kill of git itself) leaves the lock's file: the next Add and Remove of
// the issue take it away, where every later run stopped on "cannot lock
// ref". The caller holds the run lock: no git of orchestrate's holds it.
func TestAddAndRemoveTakeAKilledGitsBranchLock(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(tree.Dir); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.Common, "refs", "heads", "orchestrate", "I.lock")
	write(t, lock, "")
	if _, err := r.Add(ctx, "I", "main"); err != nil {
		t.Errorf("Add with the branch's lock a killed git left: %v", err)
	}
	write(t, lock, "")
	if err := r.Remove(ctx, "I", false); err != nil {
		t.Errorf("Remove with the branch's lock a killed git left: %v", err)
	}
	if out := run(t, r.Root, "branch", "--list", "orchestrate/*"); out != "" {
		t.Errorf("branches left: %s", out)
	}
}

// killingGit puts a git first on git's own exec path that kills the git
// that runs it as it runs "git symbolic-ref" (as git worktree add does,
// after it has locked the new worktree "initializing", before it unlocks
// it): a real git worktree add, killed where a kill of its run would have
// it. The variable goes with the test.
func killingGit(t *testing.T) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "git"), "#!/bin/sh\ncase \"$1\" in symbolic-ref) kill -9 $PPID; exit 1;; esac\nexec '"+real+"' \"$@\"\n")
	if err := os.Chmod(filepath.Join(dir, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_EXEC_PATH", dir)
}

// A git worktree add killed midway leaves its worktree locked
// ("initializing"), a lock git prune keeps: the next Add and Remove of the
// issue take it away, where every later run stopped on "a missing but
// locked worktree" and the branch could not be deleted, "checked out"
// there (TestPruneKeepsOthersLocks: what is kept).
func TestAddAndRemoveTakeAKilledWorktreeAddsLock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		missing bool // its directory gone too, as a Remove or a person leaves it
	}{{"left", false}, {"missing", true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := repo(t)
			ctx := context.Background()
			killingGit(t)
			if _, err := r.Add(ctx, "I", "main"); err == nil {
				t.Fatal("Add with git killed midway: no error")
			}
			os.Unsetenv("GIT_EXEC_PATH")
			locks, _ := filepath.Glob(filepath.Join(r.Common, "worktrees", "*", "locked"))
			if len(locks) != 1 {
				t.Fatalf("no worktree left locked by the killed git: %v", locks)
			}
			if tc.missing {
				if err := os.RemoveAll(filepath.Join(r.Dir(), "I")); err != nil {
					t.Fatal(err)
				}
			}
			tree, err := r.Add(ctx, "I", "main")
			if err != nil {
				t.Fatalf("Add after a killed git worktree add: %v", err)
			}
			if b, err := os.ReadFile(filepath.Join(tree.Dir, "a.txt")); err != nil || string(b) != "a\n" {
				t.Errorf("the worktree's a.txt: %q, %v", b, err)
			}
			write(t, filepath.Join(tree.Dir, "b.txt"), "more\n")
			if c, err := tree.Commit(ctx, "more"); err != nil || c == "" {
				t.Errorf("commit in the worktree: %q, %v", c, err)
			}
			// Killed again, then removed.
			if err := r.Remove(ctx, "I", false); err != nil {
				t.Fatal(err)
			}
			killingGit(t)
			if _, err := r.Add(ctx, "I", "main"); err == nil {
				t.Fatal("Add with git killed midway, again: no error")
			}
			os.Unsetenv("GIT_EXEC_PATH")
			if tc.missing {
				os.RemoveAll(filepath.Join(r.Dir(), "I"))
			}
			if err := r.Remove(ctx, "I", false); err != nil {
				t.Errorf("Remove after a killed git worktree add: %v", err)
			}
			if out := run(t, r.Root, "branch", "--list", "orchestrate/*"); out != "" {
				t.Errorf("branches left: %s", out)
			}
			if out := run(t, r.Root, "worktree", "list", "--porcelain"); strings.Count(out, "worktree ") != 1 {
				t.Errorf("worktrees left:\n%s", out)
			}
		})
	}
}

// What prune undoes is only a killed add's lock in orchestrate's own
// directory: a person's lock there, and a worktree of the person's
// elsewhere locked "initializing", are kept, whose directories are gone;
// so is a worktree of orchestrate's whose files were written.
func TestPruneKeepsOthersLocks(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	tree, err := r.Add(ctx, "I", "main")
	if err != nil {
		t.Fatal(err)
	}
	run(t, r.Root, "worktree", "lock", "--reason", "mine", tree.Dir)
	elsewhere := filepath.Join(t.TempDir(), "w")
	run(t, r.Root, "worktree", "add", "--quiet", "--lock", "--reason", addLock, elsewhere, "-b", "w")
	for _, dir := range []string{tree.Dir, elsewhere} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	// And a worktree of orchestrate's whose files were written, an agent's
	// perhaps, with "initializing" written in its lock by anyone: its
	// work stays.
	worked, err := r.Add(ctx, "J", "main")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(worked.Dir, "work.txt"), "mine\n")
	write(t, filepath.Join(worked.gitdir, "locked"), addLock)
	r.mu.Lock()
	r.prune(ctx)
	r.mu.Unlock()
	if out := run(t, r.Root, "worktree", "list", "--porcelain"); strings.Count(out, "\nlocked") != 3 {
		t.Errorf("want the three locked worktrees kept:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(worked.Dir, "work.txt")); err != nil {
		t.Errorf("the work in a worktree locked %q: %v", addLock, err)
	}
}

// Add prunes git's list of worktrees once, not again before the add when
// nothing was in the worktree's place; and again when something was (here
// a link), whose registration may be stale. Counted by a git first on
// PATH that notes each prune.
func TestAddPrunesAgainOnlyWhenItCleared(t *testing.T) {
	r := repo(t)
	ctx := context.Background()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "prunes")
	write(t, filepath.Join(bin, "git"), "#!/bin/sh\ncase \" $* \" in *\" worktree prune \"*) echo prune >> "+log+";; esac\nexec "+real+" \"$@\"\n")
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	prunes := func() int {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Count(string(data), "prune")
	}
	if _, err := r.Add(ctx, "FRESH", "main"); err != nil {
		t.Fatal(err)
	}
	if n := prunes(); n != 1 {
		t.Errorf("Add with nothing in the way pruned %d times; want 1", n)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(r.Dir(), "LINKED")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add(ctx, "LINKED", "main"); err != nil {
		t.Fatal(err)
	}
	if n := prunes(); n != 2 {
		t.Errorf("Add with a link in the worktree's place pruned %d times; want 2", n)
	}
}
