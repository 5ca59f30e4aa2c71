package gate

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// waitGroupLeader waits for cmd's process to exit, calls cleanup while the
// process is a zombie, so that its PID, which is the group's ID, is still
// reserved and the group can be signaled safely, then reaps it.
func waitGroupLeader(cmd *exec.Cmd, cleanup func()) error {
	if err := waitExited(cmd.Process.Pid); err != nil {
		// Cannot wait without reaping (seccomp, an old kernel): reap, then
		// clean up, accepting the small chance that the ID is reused.
		err := cmd.Wait()
		cleanup()
		return err
	}
	cleanup()
	return cmd.Wait()
}

// waitExited blocks until pid has exited, leaving it unreaped (WNOWAIT), as
// the os package itself does before reaping.
func waitExited(pid int) error {
	const pPID = 1
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}
