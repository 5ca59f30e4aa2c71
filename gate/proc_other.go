//go:build unix && !linux

package gate

import (
	"os/exec"
	"syscall"
)

// waitGroupLeader reaps cmd's process, then calls cleanup. Without Linux's
// waitid(WNOWAIT) the group is signaled after its leader is reaped, with a
// small chance that the ID has been reused by then.
func waitGroupLeader(cmd *exec.Cmd, cleanup func()) error {
	err := cmd.Wait()
	cleanup()
	return err
}

// GroupAlive reports whether the process group pgid still exists (env, the
// mark of its members on Linux, cannot be read here).
func GroupAlive(pgid int, env string) bool {
	return pgid > 0 && syscall.Kill(-pgid, 0) != syscall.ESRCH
}
