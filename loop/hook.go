package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// FieldSession ties an issue to the agent session whose Stop hook filed
// it: the hook counts a session's attempts on its own issues only.
const FieldSession = "Session"

// HookInput is the JSON object Claude Code gives a Stop hook on stdin.
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// HookOutput is a Stop hook's answer on stdout. Decision "block" keeps the
// agent working, with Reason as its next instruction; otherwise the agent
// may stop, and SystemMessage, if any, is shown to the person.
type HookOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// The outcomes of a Stop hook call.
const (
	HookBlocked    = "blocked"     // gates failed, attempts left: the agent goes on
	HookPassed     = "passed"      // every blocking gate passed
	HookExhausted  = "exhausted"   // gates failed and the session's issues wait for a person
	HookNotRetried = "not_retried" // gates failed, but none of them files auto-retry issues
	HookAwaiting   = "awaiting"    // a human gate awaits a person's approval: nothing for the agent to do
	HookDisabled   = "disabled"    // gates failed, but auto-retry is disabled: reported, not retried
	HookSkipped    = "skipped"     // the gates did not run: no gates, bad input
)

// HookResult is what a Stop hook call did.
type HookResult struct {
	Outcome   string
	Output    HookOutput
	Session   string // the session's key in the queue
	Gates     *GateRun
	Retried   []IssueRef // the session's issues given another attempt
	Exhausted []IssueRef // the session's issues with none left
}

// Limits on a Stop hook's input: it is a small JSON object, and a hook
// must never hang on a stdin that does not end.
const (
	MaxHookInput     = 1 << 20
	HookInputTimeout = 10 * time.Second
)

// ReadHookInput reads and parses a Stop hook's input: at most MaxHookInput
// bytes, ending within timeout.
func ReadHookInput(r io.Reader, timeout time.Duration) (HookInput, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, MaxHookInput+1))
		done <- read{data, err}
	}()
	var got read
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case got = <-done:
	case <-t.C:
		return HookInput{}, fmt.Errorf("stdin did not end within %s", timeout)
	}
	if got.err != nil {
		return HookInput{}, fmt.Errorf("reading stdin: %w", got.err)
	}
	if len(got.data) > MaxHookInput {
		return HookInput{}, fmt.Errorf("input larger than %d bytes", MaxHookInput)
	}
	data := bytes.TrimSpace(got.data)
	if len(data) == 0 || data[0] != '{' {
		return HookInput{}, fmt.Errorf("input is not a JSON object")
	}
	var in HookInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return HookInput{}, fmt.Errorf("malformed JSON input: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return HookInput{}, fmt.Errorf("malformed JSON input: more after the object")
	}
	return in, nil
}

// SessionKey is the value of an issue's Session field for a session ID.
// An empty ID is a session of its own, "(none)", never a wildcard; an ID
// with characters a table cell should not hold is hashed.
func SessionKey(id string) string {
	if id == "" {
		return "(none)"
	}
	safe := len(id) <= 128
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			safe = false
			break
		}
	}
	if safe {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
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
func (w Workspace) StopHook(ctx context.Context, now func() time.Time, sessionID string) (*HookResult, error) {
	res := &HookResult{Session: SessionKey(sessionID)}
	w.session, w.day = res.Session, now().Format("20060102")
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
	gr, err := w.RunGates(ctx, now, GateOptions{Tag: map[string]string{FieldSession: res.Session}})
	if err != nil {
		return nil, err
	}
	res.Gates = gr
	if gr.Evaluation.Passed {
		res.Outcome = HookPassed
		var msgs []string
		for _, r := range w.resolutions(gr.Resolved) {
			msgs = append(msgs, SucceededMessage(r))
		}
		res.Output.SystemMessage = strings.Join(msgs, "\n")
		return res, nil
	}

	if !gr.Failed() && len(gr.AwaitingApproval) > 0 {
		res.Outcome = HookAwaiting
		res.Output.SystemMessage = "orchestrate: the quality gates pass but for a person's approval, so the agent may stop: " + approvals(gr) + "."
		return res, nil
	}
	if disabled != "" {
		// The sentinel turns off the retries, not the checks: the gates ran
		// and filed their failures, and the agent may stop.
		res.Outcome = HookDisabled
		res.Output.SystemMessage = fmt.Sprintf("orchestrate: quality gates failed (%s); auto-retry is disabled (%s), so nothing is retried and the agent may stop. The results are in %s.",
			strings.Join(failedNames(gr), ", "), disabled, gr.Dir)
		return res, nil
	}
	var filed, unfiled []string
	for _, f := range gr.Evaluation.Failures() {
		if a, ok := gr.Issues[f.Name()]; ok {
			filed = append(filed, a.ID)
		} else {
			unfiled = append(unfiled, f.Name())
		}
	}
	if res.Retried, res.Exhausted, err = w.retrySession(ctx, now(), filed); err != nil {
		return nil, err
	}
	switch {
	case len(res.Retried) > 0:
		res.Outcome = HookBlocked
		res.Output = HookOutput{Decision: "block", Reason: gr.Feedback}
	case len(res.Exhausted) > 0:
		res.Outcome = HookExhausted
		res.Output.SystemMessage = "orchestrate: the quality gates still fail and no attempt is left, so the agent may stop.\n" +
			ExhaustedMessage(w.Dir, res.Exhausted)
	default:
		res.Outcome = HookNotRetried
		res.Output.SystemMessage = fmt.Sprintf("orchestrate: quality gates failed (%s), but they file no auto-retry issue (auto_retry: false), so the agent may stop. The results are in %s.",
			strings.Join(unfiled, ", "), gr.Dir)
	}
	return res, nil
}

// retrySession is the check of a Stop hook, on the issues a session's
// failing gates filed: each that can be retried goes to in_progress with
// Retry-Count + 1; those that wait for a person are reported. It never
// looks at another issue, nor at the run's global cap, which is the run's
// (total_auto_retries in session_state.md) and not the session's.
func (w Workspace) retrySession(ctx context.Context, now time.Time, issues []string) (retried, exhausted []IssueRef, err error) {
	if len(issues) == 0 {
		return nil, nil, nil
	}
	cfg, err := w.Config()
	if err != nil {
		return nil, nil, err
	}
	unlock, err := w.Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	want := map[string]bool{}
	for _, id := range issues {
		want[id] = true
	}
	err = w.updateQueue(func(q *queue.Queue) error {
		retried, exhausted, _ = retryStep(q, cfg, func(is *queue.Issue) bool { return want[is.ID] }, false)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(retried) == 0 && len(exhausted) == 0 {
		return nil, nil, nil
	}
	events := checkEvents(now, w.runID(), retried, exhausted)
	return retried, exhausted, w.appendHistory(events...)
}

// failedNames lists the blocking gates that failed, in config order.
func failedNames(gr *GateRun) []string {
	var out []string
	for _, f := range gr.Evaluation.Failures() {
		out = append(out, f.Name())
	}
	return out
}
