package gate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// On Linux every command runs under a supervisor: this same program,
// started again with superviseEnv set, as the leader of the command's
// process group. It makes itself a child subreaper, so that whatever the
// command leaves behind, setsid daemons included, becomes its child instead
// of init's; it runs sh -c; and when sh ends, or a SIGTERM, SIGINT or SIGHUP
// comes, or its own parent dies (a parent-death signal, and a look at its
// parent ID), it stops every process below it: SIGTERM, then SIGKILL after
// the grace. So no process a gate or an agent started outlives it, even when
// orchestrate itself is killed with SIGKILL.
const superviseEnv = "ORCHESTRATE_SUPERVISE"

// supervisorSlack is how much longer than the grace the parent waits
// before it kills the supervisor itself: the supervisor kills what is below
// it at the grace, and must have the time to.
const supervisorSlack = 2 * time.Second

func init() {
	spec, ok := os.LookupEnv(superviseEnv)
	if !ok || len(os.Args) != 2 {
		return
	}
	os.Exit(supervise(spec, os.Args[1]))
}

// command returns the command that runs script, under a supervisor when
// this program can start itself again, and the wait the parent allows
// between its SIGTERM and its SIGKILL.
func command(ctx context.Context, script string, env []string, grace time.Duration) (*exec.Cmd, time.Duration) {
	exe, err := os.Executable()
	if err == nil {
		// Replaced or removed since it started (a rebuild): run without.
		_, err = os.Stat(exe)
	}
	if err != nil {
		cmd := exec.CommandContext(ctx, "sh", "-c", script)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, grace
	}
	cmd := exec.CommandContext(ctx, exe, script)
	cmd.Args[0] = "orchestrate-supervisor"
	gorace, had := "", "0"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace, had = v, "1"
		}
	}
	cmd.Env = append(env,
		fmt.Sprintf("%s=v1 %d %d %s %s", superviseEnv, os.Getpid(), grace.Milliseconds(), had, gorace),
		// A binary built with -race would otherwise sleep a second at exit.
		"GORACE="+strings.TrimSpace(gorace+" atexit_sleep_ms=0"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, grace + supervisorSlack
}

// supervise is the supervisor's whole life; it returns its exit code.
func supervise(spec, script string) int {
	parent, grace, ok := takeSuperviseSpec(spec)
	if !ok {
		fmt.Fprintf(os.Stderr, "orchestrate: bad %s\n", superviseEnv)
		return 125
	}
	sv := &supervisor{self: os.Getpid(), parent: parent, grace: grace}
	// Best effort: without it, descendants that leave the group go to init
	// and only the group is stopped, as on other systems.
	sv.subreaper = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil
	sv.stop = make(chan os.Signal, 8)
	signal.Notify(sv.stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	sv.chld = make(chan os.Signal, 1)
	signal.Notify(sv.chld, syscall.SIGCHLD)

	sh, err := exec.LookPath("sh")
	if err != nil {
		fmt.Fprintf(os.Stderr, "orchestrate: %v\n", err)
		return 127
	}
	pid, err := syscall.ForkExec(sh, []string{"sh", "-c", script}, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "orchestrate: starting sh: %v\n", err)
		return 126
	}
	sv.tick = time.NewTicker(50 * time.Millisecond)
	defer sv.tick.Stop()
	status := sv.waitShell(pid)
	sv.stopLeftovers()
	return exitAs(status, sv.self)
}

// takeSuperviseSpec reads superviseEnv's value: the parent's PID, the
// grace, and the GORACE the command is to have, which it puts back in the
// environment in place of superviseEnv and the supervisor's own GORACE.
func takeSuperviseSpec(spec string) (parent int, grace time.Duration, ok bool) {
	f := strings.SplitN(spec, " ", 5)
	if len(f) != 5 || f[0] != "v1" {
		return 0, 0, false
	}
	parent, _ = strconv.Atoi(f[1])
	graceMS, _ := strconv.Atoi(f[2])
	os.Unsetenv(superviseEnv)
	if f[3] == "1" {
		os.Setenv("GORACE", f[4])
	} else {
		os.Unsetenv("GORACE")
	}
	return parent, time.Duration(graceMS) * time.Millisecond, true
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
		unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
		// The Go runtime keeps its handler for SIGSEGV and its kind:
		// the default action, set straight with the system call.
		var act [4]uint64 // a struct sigaction of zeros: SIG_DFL
		unix.Syscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
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
		ppid, pgrp, state, ok := procStat(pid)
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

// procStat reads a process's parent, process group and state from
// /proc/PID/stat.
func procStat(pid int) (ppid, pgrp int, state byte, ok bool) {
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
