package loop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// sharedClones makes a bare remote whose main holds a workspace with an
// issue (its queue and history.csv committed, as a repository may hold
// them), and n clones of it: the machines, each a workspace and its
// remote origin.
func sharedClones(t *testing.T, n int) (bare string, ws []Workspace, rs []*remote.Remote) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, "", "init", "-q", "--bare", "-b", "main", bare)
	seed := t.TempDir()
	gitIn(t, seed, "init", "-q", "-b", "main")
	w := Workspace{Dir: filepath.Join(seed, DefaultDir)}
	os.MkdirAll(w.Dir, 0o755)
	os.WriteFile(w.Path(ConfigFile), []byte("gates: []\n"), 0o644)
	addIssue(t, w, ruleNow, "filed before the clones")
	gitIn(t, seed, "add", ".")
	gitIn(t, seed, "commit", "-qm", "the workspace")
	gitIn(t, seed, "push", "-q", bare, "main")
	for i := range n {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		gitIn(t, "", "clone", "-q", bare, dir)
		r, err := remote.New(dir, "origin")
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, Workspace{Dir: filepath.Join(dir, DefaultDir)})
		rs = append(rs, r)
	}
	return bare, ws, rs
}

func addIssue(t *testing.T, w Workspace, now time.Time, summary string) {
	t.Helper()
	if _, err := w.AddIssue(context.Background(), now, NewIssue{Sections: map[string]string{queue.SectionSummary: summary}}); err != nil {
		t.Fatal(err)
	}
}

func syncQueue(t *testing.T, w Workspace, r *remote.Remote) {
	t.Helper()
	if err := w.SyncQueue(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// A clone's first sync, its workspace named relative to the working
// directory (--dir's default), starts from the queue its HEAD holds.
func TestFirstSyncRelativeDir(t *testing.T) {
	_, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "machine 0")
	syncQueue(t, ws[0], rs[0])
	t.Chdir(ws[1].Root())
	w := Workspace{Dir: DefaultDir}
	addIssue(t, w, ruleNow.Add(2*time.Minute), "machine 1")
	if err := w.SyncQueue(context.Background(), rs[1]); err != nil {
		t.Fatalf("the first sync of a clone whose workspace is %s: %v", filepath.Join(".", DefaultDir), err)
	}
}

// syncClones makes a bare remote and two clones of a repository whose
// committed queue holds one issue: their workspaces and remotes.
func syncClones(t *testing.T) (a, c Workspace, ra, rc *remote.Remote, id string) {
	t.Helper()
	seed := agentsRepo(t, func(Workspace) string { return "agent:\n  command: 'true'\ngates:\n  - name: t\n    command: 'true'\n" }, "one")
	root := seed.Root()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte(DefaultDir+"/*\n!"+DefaultDir+"/"+QueueFile+"\n"), 0o644)
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "the queue")
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, "", "clone", "-q", "--bare", root, bare)
	var ws []Workspace
	var rs []*remote.Remote
	for _, name := range []string{"a", "c"} {
		dir := filepath.Join(t.TempDir(), name)
		gitIn(t, "", "clone", "-q", bare, dir)
		w := Workspace{Dir: filepath.Join(dir, DefaultDir)}
		r, err := remote.New(dir, "origin")
		if err != nil {
			t.Fatal(err)
		}
		ws, rs = append(ws, w), append(rs, r)
	}
	q, err := queue.Load(ws[0].Path(QueueFile))
	if err != nil || len(q.Issues) != 1 {
		t.Fatalf("the queue: %v, %v", q, err)
	}
	return ws[0], ws[1], rs[0], rs[1], q.Issues[0].ID
}

