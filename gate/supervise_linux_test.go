package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
)

// supervised makes this test's commands run under their supervisor where
// they would run watched: as they do once the watchdog is gone.
func supervised(t testing.TB) {
	was := watchdog.gone.Swap(true)
	t.Cleanup(func() { watchdog.gone.Store(was) })
}

// requireWatched skips a test where commands cannot run watched (no
// cgroup v2 this process may make cgroups in).
func requireWatched(t testing.TB) {
	t.Helper()
	if cgroupBase() == "" || SupervisorProblem() != "" {
		t.Skip("commands do not run watched here (no cgroup v2 this process may make cgroups in)")
	}
}

// TestCommandsRunUnderTheRunningExecutable: a gate's parent is the
// supervisor, started from the running executable with its name as
// argv[0], and the command's environment carries no switch of it.
func TestCommandsRunUnderTheRunningExecutable(t *testing.T) {
	supervised(t)
	if problem := SupervisorProblem(); problem != "" {
		t.Fatalf("SupervisorProblem() = %q; want none where /proc is", problem)
	}
	g := gateOf("g", `tr '\0' '\n' < /proc/$PPID/cmdline | head -1; readlink /proc/$PPID/exe; env | grep -c SUPERVISE || true`)
	r := runOne(t, g, Options{})
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	want := supervise.Name + "\n" + self + "\n0\n"
	if r.Outcome != Pass || r.Output != want {
		t.Errorf("Run = %s, output %q; want pass and %q", r.Outcome, r.Output, want)
	}
}

// TestWithoutTheSupervisor: where the running executable cannot be
// started again, SupervisorProblem says so, and a gate runs in a process
// group of its own, which is stopped when it is done.
func TestWithoutTheSupervisor(t *testing.T) {
	old := selfExe
	selfExe = filepath.Join(t.TempDir(), "no-proc", "self", "exe")
	defer func() { selfExe = old }()
	problem := SupervisorProblem()
	if !strings.Contains(problem, "without their supervisor, in a process group only") || !strings.Contains(problem, "no such file") {
		t.Errorf("SupervisorProblem() = %q", problem)
	}
	dir := t.TempDir()
	g := gateOf("g", `sleep 300 </dev/null >/dev/null 2>&1 & echo $! > pids
tr '\0' '\n' < /proc/$PPID/cmdline | head -1`)
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 500 * time.Millisecond})
	if r.Outcome != Pass || strings.HasPrefix(r.Output, supervise.Name) {
		t.Errorf("Run = %s, output %q; want pass, its parent not a supervisor", r.Outcome, r.Output)
	}
	pids := readPIDs(t, filepath.Join(dir, "pids"))
	waitGone(t, pids...)
	// A setsid daemon leaves the group: without a cgroup nothing stops it,
	// as the problem says.
	g = gateOf("g", `setsid sh -c 'echo $$ > daemon; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon ]; do sleep 0.01; done`)
	if r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 500 * time.Millisecond}); r.Outcome != Pass {
		t.Fatalf("Run = %s (%s)", r.Outcome, r.Reason())
	}
	daemon := readPIDs(t, filepath.Join(dir, "daemon"))
	defer syscall.Kill(daemon[0], syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	if cgroupBase() == "" && !alive(daemon[0]) {
		t.Errorf("the setsid daemon is gone without a supervisor: is this test's fallback the fallback?")
	}
}

// TestWatchedCommandsRunWithoutASupervisor: where commands run in cgroups
// of their own, a gate's parent is this process, and one watchdog, started
// from the running executable with its name as argv[0], watches this
// process for all its commands.
func TestWatchedCommandsRunWithoutASupervisor(t *testing.T) {
	requireWatched(t)
	g := gateOf("g", `echo $PPID; tr '\0' '\n' < /proc/$PPID/cmdline | head -1`)
	for range 3 {
		r := runOne(t, g, Options{})
		self, _ := os.Executable()
		if want := fmt.Sprintf("%d\n%s\n", os.Getpid(), os.Args[0]); r.Outcome != Pass || r.Output != want {
			t.Errorf("Run = %s, output %q; want pass and %q (self %s)", r.Outcome, r.Output, want, self)
		}
	}
	if dogs := watchdogsOf(t, os.Getpid()); len(dogs) != 1 {
		t.Errorf("watchdogs of this process: %v; want one", dogs)
	}
}

// watchdogsOf lists the watchdogs running for parent, each started from
// the running executable.
func watchdogsOf(t *testing.T, parent int) []int {
	t.Helper()
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	procs, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(cmdline), "\x00")
		exe, _ := os.Readlink("/proc/" + e.Name() + "/exe")
		if len(args) >= 2 && args[0] == supervise.WatchName && strings.Fields(args[1])[1] == strconv.Itoa(parent) && exe == self {
			out = append(out, pid)
		}
	}
	return out
}

// TestWatchdogGoneCommandsGoBackToSupervisors: once the watchdog is gone
// (killed), nothing would stop a command if orchestrate died: the next
// commands run under their supervisors.
func TestWatchdogGoneCommandsGoBackToSupervisors(t *testing.T) {
	requireWatched(t)
	// A command watched, should none have run before in this process:
	// the watchdog starts with the first.
	if r := runOne(t, gateOf("g", "true"), Options{}); r.Outcome != Pass {
		t.Fatalf("Run = %s (%s); want pass", r.Outcome, r.Reason())
	}
	dogs := watchdogsOf(t, os.Getpid())
	if len(dogs) != 1 {
		t.Fatalf("watchdogs of this process: %v; want one", dogs)
	}
	t.Cleanup(func() {
		// The next tests of this process run watched again, with a
		// watchdog of their own.
		watchdog.once, watchdog.pipe = sync.Once{}, nil
		watchdog.gone.Store(false)
	})
	syscall.Kill(dogs[0], syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); !watchdog.gone.Load(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watchdog's end was not seen")
		}
	}
	g := gateOf("g", `tr '\0' '\n' < /proc/$PPID/cmdline | head -1`)
	if r := runOne(t, g, Options{}); r.Outcome != Pass || r.Output != supervise.Name+"\n" {
		t.Errorf("Run = %s, output %q; want pass under a supervisor", r.Outcome, r.Output)
	}
}
