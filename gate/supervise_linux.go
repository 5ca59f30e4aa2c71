package gate

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
)

// On Linux every command runs under a supervisor (see package supervise):
// this same program, started again from the running executable as the
// leader of the command's process group, with a parent-death signal. It
// is a child subreaper and stops every process below it when the command
// ends, when it is told to stop, or when orchestrate dies, SIGKILL
// included.

// supervisorSlack is how much longer than the grace the parent waits
// before it kills the supervisor itself: the supervisor kills what is below
// it at the grace, and must have the time to.
const supervisorSlack = 2 * time.Second

// shPath is where sh was found on PATH, and the PATH it was found on:
// exec.Command looks in each directory of PATH in turn for each command,
// a stat of each, where one look serves every gate of a run.
var shPath struct {
	sync.Mutex
	path, on string
}

// shell returns where sh is on this process's PATH, or "sh" when it is
// not there (exec.Command then says why).
func shell() string {
	on := os.Getenv("PATH")
	shPath.Lock()
	defer shPath.Unlock()
	if shPath.path == "" || shPath.on != on {
		path, err := exec.LookPath("sh")
		if err != nil {
			return "sh"
		}
		shPath.path, shPath.on = path, on
	}
	return shPath.path
}

// selfExe is the running executable, which the supervisor is started
// from: the program that runs, even when the file it was started from has
// since been replaced or removed. Tests point it elsewhere to take the
// fallback.
var selfExe = "/proc/self/exe"

// SupervisorProblem says why commands cannot run under a supervisor here
// (no /proc, so no running executable to start again, and no view of the
// processes below), and so run in a process group of their own only,
// which a SIGKILL of orchestrate or a setsid daemon escapes; "" when they
// can.
func SupervisorProblem() string {
	supervisorLook.Lock()
	defer supervisorLook.Unlock()
	if supervisorLook.exe != selfExe {
		supervisorLook.exe, supervisorLook.problem = selfExe, ""
		if _, err := os.Stat(selfExe); err != nil {
			supervisorLook.problem = "commands run without their supervisor, in a process group only: " +
				"the running executable cannot be started again (" + err.Error() + "); " +
				"a daemon a command leaves, or a SIGKILL of orchestrate, can leave its processes running"
		}
	}
	return supervisorLook.problem
}

// supervisorLook is SupervisorProblem's look at selfExe, made once: the
// running executable stays there for as long as the process runs, and
// each gate asks.
var supervisorLook struct {
	sync.Mutex
	exe, problem string
}

// command returns the command that runs script, and the wait the parent
// allows between its SIGTERM and its SIGKILL: under a supervisor when this
// program can start itself again, unless watched (the command runs in a
// cgroup of its own, which this process's watchdog stops if it dies; see
// cgroup.watched), then as sh alone. A watched shell has no parent-death
// signal: if this process dies, the watchdog stops all that the command
// started, where the signal would reach the shell alone; and the signal
// would have the shell started on the starter's thread, at two hand-overs
// between threads a gate (startOnThread).
func command(ctx context.Context, script string, env []string, grace time.Duration, watched bool) (*exec.Cmd, time.Duration) {
	if watched || SupervisorProblem() != "" {
		cmd := exec.CommandContext(ctx, shell(), "-c", script)
		cmd.Args[0] = "sh"
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, grace
	}
	gorace, had := "", false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GORACE="); ok {
			gorace, had = v, true
		}
	}
	cmd := exec.CommandContext(ctx, selfExe)
	cmd.Args = supervise.Args(os.Getpid(), grace, gorace, had, script)
	// A binary built with -race would otherwise sleep a second at exit.
	cmd.Env = append(env, "GORACE="+strings.TrimSpace(gorace+" atexit_sleep_ms=0"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd, grace + supervisorSlack
}

// parentDeathSignal reports whether cmd is to get a signal when the thread
// that starts it ends (see starter).
func parentDeathSignal(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0
}
