package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	push := pusher(t, bare)
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
		want := push(fmt.Sprint(round))
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

// pusher makes a repository whose main is pushed to the remote bare: each
// call commits msg (an empty commit) there, pushes it, and returns it.
func pusher(t *testing.T, bare string) func(msg string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	gitIn(t, "", "init", "-q", "-b", "main", src)
	gitIn(t, src, "remote", "add", "origin", bare)
	return func(msg string) string {
		gitIn(t, src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", msg)
		gitIn(t, src, "push", "-q", "origin", "main")
		return gitIn(t, src, "rev-parse", "main")
	}
}

// A fetch that fails because another process's fetch of the same refs
// came first ("cannot lock ref …: is at … but expected …") is made again,
// and gives the remote's head. The race is forced, not waited for: a git
// first on PATH makes its first fetch the other process's (the real
// fetch), then fails as the second one's does.
func TestFetchMadeAgainWhenAnotherMovedItsRefs(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 1)
	push := pusher(t, bare)
	was := push("first")
	if _, err := m[0].FetchBranch(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	want := push("second")
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, raced := t.TempDir(), filepath.Join(t.TempDir(), "raced")
	wrapper := "#!/bin/sh\n" +
		`case " $* " in *" fetch "*) if [ ! -e ` + raced + ` ]; then touch ` + raced + `; ` + real + ` "$@" || exit 1; ` +
		`echo "error: cannot lock ref 'refs/remotes/origin/main': is at ` + want + ` but expected ` + was + `" >&2; exit 1; fi;; esac` + "\n" +
		"exec " + real + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	head, err := m[0].FetchBranch(ctx, "main")
	if err != nil {
		t.Fatalf("FetchBranch after another's fetch moved its ref: %v; want it made again", err)
	}
	if head != want {
		t.Errorf("fetched %s, want %s", head, want)
	}
	if _, err := os.Stat(raced); err != nil {
		t.Fatal("the race was not forced: no fetch went through the git on PATH")
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
		{"a worktree made and removed again", func() {
			gitIn(t, r.dir, "worktree", "add", "-q", "--detach", wt)
			gitIn(t, r.dir, "worktree", "remove", wt)
		}, true},
		{"nothing at the end", func() {}, false},
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
