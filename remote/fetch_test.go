package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

// TestFetchStateFromFiles: the state a failed fetch is compared on (made
// again when it moved under the fetch), read from the repository's files,
// moves when a worktree is made or removed or its branch moves, and when
// a ref the fetch writes is made, moves or is packed; not when nothing
// happened or another ref moved. What an agent may leave among the refs
// (a FIFO, a link to /dev/zero, a big file) is read at once, and bounded.
// Where the refs are not files (reftable), it is git's.
func TestFetchStateFromFiles(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 1)
	r := m[0]
	commit := func(dir, msg string) string {
		gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", msg)
		return gitIn(t, dir, "rev-parse", "HEAD")
	}
	one, two := commit(r.dir, "one"), commit(r.dir, "two")
	wt := filepath.Join(t.TempDir(), "wt")
	const refspec = "+refs/heads/*:refs/remotes/origin/claims/*"
	common := commonDir(ctx, r.dir)
	if common == "" {
		t.Fatal("commonDir: git did not tell")
	}
	was := r.fetchState(ctx, refspec)
	for _, step := range []struct {
		what  string
		do    func()
		moves bool
	}{
		{"nothing", func() {}, false},
		{"a worktree made", func() { gitIn(t, r.dir, "worktree", "add", "-q", "-b", "w", wt) }, true},
		{"nothing again", func() {}, false},
		{"the worktree's branch moved", func() { commit(wt, "three") }, true},
		{"a ref the fetch writes made", func() { gitIn(t, r.dir, "update-ref", "refs/remotes/origin/claims/a", one) }, true},
		{"that ref moved", func() { gitIn(t, r.dir, "update-ref", "refs/remotes/origin/claims/a", two) }, true},
		{"another ref moved", func() { gitIn(t, r.dir, "update-ref", "refs/remotes/origin/other", one) }, false},
		{"the refs packed", func() { gitIn(t, r.dir, "pack-refs", "--all") }, true},
		{"the worktree removed", func() { gitIn(t, r.dir, "worktree", "remove", wt) }, true},
	} {
		step.do()
		now := r.fetchState(ctx, refspec)
		if files, ok := filesState(common, "refs/remotes/origin/claims"); !ok || files != now {
			t.Fatalf("after %s: the state is not the files' (read from them: %v)", step.what, ok)
		}
		if moved := now != was; moved != step.moves {
			t.Errorf("after %s: the state moved: %v; want %v", step.what, moved, step.moves)
		}
		was = now
	}
	// What an agent may leave among the refs: a FIFO, a link to an
	// endless file, a big file. The state is read at once, bounded, and
	// moves.
	claims := filepath.Join(common, "refs", "remotes", "origin", "claims")
	if err := os.MkdirAll(claims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(claims, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(claims, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(claims, "big"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- r.fetchState(ctx, refspec) }()
	select {
	case now := <-done:
		if now == was || len(now) > 16<<10 {
			t.Errorf("the state with a FIFO, a link and a big file among the refs: %d bytes, moved %v; want under 16 KiB, moved", len(now), now != was)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fetchState did not return with a FIFO and a link to /dev/zero among the refs")
	}
	// (git's own for-each-ref blocks on the FIFO until its timeout.)
	for _, f := range []string{"fifo", "zero", "big"} {
		os.Remove(filepath.Join(claims, f))
	}
	// A repository whose refs are not files: git's worktree list.
	if err := os.Mkdir(filepath.Join(common, "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, ok := filesState(common, "refs/remotes/origin/claims"); ok {
		t.Error("filesState read a repository with a reftable directory")
	}
	got := r.fetchState(ctx, refspec)
	if !strings.Contains(got, "worktree "+r.dir) {
		t.Errorf("fetchState with reftable = %q; want git worktree list's", got)
	}
	gitIn(t, r.dir, "update-ref", "refs/remotes/origin/claims/a", one)
	if r.fetchState(ctx, refspec) == got {
		t.Error("git's state did not move when a ref the fetch writes moved")
	}
}
