package loop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// The outcomes of a Stop hook call.
const (
	HookBlocked    = "blocked"     // gates failed, attempts left: the agent goes on
	HookPassed     = "passed"      // every blocking gate passed
	HookExhausted  = "exhausted"   // gates failed and the session's issues wait for a person
	HookNotRetried = "not_retried" // gates failed, but none of them files auto-retry issues
	HookAwaiting   = "awaiting"    // a human gate awaits a person's approval: nothing for the agent to do
	HookDisabled   = "disabled"    // gates failed, but auto-retry is disabled: reported, not retried
	HookSkipped    = "skipped"     // the gates did not run: no gates, bad input
	HookUnchanged  = "unchanged"   // the session changed nothing since it began, or since its gates last passed
	HookWaiting    = "waiting"     // gates failed as an issue that waits for a person already did
	HookTakenOver  = "taken_over"  // the claim the agent carries was taken over: it may stop, nothing checked
)

// HookResult is what a Stop hook call did.
type HookResult struct {
	Outcome   string
	Output    HookOutput
	Session   string // the session's key in the queue
	Gates     *GateRun
	Retried   []IssueRef // the session's issues given another attempt
	Exhausted []IssueRef // the session's issues with none left
	Waiting   []IssueRef // issues that wait for a person, whose failure came back
}

// StopHook answers an agent's Stop hook for a session. It runs the gates,
// which file the session's failures as issues tagged with its Session (or
// record them against the ones it filed before) and resolve its issues
// when they pass. A failure with attempts left blocks the stop with the
// feedback, and counts the attempt: the session's failing issues go to
// in_progress with Retry-Count + 1, as the check does. With none left the
// agent may stop, and the message says why. stop_hook_active is no reason
// to let it stop: the attempt counts bound the loop. With the sentinel or
// auto_retry_enabled false the gates still run, file and resolve, and a
// failure is reported, but nothing is retried: the agent may stop.
//
// A session that changed nothing since its start (its baseline, recorded by
// SessionStart), since its gates last passed, or since a check's gates all
// passed (RecordChecked), and has no issue of its own to work on, may stop
// at once: the gates do not run. A failure whose signature belongs to an
// issue that waits for a person (of any session, or none) is not filed
// again: the agent may stop, told which issue waits and what to run. What
// the gates and the retry change in the queue is one write of it (see
// batch). The gates' artifacts go to the session's own directory,
// runs/<SessionDirName>/.
//
// The Stop hook of a claim's holder (Fenced) whose claim was taken over
// lets it stop, told so: before the stop, its gates do not run; while they
// ran, nothing they found is written.
//
// extra, if given, says what the hook knows besides: the agent's fixes.
func (w Workspace) StopHook(ctx context.Context, now func() time.Time, sessionID string, extra ...StopInput) (*HookResult, error) {
	res := &HookResult{Session: SessionKey(sessionID)}
	w.session, w.day = res.Session, now().Format("20060102")
	if err := w.checkFence(ctx); takenOver(res, err) {
		return res, nil
	} else if err != nil && !errors.As(err, new(*NoIssueError)) {
		return nil, err
	}
	disabled, err := w.Disabled()
	if err != nil {
		return nil, err
	}
	cfg, err := w.Config()
	if err != nil {
		return nil, err
	}
	if len(cfg.Gates) == 0 {
		res.Outcome = HookSkipped
		res.Output.SystemMessage = "orchestrate: no quality gates in " + w.Path(ConfigFile) + "; nothing checked the work."
		return res, nil
	}
	dirName := SessionDirName(sessionID)
	if w.unchanged(ctx, dirName, res.Session) {
		res.Outcome = HookUnchanged
		return res, nil
	}
	// The session's stops are its loops: the history rows of this one name
	// it, as its gate logs do (<gate>.loop<N>.log). evaluateGates makes
	// the directory; a first stop finds none, loop 1.
	w.loop = logLoop(w.Path(filepath.Join(RunsDir, dirName)), cfg.Gates)
	opt := GateOptions{Tag: map[string]string{FieldSession: res.Session}, Dir: dirName}
	for _, x := range extra {
		opt.AgentFixes = agentFixes(x.AgentFixes)
	}
	by, err := w.gatesHook(ctx, now, res, opt, disabled)
	if err != nil {
		return nil, err
	}
	if by == "" {
		return res, nil
	}
	return res, w.recordBaseline(ctx, now(), dirName, sessionID, "", by)
}

// gatesHook runs a Stop hook's gates into res, and retries the session's
// failing issues (see retryHook). Once the gates ran, it begins a batch:
// what they file, record and resolve, and the retry, is one write of the
// queue, under the lock, which it commits before the baseline is
// recorded (git runs without the lock). It returns why where the
// repository stands now is to be the session's baseline, or "" when it is
// not.
func (w Workspace) gatesHook(ctx context.Context, now func() time.Time, res *HookResult, opt GateOptions, disabled string) (baseline string, err error) {
	s, err := w.evaluateGates(ctx, now, opt)
	if err != nil {
		return "", err
	}
	b, err := w.beginBatch(ctx)
	if err != nil {
		return "", err
	}
	if w.fence != nil && takenOver(res, w.checkFenced(b.q.Queue())) {
		// Taken over while the gates ran: the queue is the new holder's.
		b.unlock()
		return "", nil
	}
	baseline, err = w.decideHook(ctx, b, res, s, disabled)
	if cerr := b.commit(); err == nil {
		err = cerr
	}
	return baseline, err
}

