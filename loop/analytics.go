package loop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

// analytics.html is made from the whole history, which grows without end,
// so no command that appends to the history makes it: a Stop hook, a
// record, a check or an issue change costs the same on a long history as
// on a short one, and none of them holds the workspace's lock any longer
// for it. The page is brought up to date instead
//
//   - by orchestrate run, once, as its last step (Run);
//   - by orchestrate analytics, and by watch when history.csv changes;
//   - after every other command that appended history, by a process of its
//     own in the background (orchestrate analytics --if-stale), which the
//     command starts and does not wait for.
//
// AnalyticsStampFile says which history the page shows: the size and the
// modification time history.csv had when the page was made. The page is
// current while history.csv still has them. AnalyticsLockFile lets one
// process make the page at a time, and never the workspace's lock.
// AnalyticsErrorFile says why the last refresh in the background failed
// (status shows it); the next page made removes it.
const (
	AnalyticsLockFile  = ".analytics.lock"
	AnalyticsStampFile = ".analytics.stamp"
	AnalyticsErrorFile = ".analytics.error"
)

// historyStamp identifies the state of history.csv: its size and
// modification time, or "none" when there is none.
func (w Workspace) historyStamp() (string, error) {
	fi, err := os.Stat(w.Path(HistoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "none\n", nil
	}
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "\n", nil
}

// AnalyticsCurrent reports whether analytics.html shows history.csv as it
// is. A workspace with neither is current: it has nothing to show.
func (w Workspace) AnalyticsCurrent() bool {
	stamp, err := w.historyStamp()
	if err != nil {
		return false
	}
	if _, err := os.Stat(w.Path(AnalyticsFile)); err != nil {
		return errors.Is(err, fs.ErrNotExist) && stamp == "none\n"
	}
	data, _, err := fsx.ReadFileMax(w.Path(AnalyticsStampFile), 4<<10)
	return err == nil && string(data) == stamp
}

// RefreshAnalytics makes analytics.html from history.csv, or, unless
// force, leaves it when it is current. It waits for a refresh in progress
// elsewhere, never for the workspace's lock, and reports whether it wrote
// the page.
func (w Workspace) RefreshAnalytics(ctx context.Context, force bool) (bool, error) {
	if err := w.mustExist(); err != nil {
		return false, err
	}
	unlock, err := fsx.Lock(ctx, w.Path(AnalyticsLockFile))
	if err != nil {
		return false, err
	}
	defer unlock()
	if !force && w.AnalyticsCurrent() {
		return false, nil
	}
	return true, w.generateAnalytics()
}

// RefreshAnalyticsIfIdle is RefreshAnalytics for a process in the
// background: it returns at once when another process is refreshing, as
// that one looks at the history again when it is done, and it goes on
// until the page is current, or ctx ends (its deadline, a SIGTERM). A
// failure is noted in AnalyticsErrorFile, where status finds it. held,
// when not nil, releases AnalyticsLockFile, which the caller already holds
// (handed over by the process that started it): the first look is made
// under it.
func (w Workspace) RefreshAnalyticsIfIdle(ctx context.Context, held func()) error {
	err := w.refreshIfIdle(ctx, held)
	if err != nil {
		note := time.Now().UTC().Format(time.RFC3339) + " " + textclean.Line(err.Error()) + "\n"
		if werr := fsx.WriteFile(w.Path(AnalyticsErrorFile), []byte(note), 0o644); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	return err
}

func (w Workspace) refreshIfIdle(ctx context.Context, held func()) error {
	if held == nil && w.AnalyticsCurrent() {
		return nil
	}
	for {
		unlock, err := held, error(nil)
		if held == nil {
			unlock, err = fsx.TryLock(w.Path(AnalyticsLockFile))
		}
		held = nil
		if errors.Is(err, fsx.ErrLocked) {
			return nil
		}
		if err != nil {
			return err
		}
		// Looked at again under the lock: another process may have made
		// the page between the two looks.
		if !w.AnalyticsCurrent() {
			done := make(chan error, 1)
			go func() { done <- w.generateAnalytics() }()
			select {
			case err = <-done:
			case <-ctx.Done():
				// The page is written whole or not at all: leaving now
				// loses nothing but this refresh.
				err = fmt.Errorf("making %s: %w", AnalyticsFile, context.Cause(ctx))
			}
		}
		// Whether to go round again (rows came while the page was made)
		// is asked under the lock too: once it is free, this process
		// touches the workspace no more, and whoever waited for the lock
		// may remove it.
		again := err == nil && !w.AnalyticsCurrent()
		unlock()
		if !again {
			return err
		}
	}
}

// AnalyticsFailure is why the last refresh in the background failed, with
// its time, or "" when the page made since has none to report.
func (w Workspace) AnalyticsFailure() string {
	data, _, err := fsx.ReadFileMax(w.Path(AnalyticsErrorFile), 4<<10)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// generateAnalytics makes the page and stamps it; the caller holds
// AnalyticsLockFile. The stamp is taken before the history is read, so
// that rows appended meanwhile leave the page stale, never passed for
// current. It needs no sync: a stamp lost in a crash makes one more
// refresh, and the page it names was synced before it was written.
func (w Workspace) generateAnalytics() error {
	stamp, err := w.historyStamp()
	if err != nil {
		return fmt.Errorf("generating analytics: %w", err)
	}
	path := w.Path(HistoryFile)
	var srcs []analytics.Source
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	switch {
	case err == nil:
		defer f.Close()
		srcs = append(srcs, analytics.Source{Name: path, R: bufio.NewReaderSize(f, 256<<10)})
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("generating analytics: reading history: %w", err)
	}
	if _, err := analytics.Generate(srcs, w.Path(AnalyticsFile), analytics.RenderOptions{Source: path}); err != nil {
		return fmt.Errorf("generating analytics: %w", err)
	}
	if err := fsx.WriteFile(w.Path(AnalyticsStampFile), []byte(stamp), 0o644); err != nil {
		return fmt.Errorf("generating analytics: %w", err)
	}
	if err := os.Remove(w.Path(AnalyticsErrorFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
