//go:build unix && !linux

package gate

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// command returns the command that runs script: sh -c in its own process
// group. Without Linux's child subreaper and parent-death signal, only the
// group is stopped, and only while orchestrate lives.
func command(ctx context.Context, script string, env []string, grace time.Duration, _ bool) (*exec.Cmd, time.Duration) {
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, grace
}

// SupervisorProblem is "": here commands always run in a process group of
// their own, which is all this system offers (see the docs), not a
// fallback to warn of.
func SupervisorProblem() string { return "" }

// parentDeathSignal is false: no command here gets a parent-death signal.
func parentDeathSignal(*exec.Cmd) bool { return false }
