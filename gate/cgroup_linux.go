package gate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
	"golang.org/x/sys/unix"
)

// Where the machine allows it (cgroup v2, and a cgroup this process may
// make cgroups below: a delegated subtree, such as a systemd user
// session's), each command starts in a cgroup of its own, and once it is
// done whatever is left in that cgroup is killed at once: every process
// it started, whether or not the supervisor saw it, and also when the
// supervisor itself was killed.

var cgroups struct {
	once    sync.Once
	dir     string      // where commands' cgroups are made; "" for nowhere
	refused atomic.Bool // starting a command into one was refused: none
	seq     atomic.Int64

	// spare are cgroups whose commands ended with nothing left in them,
	// kept for the next commands (see cgroup.kill): a cgroup made and
	// removed for each command costs it 30 to 60 µs, near a tenth of
	// its shell.
	mu    sync.Mutex
	spare []*cgroup
}

// cgroupBase returns the cgroup v2 directory this process is in, when it
// may make cgroups there; "" when not. It is found once, from
// /proc/self/cgroup and /proc/self/mountinfo. Whether a process may be
// started into one is found at the first start (see refusedIntoCgroup).
func cgroupBase() string {
	cgroups.once.Do(func() {
		own, err1 := os.ReadFile("/proc/self/cgroup")
		mounts, err2 := os.ReadFile("/proc/self/mountinfo")
		if err1 != nil || err2 != nil {
			return
		}
		dir := findCgroup(string(mounts), string(own))
		if dir == "" || unix.Access(filepath.Join(dir, "cgroup.procs"), unix.W_OK) != nil {
			return
		}
		probe := filepath.Join(dir, "orchestrate-"+strconv.Itoa(os.Getpid())+"-probe")
		if os.Mkdir(probe, 0o755) != nil {
			return
		}
		if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err == nil {
			cgroups.dir = dir
			removeStaleCgroups(dir)
		}
		os.Remove(probe)
	})
	return cgroups.dir
}

// removeStaleCgroups removes the empty cgroups that processes now gone
// left in dir: an orchestrate killed with SIGKILL cannot remove its
// commands' cgroups (their processes are gone: the supervisor saw to it).
func removeStaleCgroups(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "orchestrate-")
		pid, err := strconv.Atoi(strings.Split(rest, "-")[0])
		if !ok || err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name())) // only if empty
	}
}