// decideHook records the gates' results of a Stop hook into its batch b,
// and decides what the agent is told.
func (w Workspace) decideHook(ctx context.Context, b *batch, res *HookResult, s *gateStep, disabled string) (baseline string, err error) {
	if err := s.finish(ctx, b); err != nil {
		return "", err
	}
	gr := s.gr
	res.Gates = gr
	if gr.Evaluation.Passed {
		res.Outcome = HookPassed
		var msgs []string
		for _, r := range resolutionsIn(b, gr.Resolved) {
			msgs = append(msgs, SucceededMessage(r))
		}
		if m := AdvisoryMessage(gr); m != "" {
			msgs = append(msgs, m)
		}
		res.Output.SystemMessage = strings.Join(msgs, "\n")
		return "gates passed", nil
	}

	if !gr.Failed() && len(gr.AwaitingApproval) > 0 {
		res.Outcome = HookAwaiting
		res.Output.SystemMessage = "orchestrate: the quality gates pass but for a person's approval, so the agent may stop: " + approvals(gr) + "."
		return "gates passed but for approval", nil
	}
	if disabled != "" {
		// The sentinel turns off the retries, not the checks: the gates ran
		// and filed their failures, and the agent may stop.
		res.Outcome = HookDisabled
		res.Output.SystemMessage = fmt.Sprintf("orchestrate: quality gates failed (%s); auto-retry is disabled (%s), so nothing is retried and the agent may stop. The results are in %s.",
			strings.Join(failedNames(gr), ", "), disabled, gr.Dir)
		return "", nil
	}
	return w.retryHook(ctx, b, s.now, res)
}

// retryHook is the end of a Stop hook whose blocking gates failed, with
// auto-retry on: the session's failing issues with attempts left are
// retried and block the stop with the feedback; otherwise the agent may
// stop, told why: issues that wait for a person, no attempt left, or no
// auto-retry issue filed. It returns why where the repository stands now
// is to be the session's baseline, or "".
func (w Workspace) retryHook(ctx context.Context, b *batch, now func() time.Time, res *HookResult) (baseline string, err error) {
	gr := res.Gates
	var filed, unfiled []string
	for _, f := range gr.Evaluation.Failures() {
		if ids := gr.IssuesOf(f.Name()); len(ids) > 0 {
			filed = append(filed, ids...)
		} else if ref, ok := gr.Waiting[f.Name()]; ok {
			res.Waiting = append(res.Waiting, ref)
		} else {
			unfiled = append(unfiled, f.Name())
		}
	}
	if res.Retried, res.Exhausted, err = w.retrySession(ctx, b, now(), filed); err != nil {
		return "", err
	}
	switch {
	case len(res.Retried) > 0:
		res.Outcome = HookBlocked
		res.Output = HookOutput{Decision: "block", Reason: gr.Feedback}
	case len(res.Waiting) > 0:
		res.Outcome = HookWaiting
		res.Output.SystemMessage = WaitingMessage(w.Dir, res.Waiting)
		if len(res.Exhausted) > 0 {
			res.Output.SystemMessage += "\n" + ExhaustedMessage(w.Dir, res.Exhausted)
		}
		// Until a person acts, a turn that changes nothing has nothing to check.
		return "gates fail as issues that wait for a person", nil
	case len(res.Exhausted) > 0:
		res.Outcome = HookExhausted
		res.Output.SystemMessage = "orchestrate: the quality gates still fail and no attempt is left, so the agent may stop.\n" +
			ExhaustedMessage(w.Dir, res.Exhausted)
		return "gates fail as issues that wait for a person", nil
	case gr.OnlyReviewerErrors():
		res.Outcome = HookNotRetried
		res.Output.SystemMessage = fmt.Sprintf("orchestrate: the review could not be done (%s); that is not the agent's to fix, so it may stop: check the reviewer's command. The logs are in %s.",
			strings.Join(gr.ReviewerErrors, "; "), gr.Dir)
	default:
		res.Outcome = HookNotRetried
		res.Output.SystemMessage = fmt.Sprintf("orchestrate: quality gates failed (%s), but they file no auto-retry issue (auto_retry: false), so the agent may stop. The results are in %s.",
			strings.Join(unfiled, ", "), gr.Dir)
	}
	return "", nil
}

