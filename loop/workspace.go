package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

	// Notify, if set, is told what a person should know while a command
	// goes on: who holds the lock it waits for, and a step after the
	// command's commit point (the history, the analytics) that failed and
	// is reported as a warning instead of an error. Without it such a step
	// fails the operation.
	Notify func(msg string)

	// session, when set, is the key of the agent session whose Stop hook
	// works on the workspace: every issue it reads or changes carries it
	// (see loadQueue and updateQueue); day is the hook's day, which the IDs
	// of the issues it files start with.
	session, day string

	// loop, when set, is the loop of the run the workspace works for: the
	// history rows that name no loop of their own get it.
	loop int

	// fence, when set, is the claim the workspace's writes carry (Fenced).
	fence *fence

	// root, when set, is the tree the gates run in and failures are signed
	// against: an agent's worktree (see Root).
	root string
}

// Path returns the path of a file of the workspace.
func (w Workspace) Path(name string) string { return filepath.Join(w.Dir, name) }

// InTree returns the workspace seen from a worktree of its repository:
// the gates run there, and failures are signed against it.
func (w Workspace) InTree(dir string) Workspace {
	w.root = dir
	return w
}

// Root returns the repository the workspace belongs to: its parent; or
// the worktree of the agent it works for (InTree).
func (w Workspace) Root() string {
	if w.root != "" {
		return w.root
	}
	abs, err := filepath.Abs(w.Dir)
	if err != nil {
		return filepath.Dir(w.Dir)
	}
	return filepath.Dir(abs)
}

// LockTimeoutEnv names the environment variable that bounds the wait for
// the workspace's lock (a Go duration; DefaultLockTimeout when unset).
const LockTimeoutEnv = "ORCHESTRATE_LOCK_TIMEOUT"

// DefaultLockTimeout is how long a command waits for the workspace's lock
// before it gives up.
const DefaultLockTimeout = 2 * time.Minute

// tempKinds are the files written under the lock whose temporary files a
// crash may leave: the next holder of the lock removes them.
var tempKinds = []string{QueueFile, StateFile, AnalyticsFile, AnalyticsStampFile, intentFile, EpochsFile, LaunchesFile}

// Lock takes the workspace's lock, waiting until ctx ends or the lock
// timeout (LockTimeoutEnv) passes. After a second of waiting, Notify hears
// who holds it. Once it holds the lock, it removes the temporary files a
// crashed command left, and completes a check that a crash interrupted.
func (w Workspace) Lock(ctx context.Context) (func(), error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	return w.lock(ctx)
}

// LockNew is Lock for orchestrate init, which makes a workspace of a
// directory that is not one yet.
func (w Workspace) LockNew(ctx context.Context) (func(), error) {
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w (run orchestrate init)", w.Dir, ErrNoWorkspace)
	}
	return w.lock(ctx)
}

func (w Workspace) lock(ctx context.Context) (func(), error) {
	timeout := DefaultLockTimeout
	if v := os.Getenv(LockTimeoutEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s=%q: not a duration (such as 30s or 2m)", LockTimeoutEnv, v)
		}
		timeout = d
	}
	opt := fsx.LockOptions{Timeout: timeout}
	if w.Notify != nil {
		opt.Waiting = func(holder string) {
			w.Notify(fmt.Sprintf("waiting for %s: held by %s", w.Path(LockFile), holder))
		}
	}
	unlock, err := fsx.LockWith(ctx, w.Path(LockFile), opt)
	if err != nil {
		return nil, err
	}
	if err := fsx.RemoveStaleTemps(w.Dir, tempKinds...); err != nil {
		w.warn(fmt.Errorf("removing temporary files left by a crash: %w", err))
	}
	// And those of the current run's artifacts.
	// Neither runs/ nor the run's directory may be a link: what lies
	// behind one is not the workspace's.
	if dir := filepath.Join(w.Path(RunsDir), w.runID()); fsx.CheckDir(w.Path(RunsDir)) == nil && fsx.CheckDir(dir) == nil {
		if err := fsx.RemoveAllStaleTemps(dir); err != nil {
			w.warn(fmt.Errorf("removing temporary files left by a crash: %w", err))
		}
	}
	if err := w.recoverCheck(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// ErrNoWorkspace is returned when the workspace directory does not exist,
// or is not a workspace.
var ErrNoWorkspace = errors.New("no workspace")

// Exists returns an error matching ErrNoWorkspace unless the workspace
// directory exists and holds a workspace's files.
func (w Workspace) Exists() error { return w.mustExist() }

// mustExist refuses a directory that is not a workspace: one that holds
// none of config.yaml, issue_queue.md and session_state.md, so that a
// mistaken --dir (/, a home directory) gets nothing written into it.
func (w Workspace) mustExist() error {
	fi, err := os.Stat(w.Dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: %w (run orchestrate init)", w.Dir, ErrNoWorkspace)
	}
	for _, name := range []string{ConfigFile, QueueFile, StateFile} {
		if _, err := os.Lstat(w.Path(name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%s: %w: it has no %s, %s or %s (run orchestrate init there, or give the right --dir)",
		w.Dir, ErrNoWorkspace, ConfigFile, QueueFile, StateFile)
}

// warn reports an error after the commit point through Notify, or returns
// it when there is no one to tell.
func (w Workspace) warn(err error) error {
	if err == nil {
		return nil
	}
	if w.Notify == nil {
		return err
	}
	w.Notify("warning: " + err.Error())
	return nil
}

// RunDir makes runs/<run-id>/ in the workspace, never through a symbolic
// link, and returns its path.
func (w Workspace) RunDir(run string) (string, error) {
	if err := w.mustExist(); err != nil {
		return "", err
	}
	dir, err := fsx.MkdirBeneath(w.Dir, filepath.Join(RunsDir, run))
	if err != nil {
		return "", err
	}
	// What a crash left of the run's artifacts half written.
	if err := fsx.RemoveAllStaleTemps(dir); err != nil {
		w.warn(fmt.Errorf("removing temporary files left by a crash: %w", err))
	}
	return dir, nil
}

// SentinelExists reports whether the no_auto_retry sentinel is there.
func (w Workspace) SentinelExists() bool {
	_, err := os.Stat(w.Path(SentinelFile))
	return err == nil
}
