package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// daemonScript starts, and leaves running, a setsid daemon (its own
// session, out of the gate's process group) and a double-forked one, each
// writing its PID to the file pids, then a plain grandchild.
const daemonScript = `setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 &
( setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 & ) 
sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> pids
while [ "$(wc -l < pids)" -lt 3 ]; do sleep 0.01; done
`

// waitPidsGone waits for each PID in file to be gone.
func waitPidsGone(t *testing.T, file string) {
	t.Helper()
	pids := readPIDs(t, file)
	if len(pids) < 3 {
		t.Fatalf("pids = %v; want 3", pids)
	}
	waitGone(t, pids...)
}

func requireSetsid(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
}

// TestDaemonsOfAPassingGateAreKilled: whatever a gate left running, setsid
// daemons included, is gone once the gate is done.
func TestDaemonsOfAPassingGateAreKilled(t *testing.T) {
	requireSetsid(t)
	dir := t.TempDir()
	g := gateOf("g", daemonScript)
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 500 * time.Millisecond})
	if r.Outcome != Pass {
		t.Fatalf("Run = %s (%s)", r.Outcome, r.Reason())
	}
	waitPidsGone(t, filepath.Join(dir, "pids"))
}

// TestDaemonsOfATimedOutGateAreKilled: the same at a timeout.
func TestDaemonsOfATimedOutGateAreKilled(t *testing.T) {
	requireSetsid(t)
	t.Parallel()
	dir := t.TempDir()
	g := gateOf("g", daemonScript+"sleep 300\n")
	// Long enough for a loaded machine to start the daemons before the
	// timeout ends the gate.
	g.Timeout = 5 * time.Second
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 500 * time.Millisecond})
	if r.Outcome != TimedOut {
		t.Fatalf("Run = %s (%s); want timeout", r.Outcome, r.Reason())
	}
	waitPidsGone(t, filepath.Join(dir, "pids"))
}

// termScript starts a setsid process that, on SIGTERM, takes a moment,
// says so in the file termed and exits, and one that ignores SIGTERM; each
// writes its PID, to tpid and ipid, once it listens.
const termScript = `setsid sh -c 'trap "sleep 0.2; echo term > termed; exit 0" TERM; echo $$ > tpid; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
sh -c 'trap "" TERM; echo $$ > ipid; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -s tpid ] || [ ! -s ipid ]; do sleep 0.01; done
`

// TestLeftoversGetTheGrace: what a passing gate leaves running gets
// SIGTERM and the grace to end, a setsid process included, and what
// ignores SIGTERM is killed; under a supervisor and watched.
func TestLeftoversGetTheGrace(t *testing.T) {
	t.Parallel()
	requireSetsid(t)
	for _, mode := range []string{"supervised", "watched"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "supervised" {
				supervised(t)
			} else {
				requireWatched(t)
			}
			dir := t.TempDir()
			r := runOne(t, gateOf("g", termScript), Options{RepoRoot: dir, KillGrace: time.Second})
			if r.Outcome != Pass {
				t.Fatalf("Run = %s (%s)", r.Outcome, r.Reason())
			}
			waitGone(t, readPIDs(t, filepath.Join(dir, "tpid"))...)
			waitGone(t, readPIDs(t, filepath.Join(dir, "ipid"))...)
			if _, err := os.Stat(filepath.Join(dir, "termed")); err != nil {
				t.Errorf("the setsid process had no grace to end: %v", err)
			}
		})
	}
}

// TestChildrenDieWithTheirParent kills (SIGKILL) a process while a gate it
// runs has children and setsid daemons: they all go with it, SIGTERM
// first. So under a supervisor, and watched (see cgroup.watched), where
// the watchdog stops them.
func TestChildrenDieWithTheirParent(t *testing.T) {
	t.Parallel()
	if os.Getenv("GATE_TEST_PARENT") != "" {
		// The parent: run the gate until killed.
		if os.Getenv("GATE_TEST_SUPERVISED") != "" {
			watchdog.gone.Store(true)
		}
		g := gateOf("g", termScript+daemonScript+"echo $PPID > started; sleep 300\n")
		Run(context.Background(), g, Options{RepoRoot: os.Getenv("GATE_TEST_PARENT"), KillGrace: time.Second}, "")
		return
	}
	requireSetsid(t)
	t.Run("supervised", func(t *testing.T) { childrenDieWithTheirParent(t, true) })
	t.Run("watched", func(t *testing.T) {
		requireWatched(t)
		childrenDieWithTheirParent(t, false)
	})
}

