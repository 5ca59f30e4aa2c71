package gate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFindCgroup(t *testing.T) {
	const mounts = `24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec - cgroup2 cgroup2 rw,nsdelegate
36 24 0:31 /user.slice /mnt/my\040cgroups rw - cgroup2 cgroup2 rw
`
	for _, tt := range []struct{ mounts, own, want string }{
		{mounts, "0::/user.slice/user-1000.slice/session-2.scope\n", "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"},
		{mounts, "0::/\n", "/sys/fs/cgroup"},
		// cgroup v1 only: no 0:: line.
		{mounts, "4:memory:/x\n1:cpu:/\n", ""},
		// No cgroup2 mounted.
		{"24 30 0:22 / /sys rw - sysfs sysfs rw\n", "0::/a\n", ""},
		// Mounted from a subtree: the path below it.
		{"36 24 0:31 /user.slice /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n", "0::/user.slice/a.scope\n", "/mnt/my cgroups/a.scope"},
		{"36 24 0:31 /user.slice /mnt/c rw - cgroup2 cgroup2 rw\n", "0::/user.slicex/a\n", ""},
	} {
		if got := findCgroup(tt.mounts, tt.own); got != tt.want {
			t.Errorf("findCgroup(…, %q) = %q; want %q", tt.own, got, tt.want)
		}
	}
}

// TestCgroupKillsWhatEscapes: where commands get a cgroup of their own,
// a setsid daemon is gone once its gate is done, even without the
// supervisor, and the cgroup is removed. It runs where this process may
// make cgroups (a delegated cgroup v2 subtree, or root with cgroup2
// mounted); elsewhere it skips.
func TestCgroupKillsWhatEscapes(t *testing.T) {
	base := cgroupBase()
	if base == "" {
		t.Skip("no cgroup v2 this process may make cgroups in")
	}
	requireSetsid(t)
	old := selfExe
	selfExe = filepath.Join(t.TempDir(), "no-proc", "self", "exe")
	defer func() { selfExe = old }()
	dir := t.TempDir()
	g := gateOf("g", `setsid sh -c 'echo $$ > daemon; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon ]; do sleep 0.01; done; cat /proc/self/cgroup`)
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 500 * time.Millisecond})
	if r.Outcome != Pass || !strings.Contains(r.Output, "/orchestrate-") {
		t.Fatalf("Run = %s (%s), output %q; want pass in a cgroup of its own", r.Outcome, r.Reason(), r.Output)
	}
	waitGone(t, readPIDs(t, filepath.Join(dir, "daemon"))...)
	dropSpareCgroups()
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), fmt.Sprintf("orchestrate-%d-", os.Getpid())) {
			t.Errorf("cgroup %s left behind", e.Name())
		}
	}
}

// requireWatchedCgroups skips unless this process may make cgroups, run
// setsid and start its watchdog; it returns where the cgroups are made.
func requireWatchedCgroups(t *testing.T) string {
	t.Helper()
	base := cgroupBase()
	if base == "" {
		t.Skip("no cgroup v2 this process may make cgroups in")
	}
	requireSetsid(t)
	if SupervisorProblem() != "" {
		t.Skip("no watchdog here:", SupervisorProblem())
	}
	return base
}

// dropSpareCgroups removes the cgroups kept for the next commands, as the
// watchdog does once this process ends.
func dropSpareCgroups() {
	cgroups.mu.Lock()
	defer cgroups.mu.Unlock()
	for _, c := range cgroups.spare {
		c.remove()
	}
	cgroups.spare = nil
}

// TestCgroupKeptForTheNext: a watched command's cgroup, empty at its end,
// is the next command's, made once; one that still held what its command
// left after the grace (killed with cgroup.kill) is removed, and the next
// command gets a new one.
func TestCgroupKeptForTheNext(t *testing.T) {
	base := requireWatchedCgroups(t)
	dropSpareCgroups()
	defer dropSpareCgroups()
	dir := t.TempDir()
	where := func(command string) string {
		t.Helper()
		r := runOne(t, gateOf("g", command+"; cat /proc/self/cgroup"), Options{RepoRoot: dir, KillGrace: 200 * time.Millisecond})
		i := strings.Index(r.Output, "/orchestrate-")
		if r.Outcome != Pass || i < 0 {
			t.Fatalf("Run = %s (%s), output %q; want pass in a cgroup of orchestrate's", r.Outcome, r.Reason(), r.Output)
		}
		return strings.TrimSpace(r.Output[i+1:])
	}
	first := where("true")
	if again := where("true"); again != first {
		t.Errorf("the command after one that left its cgroup empty ran in %s; want %s, kept", again, first)
	}
	// A process deaf to SIGTERM outlives the grace: the cgroup is killed.
	left := where(`setsid sh -c 'trap "" TERM; echo $$ > daemon; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon ]; do sleep 0.01; done`)
	waitGone(t, readPIDs(t, filepath.Join(dir, "daemon"))...)
	if left != first {
		t.Errorf("the third command ran in %s; want %s, kept", left, first)
	}
	if _, err := os.Stat(filepath.Join(base, left)); !os.IsNotExist(err) {
		t.Errorf("the cgroup %s that held a process at its command's end is still there (%v); want it removed", left, err)
	}
	if next := where("true"); next == left {
		t.Errorf("the command after one whose cgroup held what it left ran in that cgroup, %s; want a new one", next)
	}
}

