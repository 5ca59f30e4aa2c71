package main

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// asReaper makes this process the reaper of its descendants' orphans for
// the rest of tb: a detached process a command started (the background
// page refresh) is then this process's to wait for when its parent is
// gone, and reapOrphans counts its CPU.
func asReaper(tb testing.TB) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		tb.Skip("cannot reap orphans here:", err)
	}
	tb.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// reapOrphans waits for every child of this process left (the orphans
// asReaper gave it) and returns their CPU time, theirs and their
// children's. Only for a benchmark that starts its commands one at a time.
func reapOrphans() time.Duration {
	var total time.Duration
	for {
		var ru unix.Rusage
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, &ru)
		if err == unix.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return total
		}
		total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
}
