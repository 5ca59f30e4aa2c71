package loop

import (
	"bufio"
	"cmp"
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
	"github.com/orchestrate-dev/orchestrate/remote"
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
//
// The page shows this clone's history.csv and, once made with a git
// remote the machines share (RefreshAnalyticsFrom: analytics --remote, the
// end of run --remote), every other host's history on this clone's view
// of that remote's queue (remote.SeenHistories; no round trip), read with
// it as one (analytics.ComputeAll). This clone's own history on the
// remote is not read: its history.csv is newer. The stamp says which:
// its first line is history.csv's, its second, when the page shows a
// remote's, "remote NAME COMMIT", the version of the queue it shows. Every
// refresh keeps to what the page shows until it is made with another
// remote, or with none.
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

// pageStamp is the stamp of a page made now from history.csv and, when
// name is not "", the hosts' histories on this clone's view of the remote
// name.
func (w Workspace) pageStamp(ctx context.Context, name string) (string, error) {
	stamp, err := w.historyStamp()
	if err != nil || name == "" {
		return stamp, err
	}
	r, err := remote.New(w.Root(), name)
	if err != nil {
		return "", err
	}
	sha, err := r.SeenQueue(ctx)
	if err != nil {
		return "", err
	}
	return stamp + "remote " + name + " " + cmp.Or(sha, "none") + "\n", nil
}

// pageRemote is the remote whose hosts' histories the page shows, as its
// stamp says; "" for none.
func (w Workspace) pageRemote() string {
	data, _, err := fsx.ReadFileMax(w.Path(AnalyticsStampFile), 4<<10)
	if err != nil {
		return ""
	}
	_, second, _ := strings.Cut(string(data), "\n")
	if f := strings.Fields(second); len(f) == 3 && f[0] == "remote" {
		return f[1]
	}
	return ""
}

// AnalyticsCurrent reports whether analytics.html shows history.csv as it
// is (and the hosts' histories it shows, as this clone last saw them). A
// workspace with neither is current: it has nothing to show.
func (w Workspace) AnalyticsCurrent() bool {
	return w.pageCurrent(context.Background(), w.pageRemote())
}

// pageCurrent reports whether analytics.html is the page of history.csv
// and of the hosts' histories of the remote name ("" for none).
func (w Workspace) pageCurrent(ctx context.Context, name string) bool {
	if _, err := os.Stat(w.Path(AnalyticsFile)); err != nil {
		stamp, serr := w.historyStamp()
		return errors.Is(err, fs.ErrNotExist) && serr == nil && stamp == "none\n"
	}
	stamp, err := w.pageStamp(ctx, name)
	if err != nil {
		return false
	}
	data, _, err := fsx.ReadFileMax(w.Path(AnalyticsStampFile), 4<<10)
	return err == nil && string(data) == stamp
}

// RefreshAnalytics makes analytics.html from history.csv (and the hosts'
// histories the page shows), or, unless force, leaves it when it is
// current. It waits for a refresh in progress elsewhere, never for the
// workspace's lock, and reports whether it wrote the page.
func (w Workspace) RefreshAnalytics(ctx context.Context, force bool) (bool, error) {
	m, err := w.refreshPage(ctx, w.pageRemote(), force)
	return m != nil, err
}

// RefreshAnalyticsFrom makes analytics.html from history.csv and, with r,
// every other host's history on this clone's view of r's queue; without,
// from history.csv alone. Later refreshes keep to it. It returns the
// page's numbers (empty when there is no history).
func (w Workspace) RefreshAnalyticsFrom(ctx context.Context, r *remote.Remote) (*analytics.Metrics, error) {
	name := ""
	if r != nil {
		name = r.Name()
	}
	return w.refreshPage(ctx, name, true)
}

// refreshPage makes the page of history.csv and of the hosts' histories
// of the remote name, and returns its numbers (empty for no history),
// unless it is current and not force: then it returns nil.
func (w Workspace) refreshPage(ctx context.Context, name string, force bool) (*analytics.Metrics, error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	unlock, err := fsx.Lock(ctx, w.Path(AnalyticsLockFile))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if !force && w.pageCurrent(ctx, name) {
		return nil, nil
	}
	m, err := w.generateAnalytics(ctx, name)
	if err == nil && m == nil {
		m = &analytics.Metrics{}
	}
	return m, err
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
	if held == nil && w.AnalyticsCurrent() {
		return nil
	}
	name := w.pageRemote()
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
			return w.noteRefreshFailure(err)
		}
		// Looked at again under the lock: another process may have made
		// the page between the two looks.
		if !w.pageCurrent(ctx, name) {
			done := make(chan error, 1)
			go func() {
				_, err := w.generateAnalytics(ctx, name)
				done <- err
			}()
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
		if err != nil {
			// Noted under the lock too: the page that whoever takes it
			// next makes removes the note (generateAnalytics), which a
			// note written after would outlive.
			err = w.noteRefreshFailure(err)
		}
		again := err == nil && !w.AnalyticsCurrent()
		unlock()
		if !again {
			return err
		}
	}
}

