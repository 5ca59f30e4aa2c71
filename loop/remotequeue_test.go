package loop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/orchestrate-dev/orchestrate/claim/remote"
	"github.com/orchestrate-dev/orchestrate/queue"
)

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
