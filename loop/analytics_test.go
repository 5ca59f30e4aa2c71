package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

func newTestWorkspace(t *testing.T, config string) Workspace {
	t.Helper()
	w := Workspace{Dir: filepath.Join(t.TempDir(), DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path(ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// The page is current only for the history it was made from; a refresh
// makes it so, once; a background refresh leaves it to the process that
// holds the lock.
func TestAnalyticsCurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTestWorkspace(t, "gates: []\n")
	if !w.AnalyticsCurrent() {
		t.Errorf("no history and no page: not current; want current")
	}
	if _, err := w.StartSession(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path(AnalyticsFile)); err == nil {
		t.Errorf("session start wrote %s; want it left to a refresh", AnalyticsFile)
	}
	if w.AnalyticsCurrent() {
		t.Errorf("a history and no page: current; want stale")
	}
	if wrote, err := w.RefreshAnalytics(ctx, false); err != nil || !wrote {
		t.Fatalf("RefreshAnalytics = %v, %v; want a page written", wrote, err)
	}
	if !w.AnalyticsCurrent() {
		t.Errorf("after a refresh: stale; want current")
	}
	if wrote, err := w.RefreshAnalytics(ctx, false); err != nil || wrote {
		t.Errorf("RefreshAnalytics of a current page = %v, %v; want nothing written", wrote, err)
	}
	if wrote, err := w.RefreshAnalytics(ctx, true); err != nil || !wrote {
		t.Errorf("RefreshAnalytics(force) = %v, %v; want a page written", wrote, err)
	}

	// One more row, even in the same instant, makes it stale.
	if err := w.withLock(ctx, func() error { return w.appendHistory(analytics.Event{Event: analytics.EventAbort}) }); err != nil {
		t.Fatal(err)
	}
	if w.AnalyticsCurrent() {
		t.Errorf("after an append: current; want stale")
	}

	// While another process makes the page, a background refresh leaves
	// it alone; then it makes it.
	unlock, err := fsx.TryLock(w.Path(AnalyticsLockFile))
	if err != nil {
		t.Fatal(err)
	}
	if !refreshing(w) {
		t.Errorf("AnalyticsRefreshing = false while the lock is held")
	}
	if err := w.RefreshAnalyticsIfIdle(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if w.AnalyticsCurrent() {
		t.Errorf("RefreshAnalyticsIfIdle made the page while another process held the lock")
	}
	unlock()
	if err := w.RefreshAnalyticsIfIdle(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if !w.AnalyticsCurrent() || refreshing(w) {
		t.Errorf("after RefreshAnalyticsIfIdle: current %v, refreshing %v; want current, idle", w.AnalyticsCurrent(), refreshing(w))
	}
	page, err := os.ReadFile(w.Path(AnalyticsFile))
	if err != nil || !strings.Contains(string(page), "<html") {
		t.Errorf("analytics.html: %v; want a page", err)
	}

	// A page from another history (a stamp that does not match) is stale.
	if err := os.WriteFile(w.Path(AnalyticsStampFile), []byte("1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w.AnalyticsCurrent() {
		t.Errorf("a stamp of another history: current; want stale")
	}
}

// A Stop hook and a record append history and leave the page alone; a run

// Once a background refresh lets go of the page's lock, it touches the
// workspace no more: whoever waited for the lock (a test, a script that
// copies the workspace) may remove it at once. Whether to go round again
// is asked under the lock; before, it was asked after, and the refresh
// found the history gone and made the lock file again in a directory
// being removed ("directory not empty", under load).
func TestRefreshDoneWhenTheLockIsFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTestWorkspace(t, "gates: []\n")
	if _, err := w.StartSession(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsx.TryLock(w.Path(AnalyticsLockFile))
	if err != nil {
		t.Fatal(err)
	}
	// The waiter: as soon as the lock is free, it removes the workspace,
	// and is caught half-way (the history gone, the page not yet).
	var left string
	held := func() {
		unlock()
		os.Remove(w.Path(HistoryFile))
		left = listing(t, w.Dir)
	}
	if err := w.RefreshAnalyticsIfIdle(ctx, held); err != nil {
		t.Fatal(err)
	}
	if now := listing(t, w.Dir); now != left {
		t.Errorf("the refresh wrote after it let go of the lock:\nthen %s\nnow  %s", left, now)
	}
}

// A background refresh that fails notes why under the page's lock: the
// page made by whoever waited for the lock removes the note. Written after
// the lock was let go, the note outlived that page, and status said the
// page was not up to date when it was.
func TestRefreshFailureNotedUnderTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTestWorkspace(t, "gates: []\n")
	if _, err := w.StartSession(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	// A named pipe where the history is: the refresh fails (and does not
	// block on it).
	if err := os.Remove(w.Path(HistoryFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(w.Path(HistoryFile), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsx.TryLock(w.Path(AnalyticsLockFile))
	if err != nil {
		t.Fatal(err)
	}
	// The waiter: a person puts the history right and makes the page as
	// soon as the lock is free.
	var made error
	held := func() {
		unlock()
		if err := os.Remove(w.Path(HistoryFile)); err != nil {
			made = err
			return
		}
		_, made = w.RefreshAnalytics(ctx, true)
	}
	err = w.RefreshAnalyticsIfIdle(ctx, held)
	if err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("RefreshAnalyticsIfIdle on a named pipe: %v; want its error", err)
	}
	if made != nil {
		t.Fatalf("the page made after the failure: %v", made)
	}
	if note := w.AnalyticsFailure(); note != "" {
		t.Errorf("after a page made since the failure, the failure is still noted: %s", note)
	}
	if !w.AnalyticsCurrent() {
		t.Errorf("the page made since the failure is not current")
	}
}

// listing is dir's files, each with its size and time.
func listing(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d ", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

// makes it at its end.
func TestHotPathsLeaveThePage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTestWorkspace(t, "agent:\n  command: 'true'\ngates:\n  - name: unit\n    command: 'echo FAIL; exit 1'\n")
	res, err := w.StopHook(ctx, time.Now, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != HookBlocked {
		t.Fatalf("StopHook = %s; want %s", res.Outcome, HookBlocked)
	}
	if _, err := w.Record(ctx, time.Now(), res.Retried[0].ID, Failure{Gate: "unit", Output: []byte("FAIL")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Path(AnalyticsFile)); err == nil {
		t.Errorf("the Stop hook or record wrote %s", AnalyticsFile)
	}
	if w.AnalyticsCurrent() {
		t.Errorf("after a hook and a record: current; want stale")
	}
	if _, err := w.Run(ctx, RunOptions{Task: "x", MaxLoops: 1}); err != nil {
		t.Fatal(err)
	}
	if !w.AnalyticsCurrent() {
		t.Errorf("after a run: stale; want current")
	}
}

// refreshing reports whether a process is making w's page now: one holds
// its lock.
func refreshing(w Workspace) bool {
	unlock, err := fsx.TryLock(w.Path(AnalyticsLockFile))
	if err != nil {
		return true
	}
	unlock()
	return false
}
