package loop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

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
	// From and To are total_auto_retries before and after.
	From   int    `json:"from"`
	To     int    `json:"to"`
	Reason string `json:"last_retry_reason"`
	// Retried is each retried issue's Retry-Count once the queue is written.
	Retried map[string]int `json:"retried"`
}

func newIntent(run string, from int, retried []IssueRef) *checkIntent {
	in := &checkIntent{RunID: run, From: from, To: from + 1, Reason: retryReason(retried), Retried: map[string]int{}}
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
