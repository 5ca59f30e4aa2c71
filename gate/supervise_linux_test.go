package gate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
)

// TestCommandsRunUnderTheRunningExecutable: a gate's parent is the
// supervisor, started from the running executable with its name as
// argv[0], and the command's environment carries no switch of it.
func TestCommandsRunUnderTheRunningExecutable(t *testing.T) {
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
