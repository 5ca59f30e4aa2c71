//go:build unix && !linux

package gate

import "os/exec"

// waitGroupLeader reaps cmd's process, then calls cleanup. Without Linux's
// waitid(WNOWAIT) the group is signaled after its leader is reaped, with a
// small chance that the ID has been reused by then.
func waitGroupLeader(cmd *exec.Cmd, cleanup func()) error {
	err := cmd.Wait()
	cleanup()
	return err
}
