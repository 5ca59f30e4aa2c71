package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Agents of one clone fetch the integration branch at once, each time
// after it moved on the remote: every fetch succeeds (none stops on
// "cannot lock ref …: is at … but expected …", the ref updated by the
// other first), and the clone's view is the remote's head.
func TestFetchesAtOnce(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 1)
	src := filepath.Join(t.TempDir(), "src")
	gitIn(t, "", "init", "-q", "-b", "main", src)
	gitIn(t, src, "remote", "add", "origin", bare)
	// Each agent fetches through a Remote of its own, half of them from
	// a directory below the clone's root: as another process's command
	// would, not waiting for this one's fetches.
	sub := filepath.Join(m[0].dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	const agents = 6
	rs := make([]*Remote, agents)
	for i := range rs {
		dir := m[0].dir
		if i%2 == 1 {
			dir = sub
		}
		r, err := New(dir, "origin")
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = r
	}
	for round := range 8 {
		gitIn(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", fmt.Sprint(round))
		gitIn(t, src, "push", "-q", "origin", "main")
		want := gitIn(t, src, "rev-parse", "main")
		var wg sync.WaitGroup
		for _, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				head, err := r.FetchBranch(ctx, "main")
				if err != nil {
					t.Errorf("round %d: %v", round, err)
				} else if head != want {
					t.Errorf("round %d: fetched %s, want %s", round, head, want)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}
