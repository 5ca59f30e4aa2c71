package supervise

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The watchdog: where every command runs in a cgroup of its own, commands
// need no supervisor each (the cgroup holds whatever a command starts,
// setsid daemons included, and its parent kills the cgroup when the command
// is done). What is left is the parent's death: a SIGKILL of orchestrate
// leaves nobody to stop its commands. One watchdog per orchestrate process
// sees to that. It holds the read end of a pipe whose write end only its
// parent holds; when the parent is gone, however it died, the read ends,
// and the watchdog stops every cgroup its parent made (named
// CgroupPrefix(parent)): SIGTERM to each process in them, then, after the
// grace, cgroup.kill. Then it removes them and exits.

// WatchName is the watchdog's argv[0].
const WatchName = "orchestrate-watchdog"

// WatchFD is the descriptor the watchdog reads its parent's pipe from.
const WatchFD = 3

// WatchArgs returns the argv of a watchdog for parent, whose commands'
// cgroups are made in dir, with grace between SIGTERM and cgroup.kill.
func WatchArgs(parent int, grace time.Duration, dir string) []string {
	spec := strings.Join([]string{version, strconv.Itoa(parent), strconv.FormatInt(grace.Milliseconds(), 10)}, " ")
	return []string{WatchName, spec, dir}
}

// CgroupPrefix is the start of the name of every cgroup that the process
// pid makes for its commands.
func CgroupPrefix(pid int) string { return "orchestrate-" + strconv.Itoa(pid) + "-" }

// parseWatch reads a watchdog's argv[1].
func parseWatch(spec string) (parent int, grace time.Duration, ok bool) {
	f := strings.Split(spec, " ")
	if len(f) != 3 || f[0] != version {
		return 0, 0, false
	}
	parent, err1 := strconv.Atoi(f[1])
	ms, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || parent <= 0 || ms < 0 {
		return 0, 0, false
	}
	return parent, time.Duration(ms) * time.Millisecond, true
}

// watch is the watchdog's whole life: it waits for its parent to be gone,
// then stops the parent's commands' cgroups in dir.
func watch(parent int, grace time.Duration, dir string) int {
	// A terminal's signals are for the run; the watchdog outlives them to
	// do its work, and ends when its parent has.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGPIPE)
	var b [64]byte
	for {
		// EOF, or an error: the parent is gone.
		n, err := syscall.Read(WatchFD, b[:])
		if err != syscall.EINTR && (err != nil || n == 0) {
			break
		}
	}
	StopCgroups(dir, CgroupPrefix(parent), grace)
	return 0
}

// StopCgroups stops every process in the cgroups of dir whose names start
// with prefix: SIGTERM to each, a wait of up to grace for them to end, then
// cgroup.kill for what is left; then it removes the cgroups.
func StopCgroups(dir, prefix string, grace time.Duration) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var groups []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			groups = append(groups, dir+"/"+e.Name())
		}
	}
	for _, g := range groups {
		SignalCgroup(g, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for _, g := range groups {
		for Populated(g) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if Populated(g) {
			os.WriteFile(g+"/cgroup.kill", []byte("1"), 0)
		}
	}
	for _, g := range groups {
		RemoveCgroup(g)
	}
}

// SignalCgroup sends sig to every process in the cgroup g.
func SignalCgroup(g string, sig syscall.Signal) {
	data, err := os.ReadFile(g + "/cgroup.procs")
	if err != nil {
		return
	}
	for _, line := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(line); err == nil && pid > 0 {
			syscall.Kill(pid, sig)
		}
	}
}

// Populated reports whether the cgroup g has a process left in it (false
// when it cannot be read: gone).
func Populated(g string) bool {
	populated, read := CgroupEvents(g)
	return read && populated
}

// CgroupEvents reports whether the cgroup g has a process left in it, and
// whether its cgroup.events could be read to tell.
func CgroupEvents(g string) (populated, read bool) {
	data, err := os.ReadFile(g + "/cgroup.events")
	return err == nil && EventsPopulated(data), err == nil
}

// EventsPopulated reports whether the text of a cgroup.events says a
// process is in the cgroup.
func EventsPopulated(events []byte) bool { return bytes.Contains(events, []byte("populated 1")) }

// RemoveCgroup removes the cgroup g once it is empty: the processes a kill
// reached take a moment to be gone. It gives up after a second.
func RemoveCgroup(g string) {
	for deadline := time.Now().Add(time.Second); ; time.Sleep(5 * time.Millisecond) {
		err := syscall.Rmdir(g) // (os.Remove tries unlink first)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return
		}
	}
}
