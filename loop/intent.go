package loop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// intentFile holds a check's two-file step while it is under way: written
// before the queue, removed after the state. A crash in between leaves it,
// and the next command to take the lock completes the step (see
// recoverCheck), so that the queue's Retry-Counts and the state's
// total_auto_retries never disagree for long.
const intentFile = ".check-intent.json"

// checkIntent is what a check that triggers a retry is about to write.
type checkIntent struct {
	RunID string `json:"run_id"`
	// Time is the check's, for the history rows a recovery writes.
	Time string `json:"time,omitempty"`
	// From and To are total_auto_retries before and after.
	From   int    `json:"from"`
	To     int    `json:"to"`
	Reason string `json:"last_retry_reason"`
	// Retried is each retried issue's Retry-Count once the queue is written.
	Retried map[string]int `json:"retried"`
}

func newIntent(now time.Time, run string, from int, retried []IssueRef) *checkIntent {
	in := &checkIntent{RunID: run, Time: now.UTC().Format(analytics.TimeFormat), From: from, To: from + 1,
		Reason: retryReason(retried), Retried: map[string]int{}}
	for _, r := range retried {
		in.Retried[r.ID] = r.RetryCount
	}
	return in
}

func (in *checkIntent) same(o *checkIntent) bool {
	if in == nil || o == nil || in.Reason != o.Reason || len(in.Retried) != len(o.Retried) {
		return false
	}
	for id, n := range in.Retried {
		if o.Retried[id] != n {
			return false
		}
	}
	return true
}

func (w Workspace) writeIntent(in *checkIntent) error {
	data, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	if err := fsx.WriteFile(w.Path(intentFile), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", w.Path(intentFile), err)
	}
	return nil
}

// dropIntent removes the intent once both files are written, or when the
// queue was not.
func (w Workspace) dropIntent() error {
	err := os.Remove(w.Path(intentFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fsx.Step("removed " + w.Path(intentFile))
	return fsx.SyncDir(w.Dir)
}

// recoverCheck completes a check that a crash stopped between its queue
// write and its state write: when the queue holds the check's Retry-Counts
// and the state still the old total of the same run, the state gets the
// new total and reason. When the queue does not hold them, the check never
// happened, and the intent goes. The caller holds the lock.
func (w Workspace) recoverCheck() error {
	data, exists, err := fsx.ReadFile(w.Path(intentFile))
	if err != nil || !exists {
		return err
	}
	var in checkIntent
	if json.Unmarshal(data, &in) == nil && len(in.Retried) > 0 {
		q, err := queue.Load(w.Path(QueueFile))
		if err != nil {
			return err
		}
		if queueHolds(q, in.Retried) {
			err := session.Update(w.Path(StateFile), func(s *session.State) error {
				if runIDOf(s) == in.RunID && s.TotalAutoRetries() == in.From {
					s.Set(session.TotalAutoRetries, strconv.Itoa(in.To))
					s.Set(session.LastRetryReason, in.Reason)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("completing the check a crash interrupted (%s): %w", w.Path(intentFile), err)
			}
			if err := w.recoverHistory(&in); err != nil {
				return w.warn(err)
			}
		}
	}
	return w.dropIntent()
}

// queueHolds reports whether every issue in retried has at least its
// Retry-Count there: the check's queue write happened.
func queueHolds(q *queue.Queue, retried map[string]int) bool {
	for id, n := range retried {
		is := q.Issue(id)
		if is == nil || is.Int(queue.FieldRetryCount, 0) < n {
			return false
		}
	}
	return true
}

// recoverHistory writes the history rows of the check that in holds, at
// its own time and marked recovered, unless history.csv has its check row
// already (the crash came after it).
func (w Workspace) recoverHistory(in *checkIntent) error {
	t, err := time.Parse(analytics.TimeFormat, in.Time)
	if err != nil {
		return nil // an intent from before its time was kept: no row to date
	}
	path := w.Path(HistoryFile)
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if err == nil {
		defer f.Close()
		prefix := []byte("\n" + in.Time + "," + in.RunID + ",")
		if st, err := f.Stat(); err == nil {
			off := max(st.Size()-historyTail, 0)
			tail, _ := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
			for _, line := range bytes.SplitAfter(tail, []byte("\n")) {
				if bytes.HasPrefix(append([]byte("\n"), line...), prefix) && bytes.Contains(line, []byte(","+analytics.EventCheck+",")) {
					return nil
				}
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var retried []IssueRef
	for id, n := range in.Retried {
		retried = append(retried, IssueRef{ID: id, RetryCount: n})
	}
	sort.Slice(retried, func(i, j int) bool { return retried[i].ID < retried[j].ID })
	events := checkEvents(t, in.RunID, retried, nil)
	events[0].Detail += " (recovered)"
	return w.appendHistory(events...)
}

// historyTail is how far back in history.csv a recovery looks for the
// rows of the check it completes.
const historyTail = 1 << 20
