package fsx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// outside makes a file outside dir that a link in dir points at, and
// returns the link's path and a check that the file was not touched.
func outside(t *testing.T, dir, name string) (link string, untouched func()) {
	t.Helper()
	target := filepath.Join(t.TempDir(), ".bashrc")
	if err := os.WriteFile(target, []byte("# rc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(dir, name)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link, func() {
		t.Helper()
		if b, _ := os.ReadFile(target); string(b) != "# rc\n" {
			t.Errorf("the file behind %s was changed: %q", name, b)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the link: %v", name, err)
		}
	}
}

func TestWritersRefuseSymlinks(t *testing.T) {
	dir := t.TempDir()
	for name, write := range map[string]func(string) error{
		"WriteFile": func(p string) error { return WriteFile(p, []byte("x;echo PWNED;#\n"), 0o644) },
		"Transform": func(p string) error { return Transform(p, appendLine("x;echo PWNED;#")) },
		"OpenFile": func(p string) error {
			f, err := OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err == nil {
				f.Close()
			}
			return err
		},
		"Lock": func(p string) error {
			unlock, err := Lock(context.Background(), p)
			if err == nil {
				unlock()
			}
			return err
		},
		"TryLock": func(p string) error {
			unlock, err := TryLock(p)
			if err == nil {
				unlock()
			}
			return err
		},
		"ReadFile": func(p string) error { _, _, err := ReadFile(p); return err },
	} {
		t.Run(name, func(t *testing.T) {
			link, untouched := outside(t, dir, name)
			err := write(link)
			var nr *NotRegularError
			if !errors.As(err, &nr) || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a symbolic link") {
				t.Errorf("%s through a symbolic link: %v; want a NotRegularError", name, err)
			}
			untouched()
		})
	}
}

func TestDanglingSymlinkIsNotCreatedThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "created")
	link := filepath.Join(dir, "f")
	os.Symlink(target, link)
	if err := Transform(link, appendLine("x")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Transform through a dangling link: %v", err)
	}
	if f, err := OpenFile(link, os.O_WRONLY|os.O_CREATE, 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenFile(O_CREATE) through a dangling link: %v", err)
		f.Close()
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was created")
	}
}

// TestFIFOIsRefusedAtOnce: a named pipe where a file should be would block
// a reader for ever.
func TestFIFOIsRefusedAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "issue_queue.md")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := ReadFile(path); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe") {
			t.Errorf("ReadFile(FIFO) = %v; want a NotRegularError naming a named pipe", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile(FIFO) blocked")
	}
}

func TestMkdirBeneath(t *testing.T) {
	root := t.TempDir()
	got, err := MkdirBeneath(root, filepath.Join("runs", "r1"))
	if err != nil || got != filepath.Join(root, "runs", "r1") {
		t.Fatalf("MkdirBeneath = %q, %v", got, err)
	}
	if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
		t.Fatalf("not made: %v", err)
	}
	// Again: already there.
	if _, err := MkdirBeneath(root, filepath.Join("runs", "r1")); err != nil {
		t.Errorf("MkdirBeneath of an existing directory: %v", err)
	}
	// A component that is a link is refused, whatever it points at.
	elsewhere := t.TempDir()
	os.Symlink(elsewhere, filepath.Join(root, "runs", "r2"))
	if _, err := MkdirBeneath(root, filepath.Join("runs", "r2", "deeper")); !errors.Is(err, ErrNotRegular) {
		t.Errorf("MkdirBeneath through a link: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("made %v behind the link", entries)
	}
	for _, rel := range []string{"..", "../x", "/etc"} {
		if _, err := MkdirBeneath(root, rel); err == nil {
			t.Errorf("MkdirBeneath(%q) made it", rel)
		}
	}
}

func TestRemoveStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".issue_queue.md.tmp123")
	other := filepath.Join(dir, ".other.md.tmp456") // not a kind asked for
	mine := filepath.Join(dir, "issue_queue.md.tmp")
	for _, p := range []string{stale, other, mine} {
		os.WriteFile(p, nil, 0o644)
	}
	// One being written: its writer holds its lock.
	live, release, err := writeTemp(filepath.Join(dir, "issue_queue.md"), [][]byte{[]byte("x")}, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveStaleTemps(dir, "issue_queue.md", "session_state.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Error("the stale temporary file is still there")
	}
	for _, p := range []string{other, mine, live} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
	release()
	if err := RemoveStaleTemps(dir, "issue_queue.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); !errors.Is(err, os.ErrNotExist) {
		t.Error("a temporary file whose writer let go was kept")
	}
}

func TestLockSaysWhoHoldsItAndGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	_, err = LockWith(context.Background(), path, LockOptions{
		Timeout: 300 * time.Millisecond, NoticeAfter: 50 * time.Millisecond,
		Waiting: func(h string) { told = append(told, h) },
	})
	want := "pid " + strconv.Itoa(os.Getpid())
	if !errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), want) {
		t.Errorf("LockWith on a held lock = %v; want ErrLockTimeout naming %q", err, want)
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], want+" (") {
		t.Errorf("Waiting was told %q; want once, %q and the command", told, want)
	}
	unlock()
	// Released: taken at once, and the record of the last holder is gone.
	unlock, err = LockWith(context.Background(), path, LockOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Errorf("lock file after release = %q; want empty", b)
	}
}

func TestHeldKeepsNotesForTheNextHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".run.lock")
	h, err := TryLockHeld(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLock on a held lock: %v", err)
	}
	h.Note("group 42 run-1")
	// A crash leaves the record: simulate it by reading without unlocking.
	b, _ := os.ReadFile(path)
	if pid, _ := ParseHolder(string(b)); pid != os.Getpid() || !strings.HasSuffix(string(b), "group 42 run-1\n") {
		t.Errorf("lock file = %q", b)
	}
	h.f.Close() // dies holding it: the record stays, the lock goes
	h2, err := TryLockHeld(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Unlock()
	if !strings.Contains(h2.Previous, "group 42 run-1") {
		t.Errorf("Previous = %q", h2.Previous)
	}
}

// FuzzParseHolder: whatever a lock file holds (a crash mid-write, a hand
// edit), reading its holder never fails, and a PID it reports is the
// first word of its first line.
func FuzzParseHolder(f *testing.F) {
	f.Add("123 orchestrate check\n")
	f.Add("123 orchestrate run\ngroup 456 20241213-100000-abcdef\n")
	f.Add("")
	f.Add("12x y")
	f.Add("-1 x\n")
	f.Add("0 00") // once read as PID 0 with a command
	f.Fuzz(func(t *testing.T, s string) {
		pid, cmd := ParseHolder(s)
		if pid == 0 {
			if cmd != "" {
				t.Errorf("ParseHolder(%q) = 0, %q", s, cmd)
			}
			return
		}
		line, _, _ := strings.Cut(s, "\n")
		if word, _, _ := strings.Cut(line, " "); strings.TrimLeft(word, "0") != strconv.Itoa(pid) {
			t.Errorf("ParseHolder(%q) = %d; not its first word %q", s, pid, word)
		}
	})
}

func TestRemoveAllStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, ".summary.md.tmp-123")
	kept := []string{filepath.Join(dir, "summary.md"), filepath.Join(dir, "a.tmp"), filepath.Join(dir, ".hidden")}
	for _, p := range append([]string{stale}, kept...) {
		os.WriteFile(p, nil, 0o644)
	}
	live, release, err := writeTemp(filepath.Join(dir, "gate-results.json"), [][]byte{[]byte("{}")}, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := RemoveAllStaleTemps(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Error("the stale temporary file is still there")
	}
	for _, p := range append(kept, live) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", filepath.Base(p))
		}
	}
}

// TestLockInterrupted: a wait for a held lock ended by the context says it
// was interrupted, and by whom the lock is held, not that locking failed.
func TestLockInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	fds := openFDs(t)
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = LockWith(ctx, path, LockOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "interrupted while waiting for "+path+", held by pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("LockWith(ended ctx) = %v", err)
	}
	// The wait given up keeps nothing: once the holder lets go, the next
	// one takes the lock, and the abandoned wait, still in the kernel, gets
	// it in turn, lets go at once and closes its descriptor.
	unlock()
	next, err := LockWith(context.Background(), path, LockOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("the lock after an abandoned wait: %v", err)
	}
	next()
	deadline := time.Now().Add(10 * time.Second)
	for openFDs(t) > fds {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open; %d before the lock: the abandoned wait kept its own", openFDs(t), fds)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here:", err)
	}
	return len(entries)
}

// TestLockWaitsInTheKernel: waiters blocked on a held lock each get it once
// it is let go, one at a time, and none is lost or left waiting.
func TestLockWaitsInTheKernel(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	const waiters = 8
	var inside atomic.Int32
	done := make(chan error, waiters)
	for range waiters {
		go func() {
			u, err := LockWith(context.Background(), path, LockOptions{Timeout: time.Minute})
			if err == nil {
				if inside.Add(1) != 1 {
					err = errors.New("two holders at once")
				}
				inside.Add(-1)
				u()
			}
			done <- err
		}()
	}
	unlock()
	for range waiters {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
