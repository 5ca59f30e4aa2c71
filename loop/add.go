package loop

import (
	"context"
	"strconv"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// NewIssue is an issue to file.
type NewIssue struct {
	// Fields by name; the seed's defaults fill the ones not given.
	Fields map[string]string
	// Sections by title (Summary, Verification Step, Suggested Fix, …).
	Sections map[string]string
	// Failure, when set, is the failure output the issue is about: its
	// signature is computed, and an open issue with the same signature
	// gets the failure recorded instead of a new issue being filed.
	Failure *Failure
}

// Defaults returns the seed's fields of a new issue, as of now.
func Defaults(now time.Time, maxRetries int) map[string]string {
	return map[string]string{
		queue.FieldType:                 "bug",
		queue.FieldPriority:             "medium",
		queue.FieldStatus:               queue.StatusPending,
		queue.FieldSource:               "manual",
		queue.FieldCategory:             "",
		queue.FieldCreated:              now.UTC().Format(time.RFC3339),
		queue.FieldAutoRetry:            "false",
		queue.FieldRetryCount:           "0",
		queue.FieldMaxRetries:           strconv.Itoa(maxRetries),
		queue.FieldFailureSignature:     "",
		queue.FieldPreviousSignatures:   "[]",
		queue.FieldSignatureRepeatCount: "0",
		queue.FieldHalted:               "false",
		queue.FieldBlocking:             "false",
	}
}

// Added is what filing an issue did.
type Added struct {
	ID string `json:"id"`
	// Deduplicated is true when an open issue had the same failure
	// signature: the failure was recorded against it, and ID is its ID.
	Deduplicated bool      `json:"deduplicated"`
	Recorded     *Recorded `json:"recorded,omitempty"`
	Signature    string    `json:"signature,omitempty"`
	// Status is the issue's status now: stuck when it needs a person.
	Status string `json:"status"`
	reason string // why it is stuck
}

// AddIssue files a new issue, or records its failure against the open
// issue that has the same signature.
func (w Workspace) AddIssue(ctx context.Context, now time.Time, ni NewIssue) (Added, error) {
	return w.addIssue(ctx, direct{w}, now, ni)
}

// addIssue is AddIssue through tx.
func (w Workspace) addIssue(ctx context.Context, tx queueTx, now time.Time, ni NewIssue) (Added, error) {
	for k, v := range ni.Fields {
		if err := queue.CheckValue(k, v); err != nil {
			return Added{}, err
		}
	}
	cfg, err := w.Config()
	if err != nil {
		return Added{}, err
	}
	fields := Defaults(now, cfg.Retry.MaxRetries)
	for k, v := range ni.Fields {
		for d := range fields {
			if queue.CanonicalName(k) == d {
				delete(fields, d)
			}
		}
		fields[k] = v
	}
	sections := map[string]string{}
	for k, v := range ni.Sections {
		sections[k] = v
	}
	var sig, normalized string
	counted := false
	if f := ni.Failure; f != nil {
		sig, normalized = w.Signature(*f)
		f.headlines = w.headlines(f.Output)
		sections[queue.SectionFailureDetails] = FormatOutput(f.Output)
		if f.Gate != "" {
			fields[FieldGate] = f.Gate
		}
		counted = f.Class() != signature.Infra && !signature.Empty(normalized)
	}

	var a Added
	err = tx.change(ctx, func(q *queue.Queue) error {
		a = Added{Signature: sig}
		if counted {
			if is := openWithSignature(q, sig, fields[FieldSession]); is != nil {
				r := applyFailure(is, cfg, *ni.Failure, sig, normalized)
				a.ID, a.Deduplicated, a.Recorded, a.Status = is.ID, true, &r, r.Status
				return nil
			}
		}
		is := q.Add(now, fields, sections)
		a.ID, a.Status = is.ID, is.Status()
		if ni.Failure != nil {
			// Its first sighting, by the rules of record: a command not
			// found is stuck at once.
			r := applyFailure(is, cfg, *ni.Failure, sig, normalized)
			a.Status, a.reason = r.Status, r.Reason
		}
		return nil
	}, func() []analytics.Event {
		if a.Deduplicated {
			return w.afterRecord(now, *ni.Failure, normalized, a.Recorded)
		}
		return w.addEvents(now, ni, a)
	})
	return a, err
}

// addEvents are the history rows of a filed issue: its filing, and its
// halt when it is stuck at once.
func (w Workspace) addEvents(now time.Time, ni NewIssue, a Added) []analytics.Event {
	ev := analytics.Event{Time: now, RunID: w.runID(), Event: analytics.EventIssueAdd, IssueID: a.ID,
		Signature: a.Signature, Detail: ni.Sections[queue.SectionSummary]}
	if ni.Failure != nil {
		ev.Gate, ev.ExitCode = ni.Failure.Gate, ni.Failure.ExitCode
	}
	events := []analytics.Event{ev}
	if a.Status == queue.StatusStuck && a.reason != "" {
		events = append(events, analytics.Event{Time: now, RunID: ev.RunID, Event: analytics.EventHalt, IssueID: a.ID, Detail: a.reason})
	}
	return events
}

// openWithSignature returns the first issue not resolved or skipped whose
// Failure-Signature is sig, of the same agent session (Session field; ""
// for none): a session never counts another's failures.
func openWithSignature(q *queue.Queue, sig, session string) *queue.Issue {
	for _, is := range q.All() {
		if !open(is) {
			continue
		}
		if s, _ := is.Get(FieldSession); s != session {
			continue
		}
		if v, _ := is.Get(queue.FieldFailureSignature); v == sig {
			return is
		}
	}
	return nil
}