// noteRefreshFailure writes why a refresh in the background failed to
// AnalyticsErrorFile, with the time, and returns err (joined with the
// write's error, if that failed too).
func (w Workspace) noteRefreshFailure(err error) error {
	note := time.Now().UTC().Format(time.RFC3339) + " " + textclean.Line(err.Error()) + "\n"
	if werr := fsx.WriteFile(w.Path(AnalyticsErrorFile), []byte(note), 0o644); werr != nil {
		return errors.Join(err, werr)
	}
	return err
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

// generateAnalytics makes the page of history.csv and of the hosts'
// histories of the remote name ("" for none), and stamps it; the caller
// holds AnalyticsLockFile. The stamp is taken before the histories are
// read, so that rows appended meanwhile leave the page stale, never passed
// for current. It needs no sync: a stamp lost in a crash makes one more
// refresh, and the page it names was synced before it was written. It
// returns the page's numbers, nil when there is no history.
func (w Workspace) generateAnalytics(ctx context.Context, name string) (*analytics.Metrics, error) {
	stamp, err := w.pageStamp(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("generating analytics: %w", err)
	}
	srcs, what, done, err := w.PageHistories(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("generating analytics: %w", err)
	}
	defer done()
	m, err := analytics.Generate(srcs, w.Path(AnalyticsFile), analytics.RenderOptions{Source: what})
	if err != nil {
		return nil, fmt.Errorf("generating analytics: %w", err)
	}
	if err := fsx.WriteFile(w.Path(AnalyticsStampFile), []byte(stamp), 0o644); err != nil {
		return nil, fmt.Errorf("generating analytics: %w", err)
	}
	if err := os.Remove(w.Path(AnalyticsErrorFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return m, nil
}

// PageHistories opens the histories of the page: history.csv, if there is
// one, and, when name is not "", every other host's history on this
// clone's view of the remote name's queue (as its last fetch or sync left
// it), which the page leaves out, saying why, when it cannot read one.
// what names them all; done closes them.
func (w Workspace) PageHistories(ctx context.Context, name string) (srcs []analytics.Source, what string, done func(), err error) {
	path := w.Path(HistoryFile)
	what, done = path, func() {}
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	switch {
	case err == nil:
		srcs = append(srcs, analytics.Source{Name: path, R: bufio.NewReaderSize(f, 256<<10)})
		done = func() { f.Close() }
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", nil, fmt.Errorf("reading history: %w", err)
	}
	if name == "" {
		return srcs, what, done, nil
	}
	hs, self, err := w.seenHistories(ctx, name)
	if err != nil {
		done()
		return nil, "", nil, err
	}
	local := done
	done = func() { local(); hs.Close() }
	n := 0
	for _, h := range hs.Hosts {
		if h.Host == self {
			continue // its history.csv is newer
		}
		srcs = append(srcs, analytics.Source{Name: name + ":" + remote.HistoryDir + "/" + h.Host, R: hs.Reader(h), Optional: true})
		n++
	}
	return srcs, fmt.Sprintf("%s and %d other hosts' histories on %s", path, n, name), done, nil
}

// seenHistories lists the hosts' histories on this clone's view of the
// remote name's queue, and this clone's host name ("" when it has none).
func (w Workspace) seenHistories(ctx context.Context, name string) (*remote.Histories, string, error) {
	r, err := remote.New(w.Root(), name)
	if err != nil {
		return nil, "", err
	}
	self, err := r.Host(ctx)
	if err != nil {
		return nil, "", err
	}
	hs, err := r.SeenHistories(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("reading the histories on %s: %w", name, err)
	}
	return hs, self, nil
}