func setStatus(t *testing.T, w Workspace, id, status string) {
	t.Helper()
	if err := w.updateIssue(context.Background(), id, func(is *queue.Issue) error {
		is.Set(queue.FieldStatus, status)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestSyncKilledBeforeItsNote: a sync killed after it wrote the file and
// before it noted the sync leaves the file at the queue it pushed (or
// fetched), and its note at the one before; the next sync takes the file
// for what it is, the queue last seen on the remote, not for a change
// that undid what the others did since.
func TestSyncKilledBeforeItsNote(t *testing.T) {
	ctx := context.Background()
	a, c, ra, rc, id := syncClones(t)
	for _, s := range []struct {
		w Workspace
		r *remote.Remote
	}{{a, ra}, {c, rc}} {
		if err := s.w.SyncQueue(ctx, s.r); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(t, a, id, queue.StatusInProgress)
	if err := a.SyncQueue(ctx, ra); err != nil {
		t.Fatal(err)
	}
	// c's sync, killed after the file and before the note.
	seen, err := rc.FetchQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Path(QueueFile), seen.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	setStatus(t, a, id, queue.StatusResolved)
	if err := a.SyncQueue(ctx, ra); err != nil {
		t.Fatal(err)
	}
	if err := c.SyncQueue(ctx, rc); err != nil {
		t.Fatalf("the sync after the kill: %v", err)
	}
	got, _ := os.ReadFile(c.Path(QueueFile))
	want, _ := os.ReadFile(a.Path(QueueFile))
	if !bytes.Equal(got, want) {
		t.Errorf("after the kill, c's queue\n%s\nwant a's\n%s", got, want)
	}
}

// A sync whose push is lost to another machine's (the queue's ref moved
// between the fetch and the push) merges again, on the new version, and
// pushes that: the sync goes through, and both machines' issues are on
// the remote.
func TestSyncLostMergesAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "machine 0")
	syncQueue(t, ws[0], rs[0])
	// Another machine's push of the queue, made while this one's is on
	// its way: a commit on the one this one's was made from.
	hook(t, bare, `mark="$GIT_DIR/lost-once"
while read old new ref; do
	if [ "$ref" = `+remote.QueueRef+` ] && [ ! -e "$mark" ]; then
		touch "$mark"
		git update-ref "$ref" "$(git commit-tree "$old^{tree}" -p "$old" -m 'another machine')"
	fi
done
`)
	addIssue(t, ws[1], ruleNow.Add(2*time.Minute), "machine 1")
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatalf("a sync whose first push was lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bare, "lost-once")); err != nil {
		t.Fatalf("the push was not lost: %v", err)
	}
	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)
	for _, s := range []string{"machine 0", "machine 1"} {
		if !strings.Contains(shared, s) {
			t.Errorf("the shared queue has no issue of %s:\n%s", s, shared)
		}
	}
	if log := gitIn(t, bare, "log", "--format=%s", remote.QueueRef); !strings.Contains(log, "another machine") {
		t.Errorf("git log of the shared queue does not show the other machine's push, on which this one was made:\n%s", log)
	}
}

// A person's edit of the queue, saved while a sync pushes, is kept: the
// file the sync writes is the merge of the edit with what it pushed.
func TestSyncKeepsAnEditMadeMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "machine 0")
	syncQueue(t, ws[0], rs[0])
	addIssue(t, ws[1], ruleNow.Add(2*time.Minute), "machine 1")
	// The edit: a line added to the first issue's summary, as the push
	// reaches the remote.
	path := ws[1].Path(QueueFile)
	hook(t, bare, `while read old new ref; do
	if [ "$ref" = `+remote.QueueRef+` ]; then
		sed -i 's/^filed before the clones$/filed before the clones, edited by hand/' '`+path+`'
	fi
done
`)
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, s := range []string{"edited by hand", "machine 0", "machine 1"} {
		if !strings.Contains(string(got), s) {
			t.Errorf("after the sync, the queue has no %q:\n%s", s, got)
		}
	}
}

// Each sync merges from the last one (refs/orchestrate/synced/…): a row
// one machine changed, synced to the other, and changed there again is
// the other's change alone, not a conflict of two changes of one row.
func TestSyncMergesFromTheLastSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	id := "ISSUE-20241213-001"
	setPriority := func(w Workspace, p string) {
		if err := w.updateIssue(ctx, id, func(is *queue.Issue) error { is.Set(queue.FieldPriority, p); return nil }, nil); err != nil {
			t.Fatal(err)
		}
	}
	setPriority(ws[0], "low")
	syncQueue(t, ws[0], rs[0])
	syncQueue(t, ws[1], rs[1])
	setPriority(ws[1], "critical")
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatalf("the sync of a row changed again: %v", err)
	}
	syncQueue(t, ws[0], rs[0])
	q, err := queue.Load(ws[0].Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := q.Issue(id).Get(queue.FieldPriority); p != "critical" {
		t.Errorf("machine 0's priority after the syncs: %q; want critical", p)
	}
}

