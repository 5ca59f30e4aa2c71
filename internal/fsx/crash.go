package fsx

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
)

// KillAtEnv names the environment variable that, in a build with the
// orchestrate_testhooks tag only, makes the process kill itself (SIGKILL)
// at its Nth write step: the crash tests use it to stop a command at every
// point where a file could be left half-done. A build without the tag
// never reads it.
const KillAtEnv = "ORCHESTRATE_KILL_AT_STEP"

// FailWriteEnv names the environment variable that, in a build with the
// orchestrate_testhooks tag only, makes every write of the file of that
// name fail as on a full disk (ENOSPC): the tests use it to hold what a
// command leaves when a write fails.
const FailWriteEnv = "ORCHESTRATE_FAIL_WRITE"

// The fault hooks: set from the environment by testhooks.go, in a build
// with the orchestrate_testhooks tag; zero, and so off, in any other.
var (
	killAt    int64
	steps     atomic.Int64
	failWrite string
)

// Step marks a point at which a write has reached the disk, and a crash
// would leave things as they are now. Under KillAtEnv, the Nth step kills
// the process.
func Step(what string) {
	if killAt == 0 {
		return
	}
	if steps.Add(1) == killAt {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// injected returns the error of a write of path that FailWriteEnv makes
// fail, or nil.
func injected(path string) error {
	if failWrite != "" && filepath.Base(path) == failWrite {
		return fmt.Errorf("writing %s: %w", path, syscall.ENOSPC)
	}
	return nil
}
