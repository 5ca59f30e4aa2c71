package loop

import (
	"context"
	"errors"

	"fmt"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// NoIssueError is returned when the queue has no issue with the given ID.
type NoIssueError struct {
	Path string
	ID   string
}

func (e *NoIssueError) Error() string { return fmt.Sprintf("no issue %s in %s", e.ID, e.Path) }

// updateIssue runs fn on one issue under the workspace's lock, then
// appends the events then returns, if any, to the history.
func (w Workspace) updateIssue(ctx context.Context, id string, fn func(*queue.Issue) error, then func() []analytics.Event) error {
	return w.changeIssue(ctx, direct{w}, id, fn, then)
}

// changeIssue is updateIssue through tx.
func (w Workspace) changeIssue(ctx context.Context, tx queueTx, id string, fn func(*queue.Issue) error, then func() []analytics.Event) error {
	return tx.change(ctx, func(q *queue.Queue) error {
		is := q.Issue(id)
		if is == nil {
			return &NoIssueError{Path: w.Path(QueueFile), ID: id}
		}
		return fn(is)
	}, then)
}

// Change is one field an edit changed.
type Change struct {
	Field    string `json:"field"`
	Old, New string
}

// SetFields sets fields of an issue, as a person would by hand. Values are
// checked first (queue.CheckValue).
func (w Workspace) SetFields(ctx context.Context, id string, kv [][2]string) ([]Change, error) {
	for _, f := range kv {
		if err := queue.CheckValue(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	var changes []Change
	err := w.updateIssue(ctx, id, func(is *queue.Issue) error {
		changes = changes[:0]
		for _, f := range kv {
			old := ""
			if fl := is.Field(f[0]); fl != nil {
				old = fl.Value
			}
			is.Set(f[0], f[1])
			name := queue.CanonicalName(f[0])
			if fl := is.Field(f[0]); fl != nil {
				name = fl.Name
			}
			if old != f[1] {
				changes = append(changes, Change{Field: name, Old: old, New: f[1]})
			}
		}
		return nil
	}, nil)
	return changes, err
}

// Resolution is what resolving an issue did.
type Resolution struct {
	ID      string
	Retries int    // the Retry-Count it took
	Summary string // its Summary's first line
	Created time.Time
}

// Resolve marks an issue resolved: its verification passed. manual says a
// person fixed it by hand, which the analytics do not count as the loop's
// own fix. Resolved by the holder of its claim (Fenced), the claim ends in
// the same write.
func (w Workspace) Resolve(ctx context.Context, now time.Time, id string, manual bool) (Resolution, error) {
	return w.resolve(ctx, direct{w}, now, id, manual)
}

// resolveOpen resolves issue id as Resolve does when it is still open
// (pending or in_progress): a person who skipped or resolved it meanwhile
// keeps their choice. ok says whether it was resolved here.
func (w Workspace) resolveOpen(ctx context.Context, now time.Time, id string) (Resolution, bool, error) {
	open := func(is *queue.Issue) bool {
		st := is.Status()
		return st == queue.StatusPending || st == queue.StatusInProgress
	}
	r, err := w.resolveIf(ctx, direct{w}, now, id, false, open)
	if errors.Is(err, errNotResolved) {
		return r, false, nil
	}
	return r, err == nil, err
}

// errNotResolved is resolveIf's refusal of an issue its condition leaves
// as it is: nothing is written.
var errNotResolved = errors.New("not resolved: its condition does not hold")

// resolve is Resolve through tx.
func (w Workspace) resolve(ctx context.Context, tx queueTx, now time.Time, id string, manual bool) (Resolution, error) {
	return w.resolveIf(ctx, tx, now, id, manual, nil)
}

// resolveIf is resolve when cond holds of the issue as the write reads it
// (every issue when cond is nil), in the same step: else errNotResolved,
// and nothing written.
func (w Workspace) resolveIf(ctx context.Context, tx queueTx, now time.Time, id string, manual bool, cond func(*queue.Issue) bool) (Resolution, error) {
	var r Resolution
	var released claim.Lease
	err := w.changeIssue(ctx, tx, id, func(is *queue.Issue) error {
		if cond != nil && !cond(is) {
			return errNotResolved
		}
		r = Resolution{ID: id, Retries: is.Int(queue.FieldRetryCount, 0), Summary: summaryOf(is)}
		if v, ok := is.Get(queue.FieldCreated); ok {
			r.Created, _ = time.Parse(time.RFC3339, v)
		}
		is.Set(queue.FieldStatus, queue.StatusResolved)
		released = claim.Lease{}
		if f := w.fence; f != nil && f.id == id {
			// Its holder resolves it: the claim ends in the same write, so
			// that no crash leaves a resolved issue claimed.
			l, err := claim.Release(is, f.epoch)
			if err != nil {
				return err
			}
			released = l
		}
		return nil
	}, func() []analytics.Event {
		ev := analytics.Event{Time: now, RunID: w.runID(), Event: analytics.EventResolve, IssueID: id, Attempt: r.Retries}
		if !r.Created.IsZero() && now.After(r.Created) {
			ev.DurationMS = now.Sub(r.Created).Milliseconds()
		}
		if manual {
			ev.Detail = analytics.DetailManual
		}
		if released.Holder != "" {
			return []analytics.Event{ev, {Time: now, RunID: ev.RunID, Event: analytics.EventRelease, IssueID: id,
				Attempt: released.Epoch, Detail: "holder=" + released.Holder}}
		}
		return []analytics.Event{ev}
	})
	return r, err
}

// Skip marks an issue skipped: a person chose not to fix it.
func (w Workspace) Skip(ctx context.Context, now time.Time, id string) error {
	return w.updateIssue(ctx, id, func(is *queue.Issue) error {
		is.Set(queue.FieldStatus, queue.StatusSkipped)
		return nil
	}, func() []analytics.Event {
		return []analytics.Event{{Time: now, RunID: w.runID(), Event: analytics.EventSkip, IssueID: id}}
	})
}

// Retry gives an issue a fresh start, as a person's choice after it was
// halted or exhausted: status pending, counts back to 0, not halted. Its
// signatures are kept: the history of what failed stays.
func (w Workspace) Retry(ctx context.Context, now time.Time, id string) error {
	return w.updateIssue(ctx, id, func(is *queue.Issue) error {
		// Under the lock; should the queue's save then fail, its counts
		// are still there to count from.
		if err := w.forgetLaunches(id); err != nil {
			return err
		}
		is.Set(queue.FieldStatus, queue.StatusPending)
		is.SetInt(queue.FieldRetryCount, 0)
		if _, ok := is.Get(queue.FieldLaunchCount); ok {
			is.SetInt(queue.FieldLaunchCount, 0)
		}
		is.SetInt(queue.FieldSignatureRepeatCount, 0)
		is.SetBool(queue.FieldHalted, false)
		if _, ok := is.Get(FieldHaltReason); ok {
			is.Set(FieldHaltReason, "")
		}
		if _, ok := is.Get(FieldEscalated); ok {
			is.Set(FieldEscalated, "")
		}
		if _, ok := is.Get(FieldRecentSignatures); ok {
			is.Set(FieldRecentSignatures, "[]")
		}
		return nil
	}, func() []analytics.Event {
		return []analytics.Event{{Time: now, RunID: w.runID(), Event: analytics.EventRetry, IssueID: id}}
	})
}

func summaryOf(is *queue.Issue) string {
	if s := is.Section(queue.SectionSummary); s != nil {
		for _, line := range splitLines(s.Body()) {
			if line != "" {
				return line
			}
		}
	}
	return ""
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
