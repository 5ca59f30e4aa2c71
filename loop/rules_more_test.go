package loop

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// TestRuleNeedsPerson: which issues the check reports as waiting for a
// person, and why: halted, stuck, or pending with no attempt left; never a
// resolved, skipped, or manual (no Auto-Retry) one.
func TestRuleNeedsPerson(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fields []string
		want   string
	}{
		{"pending below the limit", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "9"}, ""},
		{"pending at the limit", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "10"}, ReasonExhausted},
		{"in progress at the limit", []string{"Status", "in_progress", "Auto-Retry", "true", "Retry-Count", "10"}, ""},
		{"no auto-retry at the limit", []string{"Status", "pending", "Auto-Retry", "false", "Retry-Count", "10"}, ""},
		{"halted, no reason", []string{"Status", "stuck", "Auto-Retry", "true", "Halted", "true"}, ReasonIdentical},
		{"halted, oscillation", []string{"Status", "stuck", "Auto-Retry", "true", "Halted", "true", "Halt-Reason", ReasonOscillation}, ReasonOscillation},
		{"halted but pending", []string{"Status", "pending", "Auto-Retry", "true", "Halted", "true"}, ReasonIdentical},
		{"stuck, no reason", []string{"Status", "stuck", "Auto-Retry", "true"}, "stuck"},
		{"stuck, non-retryable", []string{"Status", "stuck", "Auto-Retry", "true", "Halt-Reason", ReasonNonRetryable}, ReasonNonRetryable},
		{"resolved and halted", []string{"Status", "resolved", "Auto-Retry", "true", "Halted", "true", "Retry-Count", "10"}, ""},
		{"skipped at the limit", []string{"Status", "skipped", "Auto-Retry", "true", "Retry-Count", "10"}, ""},
	} {
		q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001", append(tc.fields, "Max-Retries", "10")...)))
		is := q.Issue("ISSUE-20241213-001")
		ref := IssueRef{RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, 10)}
		if got := needsPerson(is, ref); got != tc.want {
			t.Errorf("needs a person: %s: %q; want %q", tc.name, got, tc.want)
		}
	}
}

