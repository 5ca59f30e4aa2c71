package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/session"
)

// StartSession begins a run: a new run ID, run_started now,
// total_auto_retries back to 0, last_retry_reason null.
func (w Workspace) StartSession(ctx context.Context, now time.Time) (string, error) {
	id := newRunID(now)
	unlock, err := w.Lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	err = session.Update(w.Path(StateFile), func(s *session.State) error {
		s.Set(session.RunID, id)
		s.Set(session.RunStarted, now.UTC().Format(time.RFC3339))
		s.Set(session.TotalAutoRetries, "0")
		s.Set(session.LastRetryReason, "null")
		return nil
	})
	if err != nil {
		return "", err
	}
	if cfg, err := w.Config(); err == nil {
		if err := w.warn(w.pruneRuns(cfg.KeepRuns, id)); err != nil {
			return id, err
		}
	}
	return id, w.appendHistory(analytics.Event{Time: now, RunID: id, Event: analytics.EventRunStart})
}

// newRunID returns a run ID: the time, and random bits so that two runs
// started in the same second differ.
func newRunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b)
}
