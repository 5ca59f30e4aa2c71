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
	s := &watching{dir: filepath.Clean(w.Dir), notice: opt.Notice, debounce: opt.Debounce, maxDelay: opt.MaxDelay, pending: map[string]bool{}}
	if s.notice == nil {
		s.notice = func(string) {}
	}
	if s.maxDelay <= 0 {
		s.maxDelay = max(10*opt.Debounce, time.Second)
	}

	var err error
	if s.watcher, err = fsnotify.NewWatcher(); err != nil {
		return fmt.Errorf("watching %s: %w", s.dir, err)
	}
	defer s.watcher.Close()
	if err := s.watcher.Add(s.dir); err != nil {
		return fmt.Errorf("watching %s: %w", s.dir, err)
	}
	if err := refresh(nil); err != nil {
		return err
	}

	s.timer = time.NewTimer(time.Hour)
	s.timer.Stop()
	defer s.timer.Stop()
	defer func() {
		if s.poll != nil {
			s.poll.Stop()
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return nil

		case ev, ok := <-s.watcher.Events:
			if !ok {
				return nil
			}
			s.event(ev)

		case err, ok := <-s.watcher.Errors:
			if !ok {
				return nil
			}
			s.watchError(err)

		case <-s.pollC:
			s.back()

		case <-s.fire:
			if err := refresh(s.due()); err != nil {
				return err
			}
		}
	}
}

// watching is a Watch at work: the refresh it owes, and whether the
// directory is gone.
type watching struct {
	dir                string
	watcher            *fsnotify.Watcher
	notice             func(msg string)
	debounce, maxDelay time.Duration

	pending    map[string]bool
	burstStart time.Time // the first event not yet refreshed
	timer      *time.Timer
	fire       <-chan time.Time // timer.C while a refresh is due
	poll       *time.Ticker     // while the directory is gone
	pollC      <-chan time.Time
}

// event takes one event of the directory.
func (s *watching) event(ev fsnotify.Event) {
	if filepath.Clean(ev.Name) == s.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			s.lost()
		}
		return
	}
	if name := watchedName(s.dir, ev); name != "" && s.poll == nil {
		s.arm(name)
	}
}

// watchError takes one error of the watcher.
func (s *watching) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// Events were dropped: anything may have changed.
		s.arm(WatchedFiles...)
		return
	}
	s.notice(fmt.Sprintf("watching %s: %v", s.dir, err))
}

// arm schedules the refresh Debounce after now, but no later than
// maxDelay after the burst began.
func (s *watching) arm(names ...string) {
	for _, n := range names {
		s.pending[n] = true
	}
	now := time.Now()
	if s.fire == nil {
		s.burstStart = now
	}
	s.timer.Reset(min(s.debounce, s.burstStart.Add(s.maxDelay).Sub(now)))
	s.fire = s.timer.C
}

// lost holds the refreshes back while the directory is gone: its files
// are going or gone, and showing that helps no one. When it is back,
// every file counts as changed.
func (s *watching) lost() {
	s.watcher.Remove(s.dir) // inotify drops it by itself; other backends may not
	s.timer.Stop()
	s.fire = nil
	clear(s.pending)
	if s.poll == nil {
		s.notice(fmt.Sprintf("%s is gone; waiting for it to come back", s.dir))
		s.poll = time.NewTicker(dirPoll)
		s.pollC = s.poll.C
	}
}

// back watches the directory again once it is there, every file changed.
func (s *watching) back() {
	if err := s.watcher.Add(s.dir); err != nil {
		return
	}
	s.poll.Stop()
	s.poll, s.pollC = nil, nil
	s.notice(fmt.Sprintf("%s is back", s.dir))
	s.arm(WatchedFiles...)
}

// due returns the names the refresh that is due reports, sorted, and
// starts the next burst.
func (s *watching) due() []string {
	s.fire = nil
	changed := make([]string, 0, len(s.pending))
	for n := range s.pending {
		changed = append(changed, n)
	}
	clear(s.pending)
	slices.Sort(changed)
	return changed
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
