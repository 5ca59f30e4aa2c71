// Package loop ties the queue, the session state, the failure signatures,
// the gates and the history together into the retry policy and its loop.
package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// The files of a workspace directory.
const (
	QueueFile     = "issue_queue.md"
	StateFile     = "session_state.md"
	ConfigFile    = "config.yaml"
	HistoryFile   = "history.csv"
	AnalyticsFile = "analytics.html"
	SentinelFile  = "no_auto_retry"
	LockFile      = ".lock"
	RunsDir       = "runs"
	PromptsDir    = "prompts"

	// RunLockFile is held by orchestrate run for its whole length: one run
	// at a time. It is not LockFile, which every read-modify-write takes for
	// a moment, the run's own included (a flock is per open file, so a run
	// holding LockFile would wait for itself).
	RunLockFile = ".run.lock"
	// AbortFile is the marker orchestrate abort leaves for the run in
	// progress, which stops at its next decision point.
	AbortFile = "abort"
	// TaskFile is the task orchestrate run gives the agent when no --task
	// or --task-file says otherwise.
	TaskFile = "task.md"
)

// DefaultDir is the workspace directory, relative to the repository.
const DefaultDir = ".orchestrator"

// Workspace is a .orchestrator/ directory.
type Workspace struct {
	Dir string

	// session, when set, is the key of the agent session whose Stop hook
	// works on the workspace: every issue it reads or changes carries it
	// (see loadQueue and updateQueue); day is the hook's day, which the IDs
	// of the issues it files start with.
	session, day string

	// rows, when set, holds the history rows appended, for a step that
	// writes them all with one append at its end (RunGates).
	rows *[]analytics.Event
}

// Path returns the path of a file of the workspace.
func (w Workspace) Path(name string) string { return filepath.Join(w.Dir, name) }

// Root returns the repository the workspace belongs to: its parent.
func (w Workspace) Root() string {
	abs, err := filepath.Abs(w.Dir)
	if err != nil {
		return filepath.Dir(w.Dir)
	}
	return filepath.Dir(abs)
}

// Lock takes the workspace's lock, waiting until ctx ends.
func (w Workspace) Lock(ctx context.Context) (func(), error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	return fsx.Lock(ctx, w.Path(LockFile))
}

// ErrNoWorkspace is returned when the workspace directory does not exist.
var ErrNoWorkspace = errors.New("no workspace")

// Exists returns an error matching ErrNoWorkspace unless the workspace
// directory exists.
func (w Workspace) Exists() error { return w.mustExist() }

func (w Workspace) mustExist() error {
	fi, err := os.Stat(w.Dir)
	if err == nil && fi.IsDir() {
		return nil
	}
	return fmt.Errorf("%s: %w (run orchestrate init)", w.Dir, ErrNoWorkspace)
}

// SentinelExists reports whether the no_auto_retry sentinel is there.
func (w Workspace) SentinelExists() bool {
	_, err := os.Stat(w.Path(SentinelFile))
	return err == nil
}
