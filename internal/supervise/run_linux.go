package supervise

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// init runs the supervisor, or the watchdog, and exits, when the program
// was started as one: argv[0] is Name (WatchName) and argv[1] its
// settings. Nothing in the environment can make it one.
func init() {
	if len(os.Args) == 3 && os.Args[0] == WatchName {
		parent, grace, ok := parseWatch(os.Args[1])
		if !ok {
			os.Stderr.WriteString("orchestrate: bad watchdog settings\n")
			os.Exit(125)
		}
		os.Exit(watch(parent, grace, os.Args[2]))
	}
	if len(os.Args) != 3 || os.Args[0] != Name {
		return
	}
	s, ok := parse(os.Args[1])
	if !ok {
		os.Stderr.WriteString("orchestrate: bad supervisor settings\n")
		os.Exit(125)
	}
	os.Exit(run(s, os.Args[2]))
}

// The supervisor: it makes itself a child subreaper, so that whatever the
// command leaves behind, setsid daemons included, becomes its child instead
// of init's; it runs sh -c; and when sh ends, or a SIGTERM, SIGINT or SIGHUP
// comes, or its own parent dies (a parent-death signal, and a look at its
// parent ID), it stops every process below it: SIGTERM, then SIGKILL after
// the grace. So no process a gate or an agent started outlives it, even when
// orchestrate itself is killed with SIGKILL.

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// run is the supervisor's whole life; it returns its exit code.
func run(s settings, script string) int {
	if s.had {
		os.Setenv("GORACE", s.gorace)
	} else {
		os.Unsetenv("GORACE")
	}
	sv := &supervisor{self: os.Getpid(), parent: s.parent, grace: s.grace}
	// Best effort: without it, descendants that leave the group go to init
	// and only the group is stopped, as on other systems.
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	sv.subreaper = errno == 0
	sv.stop = make(chan os.Signal, 8)
	signal.Notify(sv.stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	sv.chld = make(chan os.Signal, 1)
	signal.Notify(sv.chld, syscall.SIGCHLD)

	pid, err := syscall.ForkExec(shell(), []string{"sh", "-c", script}, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		os.Stderr.WriteString("orchestrate: starting sh: " + err.Error() + "\n")
		return 127
	}
	sv.tick = time.NewTicker(50 * time.Millisecond)
	defer sv.tick.Stop()
	status := sv.waitShell(pid)
	sv.stopLeftovers()
	return exitAs(status, sv.self)
}

// shell returns the path of sh: the first on PATH, as exec.LookPath would
// find it, or /bin/sh.
func shell() string {
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/sh"
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p
		}
	}
	return "/bin/sh"
}

// supervisor is the state of a supervisor process.
type supervisor struct {
	self, parent int
	grace        time.Duration
	subreaper    bool
	stop, chld   chan os.Signal
	tick         *time.Ticker
	stopping     time.Time // when a stop began
}

// begin begins a stop, unless one began already: SIGTERM to every process
// below.
func (sv *supervisor) begin() {
	if sv.stopping.IsZero() {
		sv.stopping = time.Now()
		signalBelow(sv.self, syscall.SIGTERM)
	}
}

// waitShell waits for sh (pid) to end, stopping everything below when
// asked to or when the parent dies, and returns sh's status.
func (sv *supervisor) waitShell(pid int) syscall.WaitStatus {
	var status syscall.WaitStatus
	for !reap(pid, &status) {
		if os.Getppid() != sv.parent {
			sv.begin()
		}
		if !sv.stopping.IsZero() && time.Since(sv.stopping) >= sv.grace {
			signalBelow(sv.self, syscall.SIGKILL)
		}
		select {
		case <-sv.stop:
			sv.begin()
		case <-sv.chld:
		case <-sv.tick.C:
		}
	}
	return status
}

// stopLeftovers stops whatever is left below once sh is gone, SIGTERM then
// after the grace SIGKILL, until nothing is.
func (sv *supervisor) stopLeftovers() {
	if sv.stopping.IsZero() {
		sv.stopping = time.Now()
	}
	if !(reap(0, nil) && sv.subreaper) {
		signalBelow(sv.self, syscall.SIGTERM)
	}
	for {
		// A subreaper with no child left has nothing below it: every
		// orphan of its descendants would have become its child.
		if none := reap(0, nil); none && sv.subreaper || len(below(sv.self)) == 0 {
			break
		}
		if time.Since(sv.stopping) >= sv.grace {
			signalBelow(sv.self, syscall.SIGKILL)
		}
		select {
		case <-sv.chld:
		case <-sv.stop:
		case <-sv.tick.C:
		}
	}
}

// exitAs returns sh's exit code, or when a signal killed sh, dies of it
// (self is the supervisor's PID), so that the parent sees what sh saw.
func exitAs(status syscall.WaitStatus, self int) int {
	switch {
	case status.Exited():
		return status.ExitStatus()
	case status.Signaled():
		sig := status.Signal()
		signal.Reset(sig)
		syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
		// The Go runtime keeps its handler for SIGSEGV and its kind:
		// the default action, set straight with the system call.
		var act [4]uint64 // a struct sigaction of zeros: SIG_DFL
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
		syscall.Kill(self, sig)
		time.Sleep(time.Second)
		return 128 + int(sig)
	}
	return 125
}

// reap reaps every child that has exited. With pid > 0 it reports
// whether pid was one of them, its status in *status; with pid 0, whether
// no child is left.
func reap(pid int, status *syscall.WaitStatus) bool {
	found := false
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ECHILD && pid == 0 {
			return true
		}
		if err != nil || wpid <= 0 {
			return found
		}
		if wpid == pid && pid > 0 {
			*status, found = ws, true
		}
	}
}

// signalBelow sends sig to every process below self: its descendants and
// the members of its process group.
func signalBelow(self int, sig syscall.Signal) {
	for _, p := range below(self) {
		syscall.Kill(p, sig)
	}
}

// below lists the processes below self: its descendants (a subreaper's
// include the orphans of its descendants) and the other members of its
// process group, from /proc.
func below(self int) []int {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	var out []int
	seen := map[int]bool{self: true}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, pgrp, state, ok := ProcStat(pid)
		if !ok || state == 'Z' {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		if pgrp == self && !seen[pid] {
			seen[pid] = true
			out = append(out, pid)
		}
	}
	queue := []int{self}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// ProcStat reads a process's parent, process group and state from
// /proc/PID/stat.
func ProcStat(pid int) (ppid, pgrp int, state byte, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || len(f[0]) == 0 {
		return 0, 0, 0, false
	}
	return ppid, pgrp, f[0][0], true
}
