package fsx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// ErrLockTimeout is returned by Lock when the lock stayed taken for longer
// than the wait allowed.
var ErrLockTimeout = errors.New("gave up waiting for the lock")

// LockOptions says how Lock waits.
type LockOptions struct {
	// Timeout bounds the wait; 0 waits until ctx ends.
	Timeout time.Duration
	// NoticeAfter is how long Lock waits before it calls Waiting; 0 is one
	// second.
	NoticeAfter time.Duration
	// Waiting, if set, is told once who holds the lock ("pid 123
	// (orchestrate check)"), when the wait has lasted NoticeAfter.
	Waiting func(holder string)
}

// Lock takes the advisory lock file at path, waiting for it until ctx ends.
// The returned function releases it.
func Lock(ctx context.Context, path string) (func(), error) {
	return LockWith(ctx, path, LockOptions{})
}

// LockWith takes the advisory lock file at path as Lock does, waiting as
// opt says. The lock file must be a regular file (a symbolic link is not
// followed). Whoever holds it writes its PID and command line into it, so
// that a waiter can say who it waits for.
func LockWith(ctx context.Context, path string, opt LockOptions) (func(), error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return hold(f), nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	got, err := waitFlock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	notice := opt.NoticeAfter
	if notice <= 0 {
		notice = time.Second
	}
	noticed := time.NewTimer(notice)
	defer noticed.Stop()
	var timeout <-chan time.Time
	if opt.Timeout > 0 {
		t := time.NewTimer(opt.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case err := <-got:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("locking %s: %w", path, err)
			}
			return hold(f), nil
		case <-noticed.C:
			if opt.Waiting != nil {
				opt.Waiting(Holder(f))
			}
		case <-timeout:
			holder := Holder(f)
			f.Close() // the wait, when it ends, lets go at once (see waitFlock)
			return nil, fmt.Errorf("locking %s: %w after %s; it is held by %s", path, ErrLockTimeout, opt.Timeout, holder)
		case <-ctx.Done():
			holder := Holder(f)
			f.Close()
			return nil, fmt.Errorf("interrupted while waiting for %s, held by %s: %w", path, holder, ctx.Err())
		}
	}
}

// waitFlock waits in the kernel for the lock on f's open file, on a
// descriptor of its own, and sends the outcome. A waiter blocked in flock
// is given the lock as soon as it is released; a waiter that polls can
// lose it, again and again, to those that ask in between. The descriptor
// is closed as the wait ends: should the caller have given up and closed
// f meanwhile, that was the open file's last descriptor, and the lock
// just taken goes with it. (So a wait given up, while its process lives,
// may hold the lock for that instant, once its holder lets go.) The
// descriptor is closed on exec, as every other of this process's: a
// command started meanwhile (a gate, an agent, git) that inherited it would
// share the open file, and so the lock, which would outlive this process
// while the command runs.
func waitFlock(f *os.File) (<-chan error, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	got := make(chan error, 1)
	go func() {
		var err error
		for {
			if err = unix.Flock(fd, unix.LOCK_EX); err != unix.EINTR {
				break
			}
		}
		unix.Close(fd)
		got <- err
	}()
	return got, nil
}

// TryLock takes the lock at path if it is free, and returns ErrLocked if
// not. It leaves the lock file's content as it is: a look at whether
// someone holds it must not erase what a crashed holder left there.
func TryLock(path string) (func(), error) {
	f, err := tryFlock(path)
	if err != nil {
		return nil, err
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// TryLockFile is TryLock that returns the locked file itself, to be
// handed to a child process (exec.Cmd.ExtraFiles): the lock belongs to the
// open file, so it stays held while any process has it open, and goes
// when the last one closes it. The caller closes its own copy once the
// child has started; it must not unlock it, which would free the child's
// too.
func TryLockFile(path string) (*os.File, error) {
	return tryFlock(path)
}

// InheritedLock takes over the lock at path that a parent handed to this
// process as descriptor fd (see TryLockFile), and returns its release. It
// reports false, and touches nothing, when fd is not that lock file open
// and locked.
func InheritedLock(fd uintptr, path string) (func(), bool) {
	var got, want unix.Stat_t
	if unix.Fstat(int(fd), &got) != nil || unix.Stat(path, &want) != nil || got.Dev != want.Dev || got.Ino != want.Ino {
		return nil, false
	}
	// Locking again an open file this process's lock is on succeeds at
	// once; if the lock were not held, it takes it.
	if unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil, false
	}
	f := os.NewFile(fd, path)
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, true
}

// Held is a lock taken by TryLockHeld.
type Held struct {
	f *os.File
	// Previous is what the lock file held when it was taken: empty after a
	// clean release, the last holder's record (see Note) after a crash.
	Previous string
	mu       sync.Mutex // Note is called by every agent of a run
	rec      string
}

// Note adds a line to the holder's record in the lock file, for the next
// holder to find in Previous should this process die holding it.
func (h *Held) Note(line string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rec += strings.TrimRight(line, "\n") + "\n"
	if err := h.f.Truncate(0); err != nil {
		return err
	}
	_, err := h.f.WriteAt([]byte(h.rec), 0)
	return err
}

// Unlock releases the lock, leaving the lock file empty.
func (h *Held) Unlock() {
	h.f.Truncate(0)
	unix.Flock(int(h.f.Fd()), unix.LOCK_UN)
	h.f.Close()
}

// Abandon releases the lock and puts back what the last holder left
// (Previous), for the next holder to find: for a holder that takes the
// lock only to refuse to go on.
func (h *Held) Abandon() {
	if h.f.Truncate(0) == nil {
		h.f.WriteAt([]byte(h.Previous), 0)
	}
	unix.Flock(int(h.f.Fd()), unix.LOCK_UN)
	h.f.Close()
}

// TryLockHeld takes the lock at path as TryLock does, says what the last
// holder left, and records this process as the holder.
func TryLockHeld(path string) (*Held, error) {
	f, err := tryFlock(path)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	h := &Held{f: f, Previous: string(buf[:n])}
	h.Note(holderRecord())
	return h, nil
}

func openLock(path string) (*os.File, error) {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("locking: %w", err)
	}
	return f, nil
}

// hold writes who holds the lock into it, and returns its release.
func hold(f *os.File) func() {
	h := &Held{f: f}
	h.Note(holderRecord())
	return h.Unlock
}

// holderRecord is this process's line in a lock it holds: its PID and
// command line.
func holderRecord() string {
	cmd := strings.Join(os.Args, " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	return fmt.Sprintf("%d %s", os.Getpid(), strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, cmd))
}

// Holder says who holds the lock file f, as its holder wrote it: "pid 123
// (orchestrate check)", or "another process" when that is not known.
func Holder(f *os.File) string {
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	pid, cmd := ParseHolder(string(buf[:n]))
	if pid <= 0 {
		return "another process"
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return "another process"
	}
	if cmd == "" {
		return "pid " + strconv.Itoa(pid)
	}
	return fmt.Sprintf("pid %d (%s)", pid, cmd)
}

// ParseHolder reads the PID and command line a lock holder wrote.
func ParseHolder(s string) (pid int, cmd string) {
	line, _, _ := strings.Cut(s, "\n")
	p, c, _ := strings.Cut(line, " ")
	if p == "" || strings.Trim(p, "0123456789") != "" {
		return 0, ""
	}
	pid, err := strconv.Atoi(p)
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, strings.TrimSpace(c)
}

// tryFlock opens the lock file at path and takes its lock if it is free;
// ErrLocked if not.
func tryFlock(path string) (*os.File, error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
