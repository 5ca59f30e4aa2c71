package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchedFiles are the files of a workspace whose changes Watch reports:
// the ones a person or an agent edits, and the history the analytics come
// from. analytics.html, the lock and every temporary file are left out, so
// a refresh that writes them does not cause another.
var WatchedFiles = []string{QueueFile, StateFile, ConfigFile, HistoryFile, SentinelFile}

// WatchOptions tunes Watch.
type WatchOptions struct {
	// Debounce is the quiet time after the last event of a burst before
	// the refresh: an editor's save is several events (truncate, write,
	// rename, chmod), and so is a tool's atomic replace.
	Debounce time.Duration
	// MaxDelay bounds how long a steady stream of events can hold a
	// refresh back; zero means 10 × Debounce, at least one second.
	MaxDelay time.Duration
	// Notice, if not nil, is told what a person watching should know and
	// that is not a refresh: the directory went away or came back, an
	// error of the watcher.
	Notice func(msg string)
}

// dirPoll is how often Watch looks for a workspace directory that went
// away: inotify cannot watch a path that does not exist.
const dirPoll = 250 * time.Millisecond

// Watch watches the workspace directory and calls refresh once the
// watcher is in place (with nil: nothing changed yet, show everything),
// then after each burst of changes to WatchedFiles, with the names that
// changed, sorted. It watches the directory, not the files, so a file
// that is deleted and created again, or replaced by a rename, as editors
// and this tool save, is still seen; if the directory itself goes away,
// Watch waits for it to come back and then reports every file changed.
//
// Watch returns nil when ctx ends, the error of refresh if it returns
// one, and an error if the watcher cannot be set up.
func Watch(ctx context.Context, w Workspace, opt WatchOptions, refresh func(changed []string) error) error {
	// Watching writes nothing of its own until history.csv is there: a
	// directory about to become a workspace may be watched.
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: %w (run orchestrate init)", w.Dir, ErrNoWorkspace)
	}
	dir := filepath.Clean(w.Dir)
	notice := opt.Notice
	if notice == nil {
		notice = func(string) {}
	}
	maxDelay := opt.MaxDelay
	if maxDelay <= 0 {
		maxDelay = max(10*opt.Debounce, time.Second)
	}

	watcher, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	defer watcher.Close()
	if err := watcher.Add(dir); err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	if err := refresh(nil); err != nil {
		return err
	}

	var (
		pending    = map[string]bool{}
		burstStart time.Time // the first event not yet refreshed
		timer      = time.NewTimer(time.Hour)
		fire       <-chan time.Time // timer.C while a refresh is due
		poll       *time.Ticker     // while the directory is gone
		pollC      <-chan time.Time
	)
	timer.Stop()
	defer timer.Stop()
	// arm schedules the refresh Debounce after now, but no later than
	// maxDelay after the burst began.
	arm := func(names ...string) {
		for _, n := range names {
			pending[n] = true
		}
		now := time.Now()
		if fire == nil {
			burstStart = now
		}
		timer.Reset(min(opt.Debounce, burstStart.Add(maxDelay).Sub(now)))
		fire = timer.C
	}
	// lost holds the refreshes back while the directory is gone: its files
	// are going or gone, and showing that helps no one. When it is back,
	// every file counts as changed.
	lost := func() {
		watcher.Remove(dir) // inotify drops it by itself; other backends may not
		timer.Stop()
		fire = nil
		clear(pending)
		if poll == nil {
			notice(fmt.Sprintf("%s is gone; waiting for it to come back", dir))
			poll = time.NewTicker(dirPoll)
			pollC = poll.C
		}
	}
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return nil

		case ev, ok := <-watcher.Events:
			if !ok {
				return nil
			}
			if filepath.Clean(ev.Name) == dir {
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					lost()
				}
				continue
			}
			if name := watchedName(dir, ev); name != "" && poll == nil {
				arm(name)
			}

		case err, ok := <-watcher.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were dropped: anything may have changed.
				arm(WatchedFiles...)
				continue
			}
			notice(fmt.Sprintf("watching %s: %v", dir, err))

		case <-pollC:
			if err := watcher.Add(dir); err != nil {
				continue
			}
			poll.Stop()
			poll, pollC = nil, nil
			notice(fmt.Sprintf("%s is back", dir))
			arm(WatchedFiles...)

		case <-fire:
			fire = nil
			changed := make([]string, 0, len(pending))
			for n := range pending {
				changed = append(changed, n)
			}
			clear(pending)
			slices.Sort(changed)
			if err := refresh(changed); err != nil {
				return err
			}
		}
	}
}

// watchedName returns the name of the watched file ev is about, or "" for
// an event to ignore: another file (temporary files, the tool's own and
// editors', have other names), or a change of mode alone, which some
// systems send for no edit at all.
func watchedName(dir string, ev fsnotify.Event) string {
	name := filepath.Base(ev.Name)
	if ev.Op == fsnotify.Chmod || filepath.Dir(filepath.Clean(ev.Name)) != dir || !slices.Contains(WatchedFiles, name) {
		return ""
	}
	return name
}
