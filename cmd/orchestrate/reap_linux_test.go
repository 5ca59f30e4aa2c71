package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/supervise"
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
// The watchdog of this process's own gates (a benchmark that runs a loop
// in this process starts one) is not waited for: it lives as long as this
// process does.
func reapOrphans() time.Duration {
	var total time.Duration
	for {
		pids := orphans()
		if len(pids) == 0 {
			return total
		}
		for _, pid := range pids {
			var ru unix.Rusage
			var ws unix.WaitStatus
			_, err := unix.Wait4(pid, &ws, 0, &ru)
			for err == unix.EINTR {
				_, err = unix.Wait4(pid, &ws, 0, &ru)
			}
			if err == nil {
				total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
		}
	}
}

// orphans lists the children of this process (of each of its threads)
// but its gates' watchdog.
func orphans() []int {
	lists, _ := filepath.Glob("/proc/self/task/*/children")
	var pids []int
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			if cmdline, _ := os.ReadFile("/proc/" + f + "/cmdline"); strings.HasPrefix(string(cmdline), supervise.WatchName) {
				continue
			}
			pids = append(pids, pid)
		}
	}
	return pids
}
