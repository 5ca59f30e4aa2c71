package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// waitAnalytics waits until no background orchestrate analytics --if-stale
// is making the page of the workspace at ws, so that a test's directory is
// not removed under it. It returns once the page is current and no process
// holds its lock, or, for a history the page cannot be made from, once the
// lock has been free for a while.
func waitAnalytics(ws string) {
	w := loop.Workspace{Dir: ws}
	start := time.Now()
	for time.Since(start) < time.Minute {
		if !w.AnalyticsRefreshing() && (w.AnalyticsCurrent() || time.Since(start) > 3*time.Second) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitAllAnalytics is waitAnalytics for every workspace below root.
func waitAllAnalytics(root string) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator)) > 4 {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, loop.HistoryFile)); err == nil {
			waitAnalytics(path)
		}
		return nil
	})
}

// cleanupAnalytics makes the test wait, at its end, for the background
// refreshes of the workspace at ws (registered after t.TempDir, it runs
// before the directory is removed).
func cleanupAnalytics(t testing.TB, ws string) {
	t.Cleanup(func() { waitAnalytics(ws) })
}