// TestRetryOnAnotherMachine: the launches one machine counted of an
// issue apart from the queue (LaunchesFile) are set back when another
// machine's `issue retry` of it reaches it at a sync, and only then.
func TestRetryOnAnotherMachine(t *testing.T) {
	ctx := context.Background()
	a, c, ra, rc, id := syncClones(t)
	spent := func(w Workspace, n int) {
		t.Helper()
		err := w.withLock(ctx, func() error {
			if err := w.updateQueue(func(q *queue.Queue) error {
				q.Issue(id).SetInt(queue.FieldLaunchCount, n)
				return nil
			}); err != nil {
				return err
			}
			return w.writeLaunches(map[string]counted{id: {launches: n}}, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	counted := func(w Workspace) int {
		t.Helper()
		cs, err := w.countedLaunches()
		if err != nil {
			t.Fatal(err)
		}
		return cs[id].launches
	}
	spent(a, 3)
	syncQueue(t, a, ra)
	syncQueue(t, c, rc)
	syncQueue(t, a, ra)
	if got := counted(a); got != 3 {
		t.Fatalf("a's launches of %s after syncs with no retry: %d; want 3", id, got)
	}
	if err := c.Retry(ctx, ruleNow, id); err != nil {
		t.Fatal(err)
	}
	syncQueue(t, c, rc)
	syncQueue(t, a, ra)
	if got := counted(a); got != 0 {
		t.Errorf("a's launches of %s after c's retry reached it: %d; want 0", id, got)
	}
}

// TestSyncSharesNoCountSetBack: a count set back in the queue here (by an
// agent, or by a save of what was read before a launch) below what this
// machine counted (LaunchesFile) is set up again by the sync, here and on
// the remote: the machine that takes the issue over counts from it.
func TestSyncSharesNoCountSetBack(t *testing.T) {
	ctx := context.Background()
	a, c, ra, rc, id := syncClones(t)
	syncQueue(t, a, ra)
	if err := a.withLock(ctx, func() error {
		return a.writeLaunches(map[string]counted{id: {launches: 3, retries: 2}}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	// The queue here says 0 of each, as an agent's sed would leave it.
	syncQueue(t, a, ra)
	syncQueue(t, c, rc)
	for name, w := range map[string]Workspace{"here": a, "on the machine that takes it over": c} {
		q, err := queue.Load(w.Path(QueueFile))
		if err != nil {
			t.Fatal(err)
		}
		is := q.Issue(id)
		if l, n := is.Int(queue.FieldLaunchCount, 0), is.Int(queue.FieldRetryCount, 0); l != 3 || n != 2 {
			t.Errorf("%s: Launch-Count %d, Retry-Count %d after the sync; want 3 and 2", name, l, n)
		}
	}
}

// TestSyncLearnsCounts: the counts a sync brings from another machine are
// kept apart from the queue here too (LaunchesFile): a save of what was
// read before the sync, which sets them back in this machine's file,
// neither gives this machine's runs a launch past them nor reaches the
// remote.
func TestSyncLearnsCounts(t *testing.T) {
	ctx := context.Background()
	a, c, ra, rc, id := syncClones(t)
	syncQueue(t, c, rc)
	before, err := os.ReadFile(c.Path(QueueFile)) // what the person's editor read
	if err != nil {
		t.Fatal(err)
	}
	if err := a.withLock(ctx, func() error {
		if err := a.updateQueue(func(q *queue.Queue) error {
			q.Issue(id).SetInt(queue.FieldLaunchCount, 2)
			return nil
		}); err != nil {
			return err
		}
		return a.writeLaunches(map[string]counted{id: {launches: 2}}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	syncQueue(t, a, ra)
	syncQueue(t, c, rc)
	if err := os.WriteFile(c.Path(QueueFile), before, 0o644); err != nil { // the editor saves
		t.Fatal(err)
	}
	cs, err := c.countedLaunches()
	if err != nil {
		t.Fatal(err)
	}
	if got := cs[id].launches; got != 2 {
		t.Errorf("c's launches of %s learnt at its sync: %d; want 2", id, got)
	}
	syncQueue(t, c, rc)
	syncQueue(t, a, ra)
	q, err := queue.Load(a.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Issue(id).Int(queue.FieldLaunchCount, 0); got != 2 {
		t.Errorf("Launch-Count of %s on a after c's save of what it read before: %d; want 2", id, got)
	}
}