// refusedIntoCgroup reports whether err, starting a command into a
// cgroup, may be the machine refusing that (clone3 with CLONE_INTO_CGROUP,
// which a seccomp policy or an old kernel refuses, or a cgroup that may
// not take processes).
func refusedIntoCgroup(err error) bool {
	for _, e := range []syscall.Errno{syscall.ENOSYS, syscall.EPERM, syscall.EINVAL, syscall.EACCES, syscall.EBUSY, syscall.EOPNOTSUPP} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// refuseCgroups makes commands start in no cgroup from now on.
func refuseCgroups() { cgroups.refused.Store(true) }

// startsInCgroups reports whether a process that does nothing (true)
// starts in a new cgroup: asked only once a command could not, to tell
// the machine's refusal from the command's own failure.
func startsInCgroups() bool {
	cg := newCgroup()
	if cg == nil {
		return false
	}
	defer cg.remove()
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	cg.place(cmd)
	if startProcess(cmd) != nil {
		return false
	}
	return cmd.Wait() == nil
}

// findCgroup returns the directory of the cgroup v2 that cgroupFile
// (/proc/self/cgroup) names, in the cgroup2 file system mountinfo
// (/proc/self/mountinfo) shows mounted; "" when there is none.
func findCgroup(mountinfo, cgroupFile string) string {
	path := ""
	for _, line := range strings.Split(cgroupFile, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if !strings.HasPrefix(path, "/") {
		return ""
	}
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 || g[0] != "cgroup2" {
			continue
		}
		root, mount := unescapeMount(f[3]), unescapeMount(f[4])
		if rel, ok := strings.CutPrefix(path, root); ok && (root == "/" || rel == "" || rel[0] == '/') {
			return filepath.Join(mount, rel)
		}
	}
	return ""
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// cgroup is a command's cgroup.
type cgroup struct {
	path string
	dir  *os.File // open for clone3's CLONE_INTO_CGROUP
	// events is its cgroup.events, open for as long as the cgroup is
	// kept (see populated); nil where it could not be opened.
	events *os.File
	// empty: seen with no process in it, which is looked at only once its
	// command has started. Nothing enters it again: only this process
	// starts processes into it, its command's first, and what was in it
	// is gone. So neither a signal nor a wait for it reads it again.
	empty atomic.Bool
}

// newCgroup makes a cgroup for a command; nil where there are none.
func newCgroup() *cgroup {
	base := cgroupBase()
	if base == "" || cgroups.refused.Load() {
		return nil
	}
	cgroups.mu.Lock()
	if n := len(cgroups.spare); n > 0 {
		c := cgroups.spare[n-1]
		cgroups.spare = cgroups.spare[:n-1]
		cgroups.mu.Unlock()
		return c
	}
	cgroups.mu.Unlock()
	path := filepath.Join(base, supervise.CgroupPrefix(os.Getpid())+strconv.FormatInt(cgroups.seq.Add(1), 10))
	if err := os.Mkdir(path, 0o755); err != nil {
		return nil
	}
	dir, err := os.Open(path)
	if err != nil {
		os.Remove(path)
		return nil
	}
	events, _ := os.Open(filepath.Join(path, "cgroup.events"))
	return &cgroup{path: path, dir: dir, events: events}
}

// place makes cmd start in the cgroup.
func (c *cgroup) place(cmd *exec.Cmd) {
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(c.dir.Fd())
}

// signal sends sig to every process in the cgroup, none when it was seen
// empty.
func (c *cgroup) signal(sig syscall.Signal) {
	if c.populated() {
		supervise.SignalCgroup(c.path, sig)
	}
}

// drain waits, until deadline at most, for the cgroup to have no process
// left.
func (c *cgroup) drain(deadline time.Time) {
	for c.populated() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// cgroupEvents reads a cgroup's cgroup.events; the tests make it fail.
var cgroupEvents = (*cgroup).readEvents

// readEvents reads the cgroup's cgroup.events: whether a process is in
// it, and whether it could be read. The file is kept open with the cgroup
// and read again from its start, one system call where opening it would
// take four more, at each command's end.
func (c *cgroup) readEvents() (populated, read bool) {
	if c.events == nil {
		return supervise.CgroupEvents(c.path)
	}
	var buf [512]byte
	n, err := unix.Pread(int(c.events.Fd()), buf[:], 0)
	if err != nil {
		return false, false
	}
	return supervise.EventsPopulated(buf[:n]), true
}

// populated reports whether a process is in the cgroup, its command
// started: one read of cgroup.events, which costs less than one of
// cgroup.procs; none once it was seen empty. A cgroup that cannot be read
// (no file descriptor left, say) is not known to be empty: it is taken for
// populated, signalled, waited for, and killed at the end.
func (c *cgroup) populated() bool {
	if c.empty.Load() {
		return false
	}
	populated, read := cgroupEvents(c)
	if read && !populated {
		c.empty.Store(true)
	}
	return populated || !read
}

// kill kills every process left in the cgroup, then removes it; a cgroup
// seen empty (only a watched one is looked at) is kept instead for the
// next command, while the watchdog runs, which removes every cgroup of
// this process once it ends.
func (c *cgroup) kill() {
	if !c.empty.Load() {
		os.WriteFile(filepath.Join(c.path, "cgroup.kill"), []byte("1"), 0)
		c.remove()
		return
	}
	if !watchdogRuns() {
		c.remove()
		return
	}
	// Empty, and nothing enters it again but this process's next command.
	c.empty.Store(false)
	cgroups.mu.Lock()
	cgroups.spare = append(cgroups.spare, c)
	cgroups.mu.Unlock()
}

// remove removes the cgroup once it is empty.
func (c *cgroup) remove() {
	c.dir.Close()
	if c.events != nil {
		c.events.Close()
	}
	supervise.RemoveCgroup(c.path)
}

// A command in a cgroup runs without a supervisor of its own (sh is
// orchestrate's child, the leader of its process group) when this
// process's watchdog runs (see supervise.WatchName): the cgroup holds
// whatever the command starts, and the watchdog stops it if orchestrate
// dies. One Go program started per orchestrate process, not one per
// command.
var watchdog struct {
	once sync.Once
	pipe *os.File    // the write end, held until this process ends
	gone atomic.Bool // the watchdog has exited: commands go back to supervisors
}

// watched reports whether the command of the cgroup c runs without a
// supervisor of its own: c is not nil and the watchdog runs, started here
// the first time, with the grace between its SIGTERM and its kill.
func (c *cgroup) watched(grace time.Duration) bool {
	if c == nil || SupervisorProblem() != "" {
		return false
	}
	watchdog.once.Do(func() { startWatchdog(grace) })
	return watchdogRuns()
}

// watchdogRuns reports whether this process's watchdog, once started (see
// watched), still runs.
func watchdogRuns() bool {
	return watchdog.pipe != nil && !watchdog.gone.Load()
}

// startWatchdog starts this process's watchdog; watchdog.pipe stays nil
// when it cannot.
func startWatchdog(grace time.Duration) {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return
	}
	defer null.Close()
	p, err := os.StartProcess(selfExe, supervise.WatchArgs(os.Getpid(), grace, cgroups.dir), &os.ProcAttr{
		Dir: "/",
		// A binary built with -race would otherwise sleep a second at exit.
		Env:   append(os.Environ(), "GORACE=atexit_sleep_ms=0"),
		Files: []*os.File{null, null, null, r},
		// Its own group: a terminal's ^C is for the run, not for it.
		Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		w.Close()
		return
	}
	watchdog.pipe = w
	go func() {
		p.Wait()
		watchdog.gone.Store(true)
	}()
}
