package loop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// ErrLeftover is returned by Run when a run that ended without releasing
// its lock cleanly (killed) left an agent's process group that still lives:
// a second agent on the same tree would fight it.
var ErrLeftover = errors.New("a previous run's agent is still running")

// runEnv is the environment variable every agent of a run carries, by which
// its processes are known after a crash.
const runEnv = "ORCHESTRATE_RUN_ID"

// runLock takes the run lock for orchestrate run, and refuses while an
// agent's process group recorded in it by a run that died still lives.
func (w Workspace) runLock() (*fsx.Held, error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	h, err := fsx.TryLockHeld(w.Path(RunLockFile))
	for try := 0; errors.Is(err, fsx.ErrLocked) && try < holderGoneTries && holderGone(w.Path(RunLockFile)); try++ {
		// The run the lock names is gone, killed: a process it was
		// starting keeps the lock's file open until its program runs,
		// a moment.
		time.Sleep(holderGoneWait)
		h, err = fsx.TryLockHeld(w.Path(RunLockFile))
	}
	if errors.Is(err, fsx.ErrLocked) {
		return nil, fmt.Errorf("%w in %s (it holds %s): wait for it, or stop it with orchestrate abort",
			ErrRunning, w.Dir, w.Path(RunLockFile))
	}
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(h.Previous, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "group" {
			continue
		}
		pgid, err := strconv.Atoi(f[1])
		if err == nil && groupStays(pgid, runEnv+"="+f[2]) {
			h.Abandon() // the record stays, for the next try
			return nil, fmt.Errorf("%w: process group %d of run %s (stop it with kill -- -%d, then run again)",
				ErrLeftover, pgid, f[2], pgid)
		}
	}
	return h, nil
}

// holderGoneTries and holderGoneWait bound the wait for the lock of a run
// that is gone: 2 s.
const (
	holderGoneTries = 40
	holderGoneWait  = 50 * time.Millisecond
)

// holderGone reports whether the process the run lock at path names (its
// first line: PID and command line) is gone.
func holderGone(path string) bool {
	data, _, err := fsx.ReadFile(path)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(data), " ")
	pid, err := strconv.Atoi(first)
	return err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH
}

// leftoverWait is how long a run waits for a killed run's agent group to
// go before it refuses: the agent's supervisor stops the group once it
// sees its parent die, within the kill grace; a busy machine may take a
// few seconds more.
var leftoverWait = gate.DefaultKillGrace + 5*time.Second

// groupStays reports whether the process group pgid, whose processes carry
// env, still lives after leftoverWait.
func groupStays(pgid int, env string) bool {
	deadline := time.Now().Add(leftoverWait)
	for gate.GroupAlive(pgid, env) {
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// noteGroup records an agent's process group in the run lock, for the next
// run to find should this one die without stopping it.
func noteGroup(h *fsx.Held, run string) func(int) {
	return func(pgid int) {
		if h != nil {
			h.Note(fmt.Sprintf("group %d %s", pgid, run))
		}
	}
}