// TestRuleCandidate: the seed's filter for a retry: Auto-Retry, pending,
// Retry-Count below Max-Retries, not halted.
func TestRuleCandidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fields []string
		want   bool
	}{
		{"pending, 0 of 10", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0"}, true},
		{"pending, 9 of 10", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "9"}, true},
		{"pending, 10 of 10", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "10"}, false},
		{"no Auto-Retry", []string{"Status", "pending", "Retry-Count", "0"}, false},
		{"Auto-Retry false", []string{"Status", "pending", "Auto-Retry", "false", "Retry-Count", "0"}, false},
		{"in progress", []string{"Status", "in_progress", "Auto-Retry", "true", "Retry-Count", "0"}, false},
		{"halted", []string{"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Halted", "true"}, false},
		{"stuck", []string{"Status", "stuck", "Auto-Retry", "true", "Retry-Count", "0"}, false},
	} {
		q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001", append(tc.fields, "Max-Retries", "10")...)))
		is := q.Issue("ISSUE-20241213-001")
		ref := IssueRef{RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, 10)}
		if got := candidate(is, ref); got != tc.want {
			t.Errorf("retry candidate: %s: %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestRuleIssueRetry: a person's issue retry gives a halted issue a fresh
// start: pending, counts back to 0, not halted, no halt reason, the window
// of recent signatures empty; the signatures themselves are kept.
func TestRuleIssueRetry(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "", "# Queue\n\n"+issueText("ISSUE-20241213-001",
		"Status", "stuck", "Auto-Retry", "true", "Retry-Count", "4", "Max-Retries", "10",
		"Failure-Signature", sigOf("a"), "Signature-Repeat-Count", "3", "Halted", "true",
		"Halt-Reason", ReasonIdentical, "Recent-Signatures", "[aaaaaaaaaaaa, aaaaaaaaaaaa, aaaaaaaaaaaa]"))
	if err := w.Retry(context.Background(), ruleNow, "ISSUE-20241213-001"); err != nil {
		t.Fatal(err)
	}
	is := loadIssue(t, w, "ISSUE-20241213-001")
	get := func(name string) string { v, _ := is.Get(name); return v }
	for name, want := range map[string]string{
		"Status": "pending", "Retry-Count": "0", "Signature-Repeat-Count": "0", "Halted": "false",
		"Halt-Reason": "", "Recent-Signatures": "[]", "Failure-Signature": sigOf("a"),
	} {
		if got := get(name); got != want {
			t.Errorf("issue retry: %s = %q; want %q", name, got, want)
		}
	}
	// And the check retries it again.
	res, err := w.Check(context.Background(), ruleNow)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != CheckTriggered {
		t.Errorf("check after issue retry: %s; want triggered", res.Outcome)
	}
}

// TestRuleMessages: the seed's messages say the attempt, the run's loop
// count against the cap, and why each exhausted issue stopped.
func TestRuleMessages(t *testing.T) {
	t.Parallel()
	trig := TriggeredMessage(CheckResult{
		Retried:          []IssueRef{{ID: "ISSUE-20241213-001", Summary: "unit fails", RetryCount: 3, MaxRetries: 10}},
		TotalAutoRetries: 2, GlobalCap: 15,
	})
	for _, want := range []string{"🔄 AUTO-RETRY TRIGGERED", "Critical issue detected: unit fails (ISSUE-20241213-001)", "Attempt: 3 of 10", "Auto-retry loop 2 of 15 for this run."} {
		if !strings.Contains(trig, want) {
			t.Errorf("TriggeredMessage lacks %q:\n%s", want, trig)
		}
	}
	ex := ExhaustedMessage(".orchestrator", []IssueRef{
		{ID: "ISSUE-20241213-001", Summary: "unit", Reason: ReasonIdentical},
		{ID: "ISSUE-20241213-002", Reason: ReasonOscillation},
		{ID: "ISSUE-20241213-003", Reason: ReasonNonRetryable},
		{ID: "ISSUE-20241213-004", Reason: ReasonExhausted, RetryCount: 10, MaxRetries: 10},
	})
	for _, want := range []string{
		"⚠️ AUTO-RETRY EXHAUSTED", "Failed to fix after 0 to 10 attempts:",
		"ISSUE-20241213-001: unit (halted: the same failure came back in a row)",
		"ISSUE-20241213-002 (halted: the same failures keep coming back)",
		"ISSUE-20241213-003 (not retryable: the command was not found or not executable)",
		"ISSUE-20241213-004 (10 of 10 attempts used)",
		".orchestrator/issue_queue.md", ".orchestrator/analytics.html",
	} {
		if !strings.Contains(ex, want) {
			t.Errorf("ExhaustedMessage lacks %q:\n%s", want, ex)
		}
	}
	// Seed 004's "Failed to fix after N attempts:", N the attempts made.
	for _, tt := range []struct {
		counts []int
		want   string
	}{
		{[]int{10}, "Failed to fix after 10 attempts:"},
		{[]int{1}, "Failed to fix after 1 attempt:"},
		{[]int{0}, "Failed to fix, with no retry attempt made:"},
		{[]int{3, 3}, "Failed to fix after 3 attempts:"},
		{[]int{2, 3}, "Failed to fix after 2 to 3 attempts:"},
	} {
		var refs []IssueRef
		for _, n := range tt.counts {
			refs = append(refs, IssueRef{ID: "X", RetryCount: n})
		}
		if got := ExhaustedMessage(".o", refs); !strings.Contains(got, "\n\n"+tt.want+"\n") {
			t.Errorf("ExhaustedMessage after %v attempts lacks %q:\n%s", tt.counts, tt.want, got)
		}
	}
	if cap := CapMessage(CheckResult{GlobalCap: 15}); !strings.HasPrefix(cap, "Max auto-retries (15) reached for this run\n") {
		t.Errorf("CapMessage = %q", cap)
	}
	if s := SucceededMessage(Resolution{ID: "ISSUE-20241213-001", Retries: 2, Summary: "unit"}); !strings.Contains(s, "Issue fixed after 2 retry attempt(s).") || !strings.Contains(s, "Original issue: unit (ISSUE-20241213-001)") {
		t.Errorf("SucceededMessage:\n%s", s)
	}
}

// TestRuleStopHookOutcomes: what a Stop hook answers, by the state of the
// gates and the session's issues.
func TestRuleStopHookOutcomes(t *testing.T) {
	t.Parallel()
	failing := "gates:\n  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n"
	for _, tc := range []struct {
		name     string
		cfg      string
		sentinel bool
		hooks    int // the hook's calls; the last one's outcome is checked
		outcome  string
		decision string
	}{
		{"passing gates", "gates:\n  - name: unit\n    command: 'true'\n", false, 1, HookPassed, ""},
		{"a failure with attempts left", failing, false, 1, HookBlocked, "block"},
		{"the same failure a third time halts", failing, false, 3, HookExhausted, ""},
		{"no attempt left", strings.Replace(failing, "gates:", "retry:\n  max_retries: 1\ngates:", 1), false, 2, HookExhausted, ""},
		{"a gate that files no issue", failing + "    auto_retry: false\n", false, 1, HookNotRetried, ""},
		{"the sentinel", failing, true, 1, HookDisabled, ""},
		{"no gates", "", false, 1, HookSkipped, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ruleWorkspace(t, tc.cfg, "")
			if tc.sentinel {
				if err := os.WriteFile(w.Path(SentinelFile), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var res *HookResult
			for i := 0; i < tc.hooks; i++ {
				var err error
				res, err = w.StopHook(context.Background(), func() time.Time { return ruleNow }, "s")
				if err != nil {
					t.Fatal(err)
				}
			}
			if res.Outcome != tc.outcome || res.Output.Decision != tc.decision {
				t.Errorf("Stop hook, %s: %s (decision %q); want %s (decision %q)\n%+v", tc.name, res.Outcome, res.Output.Decision, tc.outcome, tc.decision, res.Output)
			}
		})
	}
}

// TestRuleCheckDisabled: the no_auto_retry sentinel and auto_retry_enabled:
// false each stop the check before it looks at the queue.
func TestRuleCheckDisabled(t *testing.T) {
	t.Parallel()
	q := "# Queue\n\n" + issueText("ISSUE-20241213-001", "Status", "pending", "Auto-Retry", "true", "Retry-Count", "0")
	for _, tc := range []struct {
		name     string
		setup    func(w Workspace) error
		disabled bool
	}{
		{"enabled", func(Workspace) error { return nil }, false},
		{"the sentinel", func(w Workspace) error { return os.WriteFile(w.Path(SentinelFile), nil, 0o644) }, true},
		{"auto_retry_enabled false", func(w Workspace) error {
			return session.Update(w.Path(StateFile), func(s *session.State) error {
				s.Set(session.AutoRetryEnabled, "false")
				return nil
			})
		}, true},
	} {
		w := ruleWorkspace(t, "", q)
		if err := tc.setup(w); err != nil {
			t.Fatal(err)
		}
		res, err := w.Check(context.Background(), ruleNow)
		if err != nil {
			t.Fatal(err)
		}
		count := loadIssue(t, w, "ISSUE-20241213-001").Int(queue.FieldRetryCount, -1)
		if got := res.Outcome == CheckDisabled; got != tc.disabled || (tc.disabled && count != 0) {
			t.Errorf("check, %s: %s, Retry-Count %d; want disabled %v", tc.name, res.Outcome, count, tc.disabled)
		}
	}
}

// TestRuleGateIssues: a failing gate files one issue and records its next
// failures against it; once the gate passes, its issue is resolved. A Stop
// hook's issues (tagged with its session) are not orchestrate gate's: they
// stay open when an untagged run passes, and the other way round.
func TestRuleGateIssues(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'test -e fixed || { echo \"unit: got 3, want 4\"; exit 1; }'\n", "")
	ctx := context.Background()
	now := func() time.Time { return ruleNow }
	run := func(tag map[string]string) *GateRun {
		t.Helper()
		gr, err := w.RunGates(ctx, now, GateOptions{Tag: tag})
		if err != nil {
			t.Fatal(err)
		}
		return gr
	}
	first := run(nil).Issues["unit"].ID
	second := run(nil).Issues["unit"].ID
	if first == "" || second != first {
		t.Fatalf("a gate's second failure filed %q after %q; want it recorded against the first", second, first)
	}
	if n := loadIssue(t, w, first).Int(queue.FieldSignatureRepeatCount, -1); n != 2 {
		t.Errorf("the gate's issue after two identical failures: Signature-Repeat-Count %d; want 2", n)
	}
	session := run(map[string]string{FieldSession: "s"}).Issues["unit"].ID
	if session == first || session == "" {
		t.Fatalf("a session's failure went to %q; want an issue of its own, not %s", session, first)
	}

	if err := os.WriteFile(w.Root()+"/fixed", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gr := run(nil)
	if len(gr.Resolved) != 1 || gr.Resolved[0] != first {
		t.Errorf("the passing gate resolved %v; want [%s]", gr.Resolved, first)
	}
	if st := loadIssue(t, w, first).Status(); st != queue.StatusResolved {
		t.Errorf("the gate's issue after it passed: %s; want resolved", st)
	}
	if st := loadIssue(t, w, session).Status(); st == queue.StatusResolved {
		t.Errorf("the session's issue was resolved by a run that is not the session's")
	}
	gr = run(map[string]string{FieldSession: "s"})
	if len(gr.Resolved) != 1 || gr.Resolved[0] != session {
		t.Errorf("the session's passing gate resolved %v; want [%s]", gr.Resolved, session)
	}
}

// TestRuleStuckStaysStuck: only a person reopens an issue that waits for
// one (issue retry): a failure recorded on it keeps it stuck, with its
// reason, and is no new halt.
func TestRuleStuckStaysStuck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fields []string
		reason string
	}{
		{"halted", []string{"Status", "stuck", "Halted", "true", "Halt-Reason", ReasonOscillation}, ReasonOscillation},
		{"exhausted", []string{"Status", "stuck", "Halt-Reason", ReasonExhausted}, ReasonExhausted},
		{"halted, status edited to pending", []string{"Status", "pending", "Halted", "true", "Halt-Reason", ReasonIdentical}, ReasonIdentical},
	} {
		q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001",
			append(tc.fields, "Auto-Retry", "true", "Retry-Count", "2", "Max-Retries", "10")...)))
		is := q.Issue("ISSUE-20241213-001")
		r := applyFailure(is, config.Default(), Failure{Output: []byte("new failure")}, sigOf("b"), "new failure")
		if r.Status != queue.StatusStuck || is.Status() != queue.StatusStuck || r.Reason != tc.reason || r.stopped {
			t.Errorf("a failure on an issue %s: %s (%q), new halt %v; want stuck (%q), no new halt", tc.name, r.Status, r.Reason, r.stopped, tc.reason)
		}
	}
}
