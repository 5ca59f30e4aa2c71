package gate

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
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

// waitExited waits until pid has exited, leaving it unreaped (WNOWAIT), as
// the os package itself does before reaping. It waits on a pidfd, which
// becomes readable when the process exits, in the runtime's poller: no
// thread sits blocked in waitid meanwhile, which would have the runtime
// hand its processor to another thread, and its monitor wake every 20µs
// to see to it, for as long as the command runs. Where there is no pidfd
// (a kernel before 5.10), it blocks in waitid.
func waitExited(pid int) error {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return waitExitedBlocking(pid)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return waitExitedBlocking(pid)
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		// Signo is SIGCHLD once the process has exited; 0 while it runs.
		return werr != unix.EINTR && (werr != nil || info.Signo != 0)
	})
	if err != nil {
		return err
	}
	return werr
}

// waitExitedBlocking blocks in waitid until pid has exited, leaving it
// unreaped (WNOWAIT).
func waitExitedBlocking(pid int) error {
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

// GroupAlive reports whether the process group pgid still has a member
// that carries env (NAME=VALUE) in its environment: a group that a crashed
// run left, not an unrelated group that has since got the same ID. Where
// the environments cannot be read, a group that exists counts.
func GroupAlive(pgid int, env string) bool {
	if pgid <= 0 || syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	unknown := false
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, pgrp, state, ok := supervise.ProcStat(pid)
		if !ok || pgrp != pgid || state == 'Z' {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			unknown = true
			continue
		}
		for _, kv := range strings.Split(string(data), "\x00") {
			if kv == env {
				return true
			}
		}
	}
	return unknown
}
