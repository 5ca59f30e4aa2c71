package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim/remote"
	"github.com/orchestrate-dev/orchestrate/queue"
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