// takenOver reports whether err refuses the claim the Stop hook's agent
// carries, and then lets the agent stop, told why.
func takenOver(res *HookResult, err error) bool {
	var f *claim.FencedError
	if !errors.As(err, &f) {
		return false
	}
	who := "no one holds the issue now"
	if f.Lease.Holder != "" {
		who = fmt.Sprintf("%s holds the issue now (epoch %d)", f.Lease.Holder, f.Lease.Epoch)
	}
	what := "taken over"
	if f.Lease.Holder == "" && f.Lease.Epoch == f.Yours {
		what = "released"
	}
	res.Outcome = HookTakenOver
	res.Output = HookOutput{SystemMessage: fmt.Sprintf(
		"orchestrate: %s: your claim (epoch %d) was %s; %s, so the agent may stop: its work is not checked here, and nothing of it is filed.",
		f.ID, f.Yours, what, who)}
	return true
}

// sessionWorking reports whether a session has an issue of its own to work
// on: open, and neither stuck nor an approval request. Its gates must run
// to resolve it, whatever the tree.
func (w Workspace) sessionWorking(key string) bool {
	q, err := w.loadQueue()
	if err != nil {
		return true
	}
	for _, is := range q.Issues {
		if s, _ := is.Get(FieldSession); s == key && open(is) && is.Status() != queue.StatusStuck && !isApproval(is) {
			return true
		}
	}
	return false
}

// WaitingMessage tells the person which issues, whose failures came back in
// a hook's gates, wait for them, and what to run.
func WaitingMessage(dir string, refs []IssueRef) string {
	lines := []string{"orchestrate: the quality gates fail as before, and a person is needed, so the agent may stop:"}
	for _, r := range refs {
		what := r.ID
		if r.Summary != "" {
			what += ": " + r.Summary
		}
		lines = append(lines, fmt.Sprintf("  - %s (%s)", what, explainReason(r)))
	}
	id := refs[0].ID
	lines = append(lines,
		"Run: orchestrate issue show "+id+" (and "+dir+"/"+QueueFile+"); fix it by hand, then orchestrate issue resolve "+id+
			", or orchestrate issue retry "+id+" to let the agent try again (counts back to 0), or orchestrate issue skip "+id+".")
	return strings.Join(lines, "\n")
}

// waitingFor returns the issue that waits for a person (stuck, halted or
// exhausted; of any session, or none) whose failure signature is that of a
// failed gate's result, with the signature; an empty ref when none. A
// failure that is not counted (infrastructure, empty output) belongs to
// none. The issue may be any session's: it reads through tx every issue
// whose text holds the signature, and no other.
func (w Workspace) waitingFor(tx queueTx, cfg *config.Config, r *gate.Result) (IssueRef, string) {
	f, _ := gateFailure(r)
	sig, normalized := w.Signature(f)
	if f.Class() == signature.Infra || signature.Empty(normalized) {
		return IssueRef{}, ""
	}
	q, err := tx.some(sig)
	if err != nil {
		return IssueRef{}, ""
	}
	if ref := waitingIn(q.Issues, cfg, sig); ref.ID != "" {
		return ref, sig
	}
	return IssueRef{}, ""
}

// waitingIn returns the issue among issues that waits for a person and
// whose failure signature is sig, or an empty ref.
func waitingIn(issues []*queue.Issue, cfg *config.Config, sig string) IssueRef {
	for _, is := range issues {
		if v, _ := is.Get(queue.FieldFailureSignature); v != sig {
			continue
		}
		ref := IssueRef{
			ID: is.ID, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0),
			MaxRetries: is.Int(queue.FieldMaxRetries, cfg.Retry.MaxRetries),
		}
		if ref.Reason = needsPerson(is, ref); ref.Reason != "" {
			return ref
		}
	}
	return IssueRef{}
}

// retrySession is the check of a Stop hook, on the issues a session's
// failing gates filed: each that can be retried goes to in_progress with
// Retry-Count + 1; those that wait for a person are reported. It never
// looks at another issue, nor at the run's global cap, which is the run's
// (total_auto_retries in session_state.md) and not the session's.
func (w Workspace) retrySession(ctx context.Context, tx queueTx, now time.Time, issues []string) (retried, exhausted []IssueRef, err error) {
	if len(issues) == 0 {
		return nil, nil, nil
	}
	cfg, err := w.Config()
	if err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, id := range issues {
		want[id] = true
	}
	err = tx.change(ctx, func(q *queue.Queue) error {
		retried, exhausted, _ = retryStep(q, cfg, func(is *queue.Issue) bool { return want[is.ID] }, false)
		return nil
	}, func() []analytics.Event {
		if len(retried) == 0 && len(exhausted) == 0 {
			return nil
		}
		return checkEvents(now, w.runID(), retried, exhausted)
	})
	if err != nil || len(retried) == 0 && len(exhausted) == 0 {
		return nil, nil, err
	}
	return retried, exhausted, nil
}

// failedNames lists the blocking gates that failed, in config order.
func failedNames(gr *GateRun) []string {
	var out []string
	for _, f := range gr.Evaluation.Failures() {
		out = append(out, f.Name())
	}
	return out
}

// StopInput is what a Stop hook knows besides the session: what the agent
// last said of its work (its transcript's last message), which the report
// keeps as the attempt's agent fixes.
type StopInput struct {
	AgentFixes string
}
