package loop

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// The outcomes of a check.
const (
	CheckTriggered  = "triggered"   // a retry loop starts: exit 0
	CheckNothing    = "nothing"     // no issue to retry: exit 10
	CheckDisabled   = "disabled"    // the sentinel or auto_retry_enabled: exit 10
	CheckCapReached = "cap_reached" // the global cap: a person is needed, exit 11
	CheckExhausted  = "exhausted"   // issues wait for a person: exit 11
)

// IssueRef names an issue in a check's report.
type IssueRef struct {
	ID         string `json:"id"`
	Summary    string `json:"summary"`
	RetryCount int    `json:"retry_count"`
	MaxRetries int    `json:"max_retries"`
	Priority   string `json:"priority,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Escalated: this check is the first to report that the issue waits
	// for a person, which the AUTO-RETRY EXHAUSTED message says once.
	Escalated bool `json:"escalated,omitempty"`
}

// FieldEscalated marks an issue whose wait for a person was reported
// (AUTO-RETRY EXHAUSTED), so that it is reported once, not on every check
// while it waits. issue retry clears it.
const FieldEscalated = "Escalated"

// CheckResult is what the end-of-loop check decided.
type CheckResult struct {
	Outcome          string     `json:"outcome"`
	Reason           string     `json:"reason,omitempty"` // why disabled
	Retried          []IssueRef `json:"retried"`
	Exhausted        []IssueRef `json:"exhausted"`
	TotalAutoRetries int        `json:"total_auto_retries"`
	GlobalCap        int        `json:"global_cap"`
	// Unfinished lists the issues left in_progress by an earlier retry
	// with no result since: no record of a failed verification, no
	// resolve. The check does not retry them; a person or the orchestrator
	// records or resolves them.
	Unfinished []IssueRef `json:"unfinished,omitempty"`
}

// Check is the seed's checkAutoRetry, step for step: the no_auto_retry
// sentinel and auto_retry_enabled; the candidates (Auto-Retry, pending,
// Retry-Count < Max-Retries, not halted); the global cap from the session
// state; each candidate's Retry-Count + 1 and status in_progress;
// total_auto_retries + 1 and last_retry_reason; both files written. The
// issues that wait for a person (halted, exhausted, non-retryable) are
// reported with it. Issues a Stop hook filed for an agent session (a
// Session field) are that session's to retry, and left out.
func (w Workspace) Check(ctx context.Context, now time.Time) (CheckResult, error) {
	return w.check(ctx, now, func(is *queue.Issue) bool {
		// An agent session's own issues are retried by its Stop hook, a
		// claimed issue by its holder.
		s, _ := is.Get(FieldSession)
		return s == "" && claim.Of(is).Holder == ""
	})
}

// CheckIssue is Check for one issue: the step of the agent that claimed it
// (run --agents). The global cap is the run's, shared by all its agents.
func (w Workspace) CheckIssue(ctx context.Context, now time.Time, id string) (CheckResult, error) {
	return w.check(ctx, now, func(is *queue.Issue) bool { return is.ID == id })
}

func (w Workspace) check(ctx context.Context, now time.Time, sel func(*queue.Issue) bool) (CheckResult, error) {
	cfg, err := w.Config()
	if err != nil {
		return CheckResult{}, err
	}
	unlock, err := w.Lock(ctx)
	if err != nil {
		return CheckResult{}, err
	}
	defer unlock()
	res := CheckResult{GlobalCap: cfg.Retry.GlobalCap}
	state, err := session.Load(w.Path(StateFile))
	if err != nil {
		return res, err
	}
	if len(state.Problems) > 0 {
		return res, &queue.ValidationError{Path: w.Path(StateFile), Problems: state.Problems}
	}
	res.TotalAutoRetries = state.TotalAutoRetries()
	run := runIDOf(state)
	if reason := w.disabled(state); reason != "" {
		res.Outcome, res.Reason = CheckDisabled, reason
		return res, w.appendHistory(analytics.Event{Time: now, RunID: run, Event: analytics.EventCheck, Outcome: CheckDisabled, Detail: reason})
	}

	held, err := w.retryQueue(cfg, now, run, &res, sel)
	if err != nil {
		return res, err
	}
	var events []analytics.Event
	switch {
	case held > 0:
		res.Outcome = CheckCapReached
		events = append(events,
			analytics.Event{Time: now, RunID: run, Event: analytics.EventCheck, Outcome: CheckCapReached, Detail: ids(res.Exhausted)},
			analytics.Event{Time: now, RunID: run, Event: analytics.EventCap, Detail: fmt.Sprintf("total_auto_retries=%d", res.TotalAutoRetries)})
	case len(res.Retried) > 0:
		res.Outcome = CheckTriggered
		res.TotalAutoRetries++
		counted, err := w.countRetry(res.Retried)
		if err != nil {
			return res, err
		}
		// The intent goes once the state and the history have the check: a
		// crash before, or a state that could not be written, leaves it,
		// and the next command completes both (recoverCheck).
		if err := w.appendHistory(checkEvents(now, run, res.Retried, nil)...); err != nil || !counted {
			return res, err
		}
		return res, w.warn(w.dropIntent())
	case len(res.Exhausted) > 0:
		res.Outcome = CheckExhausted
		events = checkEvents(now, run, nil, res.Exhausted)
	default:
		res.Outcome = CheckNothing
		events = append(events, analytics.Event{Time: now, RunID: run, Event: analytics.EventCheck, Outcome: CheckNothing})
	}
	return res, w.appendHistory(events...)
}

// retryQueue is the check's step on the queue (retryStep), its intent
// written first, into res: the issues retried and those that wait for a
// person. It returns how many candidates the global cap held back.
func (w Workspace) retryQueue(cfg *config.Config, now time.Time, run string, res *CheckResult, sel func(*queue.Issue) bool) (held int, err error) {
	capped := res.TotalAutoRetries >= cfg.Retry.GlobalCap
	// Two files, one step: the intent, written before the queue is, lets
	// the next command finish the step should this one die between the
	// two. It is written for what is about to be written, each time the
	// queue's update is worked out.
	var intent *checkIntent
	err = w.updateQueue(func(q *queue.Queue) error {
		res.Retried, res.Exhausted, held = retryStep(q, cfg, sel, capped)
		res.Unfinished = unfinished(q, cfg, sel, res.Retried)
		if len(res.Retried) == 0 {
			return nil
		}
		in := newIntent(now, run, res.TotalAutoRetries, res.Retried)
		if in.same(intent) {
			return nil
		}
		intent = in
		return w.writeIntent(in)
	})
	if err != nil {
		// An intent left is settled by the next command, by the queue.
		return held, err
	}
	if intent != nil && len(res.Retried) == 0 {
		// The queue changed under the update, which retried nothing in
		// the end.
		if err := w.dropIntent(); err != nil {
			return held, err
		}
	}
	return held, nil
}

// countRetry is the check's step on the session state once the queue,
// the commit point, is written: total_auto_retries + 1 and
// last_retry_reason. A failure is past the commit point: it is a warning
// (see warn), and the intent left makes the next command complete it.
func (w Workspace) countRetry(retried []IssueRef) (counted bool, err error) {
	reason := retryReason(retried)
	err = session.Update(w.Path(StateFile), func(s *session.State) error {
		s.Set(session.TotalAutoRetries, strconv.Itoa(s.TotalAutoRetries()+1))
		s.Set(session.LastRetryReason, reason)
		return nil
	})
	if err != nil {
		// The queue, the commit point, is written: the intent makes
		// the next command write the state.
		err = fmt.Errorf("writing %s (the next command completes it): %w", StateFile, err)
		return false, w.warn(err)
	}
	return true, nil
}

// retryReason is last_retry_reason for a check that retried issues.
func retryReason(retried []IssueRef) string {
	reason := retried[0].ID
	if s := retried[0].Summary; s != "" {
		reason += ": " + s
	}
	if n := len(retried); n > 1 {
		reason += fmt.Sprintf(" (and %d more)", n-1)
	}
	return reason
}

// retryStep is the heart of checkAutoRetry, over the issues sel picks:
// those that wait for a person are reported; each candidate gets
// Retry-Count + 1 and status in_progress, unless hold (the cap is
// reached), when the candidates held back are only counted.
func retryStep(q *queue.Queue, cfg *config.Config, sel func(*queue.Issue) bool, hold bool) (retried, exhausted []IssueRef, held int) {
	for _, is := range q.Issues {
		if !sel(is) {
			continue
		}
		ref := IssueRef{
			ID: is.ID, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0),
			MaxRetries: is.Int(queue.FieldMaxRetries, cfg.Retry.MaxRetries),
		}
		ref.Priority, _ = is.Get(queue.FieldPriority)
		if ref.Reason = needsPerson(is, ref); ref.Reason != "" {
			if !is.Bool(FieldEscalated, false) {
				ref.Escalated = true
				is.SetBool(FieldEscalated, true)
			}
			exhausted = append(exhausted, ref)
			continue
		}
		if !candidate(is, ref) {
			continue
		}
		if hold {
			held++
			continue
		}
		ref.RetryCount++
		is.SetInt(queue.FieldRetryCount, ref.RetryCount)
		is.Set(queue.FieldStatus, queue.StatusInProgress)
		retried = append(retried, ref)
	}
	return retried, exhausted, held
}

// unfinished returns the selected issues in_progress that this check did
// not just retry: left by an earlier retry with no result since.
func unfinished(q *queue.Queue, cfg *config.Config, sel func(*queue.Issue) bool, retried []IssueRef) []IssueRef {
	var out []IssueRef
	for _, is := range q.Issues {
		if is.Status() != queue.StatusInProgress || !sel(is) || slices.ContainsFunc(retried, func(r IssueRef) bool { return r.ID == is.ID }) {
			continue
		}
		out = append(out, IssueRef{ID: is.ID, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, cfg.Retry.MaxRetries)})
	}
	return out
}

// UnfinishedMessage names the issues left in_progress with no result, and
// what to do about each; "" for none.
func UnfinishedMessage(refs []IssueRef) string {
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "Left in_progress with no result: %s (%s), retry %d of %d: record its verification's failure (orchestrate record %s FILE) or resolve it (orchestrate issue resolve %s); check retries only pending issues.\n",
			r.ID, r.Summary, r.RetryCount, r.MaxRetries, r.ID, r.ID)
	}
	return b.String()
}

// checkEvents are the history rows of a check that retried issues, or
// found them exhausted.
func checkEvents(now time.Time, run string, retried, exhausted []IssueRef) []analytics.Event {
	if len(retried) == 0 {
		return []analytics.Event{{Time: now, RunID: run, Event: analytics.EventCheck, Outcome: CheckExhausted, Detail: ids(exhausted)}}
	}
	events := []analytics.Event{{Time: now, RunID: run, Event: analytics.EventCheck, Outcome: CheckTriggered, Detail: ids(retried)}}
	for _, r := range retried {
		events = append(events, analytics.Event{Time: now, RunID: run, Event: analytics.EventRetryTriggered, IssueID: r.ID, Attempt: r.RetryCount})
	}
	return events
}

// disabled says why auto-retry is off, or "".
func (w Workspace) disabled(s *session.State) string {
	if w.SentinelExists() {
		return "the " + w.Path(SentinelFile) + " sentinel exists"
	}
	if !s.AutoRetryEnabled() {
		return "auto_retry_enabled is false in " + w.Path(StateFile)
	}
	return ""
}

// Disabled says why auto-retry is off (the sentinel, or auto_retry_enabled
// false), or "" when it is on: the question asked before every agent launch
// and every check.
func (w Workspace) Disabled() (string, error) {
	s, err := session.Load(w.Path(StateFile))
	if err != nil {
		return "", err
	}
	return w.disabled(s), nil
}

// candidate is the seed's filter: Auto-Retry, pending, Retry-Count below
// Max-Retries, and not halted.
func candidate(is *queue.Issue, ref IssueRef) bool {
	return is.Bool(queue.FieldAutoRetry, false) &&
		is.Status() == queue.StatusPending &&
		ref.RetryCount < ref.MaxRetries &&
		!is.Bool(queue.FieldHalted, false)
}

// needsPerson says why an auto-retry issue waits for a person, or "".
func needsPerson(is *queue.Issue, ref IssueRef) string {
	if !is.Bool(queue.FieldAutoRetry, false) {
		return ""
	}
	switch st := is.Status(); {
	case st == queue.StatusResolved || st == queue.StatusSkipped:
		return ""
	case is.Bool(queue.FieldHalted, false):
		if r, ok := is.Get(FieldHaltReason); ok {
			return r
		}
		return ReasonIdentical
	case st == queue.StatusStuck:
		if r, ok := is.Get(FieldHaltReason); ok {
			return r
		}
		return "stuck"
	case st == queue.StatusPending && ref.RetryCount >= ref.MaxRetries:
		return ReasonExhausted
	}
	return ""
}

func ids(refs []IssueRef) string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.ID
	}
	return strings.Join(out, " ")
}

// TriggeredMessage is the seed's AUTO-RETRY TRIGGERED message, and its
// line "Auto-retry triggered for N critical issue(s)".
func TriggeredMessage(res CheckResult) string {
	var lines []string
	critical := true
	for i, r := range res.Retried {
		if i > 0 {
			lines = append(lines, "")
		}
		what := r.Summary
		if what == "" {
			what = r.ID
		} else {
			what += " (" + r.ID + ")"
		}
		critical = critical && isCritical(r.Priority)
		lines = append(lines,
			detected(r.Priority)+": "+what,
			"",
			fmt.Sprintf("Attempt: %d of %d", r.RetryCount, r.MaxRetries),
			"Action: Running improvement loop to fix issue")
	}
	lines = append(lines, "", fmt.Sprintf("Auto-retry loop %d of %d for this run.", res.TotalAutoRetries, res.GlobalCap))
	kind := "critical issue(s)"
	if !critical {
		kind = "issue(s)"
	}
	return box("🔄 AUTO-RETRY TRIGGERED", lines...) + fmt.Sprintf("🔄 Auto-retry triggered for %d %s\n", len(res.Retried), kind)
}

// isCritical reports whether an issue's priority is critical: unset is,
// as the seed's auto-retry issues are critical by definition.
func isCritical(priority string) bool {
	return priority == "" || strings.EqualFold(priority, config.PriorityCritical) || priority == "1"
}

// detected is how TRIGGERED names an issue of a priority: the seed's
// "Critical issue detected" for a critical one only.
func detected(priority string) string {
	if isCritical(priority) {
		return "Critical issue detected"
	}
	return "Issue detected (priority " + priority + ")"
}

// Escalated returns the issues this check is the first to report as
// waiting for a person: those the EXHAUSTED message is for.
func (res CheckResult) Escalated() []IssueRef {
	var out []IssueRef
	for _, r := range res.Exhausted {
		if r.Escalated {
			out = append(out, r)
		}
	}
	return out
}

// StillWaitingMessage is the line for issues that wait for a person and
// were reported before.
func StillWaitingMessage(refs []IssueRef) string {
	var waiting []string
	for _, r := range refs {
		if !r.Escalated {
			waiting = append(waiting, r.ID)
		}
	}
	if len(waiting) == 0 {
		return ""
	}
	return fmt.Sprintf("Still waiting for a person: %s (orchestrate status; orchestrate issue retry ID or issue skip ID).\n", strings.Join(waiting, ", "))
}

// ExhaustedMessage is the seed's AUTO-RETRY EXHAUSTED message ("Failed to
// fix after N attempts:"), listing every issue that hit a limit and why.
func ExhaustedMessage(dir string, refs []IssueRef) string {
	lines := []string{failedAfter(refs)}
	for _, r := range refs {
		what := r.ID
		if r.Summary != "" {
			what += ": " + r.Summary
		}
		lines = append(lines, fmt.Sprintf("  - %s (%s)", what, explainReason(r)))
	}
	lines = append(lines, "",
		"Manual intervention required. Review:",
		"  - "+dir+"/"+QueueFile,
		"  - "+dir+"/"+AnalyticsFile,
		"",
		"Then: orchestrate issue retry ID (counts back to 0), or orchestrate issue skip ID.")
	return box("⚠️ AUTO-RETRY EXHAUSTED", lines...)
}

// CapMessage is the seed's warning when the global cap is reached.
func CapMessage(res CheckResult) string {
	return fmt.Sprintf("Max auto-retries (%d) reached for this run\n⚠️ Auto-retry limit reached. Manual intervention required.\n", res.GlobalCap)
}

func explainReason(r IssueRef) string {
	switch r.Reason {
	case ReasonIdentical:
		return "halted: the same failure came back in a row"
	case ReasonOscillation:
		return "halted: the same failures keep coming back"
	case ReasonNonRetryable:
		return "not retryable: the command was not found or not executable"
	case ReasonExhausted:
		return fmt.Sprintf("%d of %d attempts used", r.RetryCount, r.MaxRetries)
	}
	return r.Reason
}

// failedAfter is the seed's "Failed to fix after N attempts:", N the
// attempts (Retry-Count) the issues took, or their range.
func failedAfter(refs []IssueRef) string {
	lo, hi := -1, 0
	for _, r := range refs {
		if lo < 0 || r.RetryCount < lo {
			lo = r.RetryCount
		}
		hi = max(hi, r.RetryCount)
	}
	switch {
	case hi == 0:
		return "Failed to fix, with no retry attempt made:"
	case lo == hi:
		return "Failed to fix after " + plural(hi, "attempt") + ":"
	}
	return fmt.Sprintf("Failed to fix after %d to %d attempts:", lo, hi)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