// TestCgroupUnreadKilled: a watched command's cgroup whose cgroup.events
// cannot be read (no file descriptor left, say) is not taken for empty:
// what its gate left, setsid and deaf to SIGTERM, is killed all the same.
// And one seen empty is read once, not again for each signal.
func TestCgroupUnreadKilled(t *testing.T) {
	requireWatchedCgroups(t)
	reads := 0
	cgroupEvents = func(*cgroup) (bool, bool) { reads++; return false, false }
	defer func() { cgroupEvents = (*cgroup).readEvents }()
	dir := t.TempDir()
	g := gateOf("g", `setsid sh -c 'trap "" TERM; echo $$ > daemon; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &
while [ ! -s daemon ]; do sleep 0.01; done`)
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 200 * time.Millisecond})
	if r.Outcome != Pass {
		t.Fatalf("Run = %s (%s); want pass", r.Outcome, r.Reason())
	}
	waitGone(t, readPIDs(t, filepath.Join(dir, "daemon"))...)

	// Read, and empty: one read in all.
	reads = 0
	cgroupEvents = func(c *cgroup) (bool, bool) { reads++; return c.readEvents() }
	if r := runOne(t, gateOf("g", "true"), Options{RepoRoot: dir}); r.Outcome != Pass || reads != 1 {
		t.Errorf("a gate whose cgroup is empty at its end: %s, cgroup.events read %d times; want pass, once", r.Outcome, reads)
	}
}

// TestStaleCgroupsRemoved: the empty cgroup a process now gone left is
// removed; one of a live process is not.
func TestStaleCgroupsRemoved(t *testing.T) {
	base := cgroupBase()
	if base == "" {
		t.Skip("no cgroup v2 this process may make cgroups in")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(base, fmt.Sprintf("orchestrate-%d-1", gone.Process.Pid))
	live := filepath.Join(base, fmt.Sprintf("orchestrate-%d-999999", os.Getpid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(d)
	}
	removeStaleCgroups(base)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s is still there", stale)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s: %v", live, err)
	}
}

// TestCgroupRefusedOnce: on a machine whose policy refuses starting a
// process into a cgroup (seccomp refusing clone3, as Docker's does, with
// ENOSYS), the first command starts without one and passes, and the
// commands after it start in none and are never refused again. A command
// refused where a process that does nothing is not (its own failure, with
// the same errno) fails to start, and cgroups stay. It runs where this
// process may make cgroups; elsewhere it skips.
func TestCgroupRefusedOnce(t *testing.T) {
	if cgroupBase() == "" {
		t.Skip("no cgroup v2 this process may make cgroups in")
	}
	refusals := 0
	refuseAll := true
	startProcess = func(cmd *exec.Cmd) error {
		if cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD && (refuseAll || filepath.Base(cmd.Path) != "true") {
			refusals++
			return &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.ENOSYS}
		}
		return cmd.Start()
	}
	defer func() {
		startProcess = (*exec.Cmd).Start
		cgroups.refused.Store(false)
	}()
	refuseAll = false
	r := runOne(t, gateOf("g", "true"), Options{RepoRoot: t.TempDir()})
	if r.Outcome != Errored || !strings.Contains(r.Output+r.Reason(), "could not start") || cgroups.refused.Load() {
		t.Fatalf("a command refused alone: %s (%s), cgroups refused %v; want it not started, cgroups kept", r.Outcome, r.Reason(), cgroups.refused.Load())
	}
	refuseAll, refusals = true, 0
	for i := range 3 {
		r := runOne(t, gateOf("g", "cat /proc/self/cgroup"), Options{RepoRoot: t.TempDir()})
		if r.Outcome != Pass || strings.Contains(r.Output, "/orchestrate-") {
			t.Fatalf("command %d: %s (%s), output %q; want a pass in no cgroup of its own", i+1, r.Outcome, r.Reason(), r.Output)
		}
	}
	if refusals != 2 {
		t.Errorf("starting into a cgroup was refused %d times; want twice (the command, then true), then never tried", refusals)
	}
}