func childrenDieWithTheirParent(t *testing.T, supervised bool) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildrenDieWithTheirParent$")
	cmd.Env = append(os.Environ(), "GATE_TEST_PARENT="+dir, "GORACE=atexit_sleep_ms=0")
	if supervised {
		cmd.Env = append(cmd.Env, "GATE_TEST_SUPERVISED=1")
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if info, err := os.Stat(filepath.Join(dir, "started")); err == nil && info.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the gate did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The gate's parent: this test's child itself, or its supervisor.
	if parent := readPIDs(t, filepath.Join(dir, "started")); (parent[0] == cmd.Process.Pid) == supervised {
		t.Errorf("the gate's parent is %d, the test's child %d: want it supervised %v", parent[0], cmd.Process.Pid, supervised)
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitPidsGone(t, filepath.Join(dir, "pids"))
	waitGone(t, readPIDs(t, filepath.Join(dir, "tpid"))...)
	waitGone(t, readPIDs(t, filepath.Join(dir, "ipid"))...)
	if _, err := os.Stat(filepath.Join(dir, "termed")); err != nil {
		t.Errorf("no SIGTERM before the end: %v", err)
	}
}

// TestGroupAlive finds a group by its mark, and only by it.
func TestGroupAlive(t *testing.T) {
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_RUN_ID=r-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	// Until it has exec'd sleep, the child shows this process's environment.
	for deadline := time.Now().Add(10 * time.Second); !GroupAlive(pgid, "ORCHESTRATE_RUN_ID=r-1"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("GroupAlive(its group, its mark) = false")
		}
	}
	if GroupAlive(pgid, "ORCHESTRATE_RUN_ID=r-2") {
		t.Error("GroupAlive(its group, another run's mark) = true")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if GroupAlive(pgid, "ORCHESTRATE_RUN_ID=r-1") {
		t.Error("GroupAlive of a group that is gone = true")
	}
}

// TestCommandsOutliveEndingThreads: a command's parent-death signal fires
// when the thread that started it ends, and the runtime ends a thread
// whenever a goroutine locked to it ends locked. Commands with one (a
// supervisor) start on a thread that never ends (startOnThread); watched
// ones have none, and start on any: while a gate runs, goroutines that
// end locked end thread after thread of this process, the idle one that
// started the command among them were it any, and the gate runs to its
// end, supervised and watched.
func TestCommandsOutliveEndingThreads(t *testing.T) {
	requireSetsid(t)
	for _, supervised := range []bool{true, false} {
		name := map[bool]string{true: "supervised", false: "watched"}[supervised]
		t.Run(name, func(t *testing.T) {
			if !supervised {
				requireWatched(t)
			} else {
				was := watchdog.gone.Load()
				watchdog.gone.Store(true) // commands go to supervisors
				defer watchdog.gone.Store(was)
			}
			done := make(chan struct{})
			var ended atomic.Int64
			go func() {
				for {
					select {
					case <-done:
						return
					default:
					}
					// Many at once, so that each takes an idle thread.
					var wg sync.WaitGroup
					for range 8 {
						wg.Add(1)
						go func() { defer wg.Done(); runtime.LockOSThread() }()
					}
					wg.Wait()
					ended.Add(8)
					time.Sleep(time.Millisecond)
				}
			}()
			r := runOne(t, gateOf("g", "sleep 0.5; echo alive"), Options{RepoRoot: t.TempDir(), KillGrace: time.Second})
			close(done)
			if r.Outcome != Pass || !strings.Contains(r.Output, "alive") {
				t.Errorf("a gate while %d threads ended: %s (%s), output %q; want pass, alive", ended.Load(), r.Outcome, r.Reason(), r.Output)
			}
		})
	}
}
