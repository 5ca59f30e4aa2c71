//go:build !linux

package claim

import "syscall"

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// exists reports whether process pid exists.
func exists(pid int) bool { return alive(pid) }
