package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// Unit tests of the retry rules, one rule a test, each pinned at its
// boundary: a regression names the rule in milliseconds.

var ruleNow = time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)

// ruleWorkspace makes a workspace in a new repository directory with the
// given config.yaml and issue_queue.md (either may be empty) and a started
// session.
func ruleWorkspace(t *testing.T, cfg, q string) Workspace {
	t.Helper()
	w := Workspace{Dir: filepath.Join(t.TempDir(), DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{ConfigFile: cfg, QueueFile: q} {
		if text == "" && name != ConfigFile { // an empty config: the defaults
			continue
		}
		if err := os.WriteFile(w.Path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.StartSession(context.Background(), ruleNow); err != nil {
		t.Fatal(err)
	}
	return w
}

// issueText is an issue of the queue as a person would type it.
func issueText(id string, fields ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n| Field | Value |\n|-------|-------|\n", id)
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, "| %s | %s |\n", fields[i], fields[i+1])
	}
	return b.String() + "\n"
}

func loadIssue(t *testing.T, w Workspace, id string) *queue.Issue {
	t.Helper()
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	is := q.Issue(id)
	if is == nil {
		t.Fatalf("no %s in the queue", id)
	}
	return is
}

// sigOf is a signature for a letter: long enough for Recent-Signatures.
func sigOf(letter string) string { return strings.Repeat(letter, 64) }

// recordSequence records failures with the signatures the letters name on
// a fresh auto-retry issue and returns the 1-based position of the failure
// that stopped it (0: none did) and why.
func recordSequence(t *testing.T, cfg *config.Config, seq string) (at int, reason string) {
	t.Helper()
	q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001",
		"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "10")))
	is := q.Issue("ISSUE-20241213-001")
	for i, letter := range strings.Split(seq, ",") {
		r := applyFailure(is, cfg, Failure{Output: []byte("fail " + letter)}, sigOf(letter), "fail "+letter)
		if r.Status == queue.StatusStuck {
			return i + 1, r.Reason
		}
	}
	return 0, ""
}

// TestRuleOscillationWindow: the oscillation rule counts a signature in the
// last 5 attempts (recentWindow), not 4, not 6. The sequences are longer
// than the window, so that a window of another size gives another answer.
func TestRuleOscillationWindow(t *testing.T) {
	t.Parallel()
	cfg := config.Default() // halt_after_identical: 3
	for _, tc := range []struct {
		seq    string
		at     int
		reason string
		why    string
	}{
		{"A,B,A,B,A", 5, ReasonOscillation, "3 of the last 5"},
		{"X,A,B,A,C,A", 6, ReasonOscillation, "3 A in the last 5 (a window of 4 sees 2)"},
		{"A,X,B,A,C,A", 0, "", "2 A in the last 5 (a window of 6 sees 3)"},
		{"A,B,C,D,A,E,F,A", 0, "", "the first A has left the window"},
		{"X,Y,A,B,A,C,A", 7, ReasonOscillation, "3 A in the last 5, the oldest at its edge"},
		{"A,B,A,C", 0, "", "2 of 4: below halt_after_identical"},
	} {
		at, reason := recordSequence(t, cfg, tc.seq)
		if at != tc.at || reason != tc.reason {
			t.Errorf("oscillation window: %s stopped at failure %d (%q); want %d (%q): %s", tc.seq, at, reason, tc.at, tc.reason, tc.why)
		}
	}
}

// TestRuleIdenticalInARow: halt_after_identical of the same signature in a
// row halts, one fewer does not; a different signature starts again at 1.
func TestRuleIdenticalInARow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		halt   int
		seq    string
		at     int
		reason string
	}{
		{3, "A,A", 0, ""},
		{3, "A,A,A", 3, ReasonIdentical},
		{3, "A,A,B,B", 0, ""},
		{2, "A,A", 2, ReasonIdentical},
		{2, "A,B", 0, ""},
		{2, "A,B,A", 3, ReasonOscillation},
		{4, "A,A,A", 0, ""},
		{4, "A,A,A,A", 4, ReasonIdentical},
	} {
		cfg := config.Default()
		cfg.Retry.HaltAfterIdentical = tc.halt
		at, reason := recordSequence(t, cfg, tc.seq)
		if at != tc.at || reason != tc.reason {
			t.Errorf("identical in a row (halt_after_identical %d): %s stopped at failure %d (%q); want %d (%q)", tc.halt, tc.seq, at, reason, tc.at, tc.reason)
		}
	}
}

// TestRuleFailureClasses: exit 126/127 makes the issue stuck at once; a
// timeout or a kill (infra) and an empty output count toward no halt.
func TestRuleFailureClasses(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name    string
		f       Failure
		norm    string
		status  string
		reason  string
		counted bool
	}{
		{"exit 127", Failure{Output: []byte("sh: x: not found"), ExitCode: code(127)}, "not found", queue.StatusStuck, ReasonNonRetryable, true},
		{"exit 126", Failure{Output: []byte("permission denied"), ExitCode: code(126)}, "permission denied", queue.StatusStuck, ReasonNonRetryable, true},
		{"exit 125", Failure{Output: []byte("boom"), ExitCode: code(125)}, "boom", queue.StatusPending, "", true},
		{"exit 1", Failure{Output: []byte("boom"), ExitCode: code(1)}, "boom", queue.StatusPending, "", true},
		{"timeout 124", Failure{Output: []byte("boom"), ExitCode: code(124)}, "boom", queue.StatusPending, "", false},
		{"empty output", Failure{Output: nil}, "", queue.StatusPending, "", false},
	} {
		cfg := config.Default()
		cfg.Retry.HaltAfterIdentical = 1 // any counted failure halts
		q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001",
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "10")))
		is := q.Issue("ISSUE-20241213-001")
		r := applyFailure(is, cfg, tc.f, sigOf("a"), tc.norm)
		wantStatus, wantReason := tc.status, tc.reason
		if tc.counted && tc.reason == "" {
			wantStatus, wantReason = queue.StatusStuck, ReasonIdentical
		}
		if r.Counted != tc.counted || r.Status != wantStatus || r.Reason != wantReason {
			t.Errorf("failure class %s: counted %v, %s (%q); want counted %v, %s (%q)", tc.name, r.Counted, r.Status, r.Reason, tc.counted, wantStatus, wantReason)
		}
	}
}

// TestRuleRecordAtLimit: a failure recorded on an issue whose Retry-Count
// has reached Max-Retries makes it stuck (exhausted); one below does not.
func TestRuleRecordAtLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		count, max string
		status     string
	}{
		{"9", "10", queue.StatusPending},
		{"10", "10", queue.StatusStuck},
		{"11", "10", queue.StatusStuck},
		{"0", "1", queue.StatusPending},
		{"1", "1", queue.StatusStuck},
	} {
		q := queue.Parse([]byte("# Queue\n\n" + issueText("ISSUE-20241213-001",
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", tc.count, "Max-Retries", tc.max)))
		r := applyFailure(q.Issue("ISSUE-20241213-001"), config.Default(), Failure{Output: []byte("x")}, sigOf("a"), "x")
		if r.Status != tc.status {
			t.Errorf("record at Retry-Count %s of %s: %s; want %s", tc.count, tc.max, r.Status, tc.status)
		}
	}
}

// TestRuleCheckAtLimit: check's person-needed rule is Retry-Count >=
// Max-Retries, from a queue a person edited by hand (record never ran): 10
// of 10 is EXHAUSTED, 9 of 10 is retried.
func TestRuleCheckAtLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		count, max string
		outcome    string
		after      string // Retry-Count afterwards
		status     string
	}{
		{"9", "10", CheckTriggered, "10", queue.StatusInProgress},
		{"10", "10", CheckExhausted, "10", queue.StatusPending},
		{"11", "10", CheckExhausted, "11", queue.StatusPending},
		{"0", "1", CheckTriggered, "1", queue.StatusInProgress},
		{"1", "1", CheckExhausted, "1", queue.StatusPending},
	} {
		w := ruleWorkspace(t, "", "# Queue\n\n"+issueText("ISSUE-20241213-001",
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", tc.count, "Max-Retries", tc.max))
		res, err := w.Check(context.Background(), ruleNow)
		if err != nil {
			t.Fatal(err)
		}
		is := loadIssue(t, w, "ISSUE-20241213-001")
		got, _ := is.Get(queue.FieldRetryCount)
		if res.Outcome != tc.outcome || got != tc.after || is.Status() != tc.status {
			t.Errorf("check at Retry-Count %s of %s: %s, Retry-Count %s, %s; want %s, %s, %s", tc.count, tc.max, res.Outcome, got, is.Status(), tc.outcome, tc.after, tc.status)
		}
		if tc.outcome == CheckExhausted && (len(res.Exhausted) != 1 || res.Exhausted[0].Reason != ReasonExhausted) {
			t.Errorf("check at Retry-Count %s of %s: exhausted %+v; want the issue, exhausted", tc.count, tc.max, res.Exhausted)
		}
	}
}

// TestRuleGlobalCap: the check retries while total_auto_retries is below
// global_cap; at the cap it holds the candidates back (cap_reached) and
// counts nothing.
func TestRuleGlobalCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		total   int
		outcome string
		after   int
	}{
		{1, CheckTriggered, 2},
		{2, CheckCapReached, 2},
		{3, CheckCapReached, 3},
	} {
		w := ruleWorkspace(t, "retry:\n  global_cap: 2\n", "# Queue\n\n"+issueText("ISSUE-20241213-001",
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "10"))
		if err := session.Update(w.Path(StateFile), func(s *session.State) error {
			s.Set(session.TotalAutoRetries, fmt.Sprint(tc.total))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		res, err := w.Check(context.Background(), ruleNow)
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Load(w.Path(StateFile))
		if err != nil {
			t.Fatal(err)
		}
		count := loadIssue(t, w, "ISSUE-20241213-001").Int(queue.FieldRetryCount, -1)
		wantCount := 0
		if tc.outcome == CheckTriggered {
			wantCount = 1
		}
		if res.Outcome != tc.outcome || s.TotalAutoRetries() != tc.after || count != wantCount {
			t.Errorf("global cap 2 at total_auto_retries %d: %s, total %d, Retry-Count %d; want %s, %d, %d",
				tc.total, res.Outcome, s.TotalAutoRetries(), count, tc.outcome, tc.after, wantCount)
		}
	}
}

// TestRuleCheckLeavesSessionIssues: a check (cron, a run) retries no issue
// an agent session's Stop hook filed: those are the session's.
func TestRuleCheckLeavesSessionIssues(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "", "# Queue\n\n"+
		issueText("ISSUE-20241213-001", "Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Session", "a")+
		issueText("ISSUE-20241213-002", "Status", "pending", "Auto-Retry", "true", "Retry-Count", "0"))
	res, err := w.Check(context.Background(), ruleNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Retried) != 1 || res.Retried[0].ID != "ISSUE-20241213-002" {
		t.Errorf("check retried %+v; want ISSUE-20241213-002 only", res.Retried)
	}
	if is := loadIssue(t, w, "ISSUE-20241213-001"); is.Status() != queue.StatusPending || is.Int(queue.FieldRetryCount, -1) != 0 {
		t.Errorf("session a's issue after a check: %s, Retry-Count %d; want pending, 0", is.Status(), is.Int(queue.FieldRetryCount, -1))
	}
}

// TestRuleHookIsolation: a Stop hook's retry step touches its own session's
// issues only. An issue orchestrate gate filed (no Session) stays pending
// with Retry-Count 0 through another session's failing hook.
func TestRuleHookIsolation(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n", "")
	ctx := context.Background()
	now := func() time.Time { return ruleNow }
	if _, err := w.RunGates(ctx, now, GateOptions{}); err != nil { // orchestrate gate: no session
		t.Fatal(err)
	}
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Issues) != 1 {
		t.Fatalf("orchestrate gate filed %d issues; want 1", len(q.Issues))
	}
	gateIssue := q.Issues[0].ID
	if s, ok := q.Issues[0].Get(FieldSession); ok {
		t.Fatalf("orchestrate gate's issue has Session %q", s)
	}

	res, err := w.StopHook(ctx, now, "a")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != HookBlocked || len(res.Retried) != 1 || res.Retried[0].ID == gateIssue {
		t.Fatalf("session a's hook: %s, retried %+v; want blocked, its own issue", res.Outcome, res.Retried)
	}
	is := loadIssue(t, w, gateIssue)
	if is.Status() != queue.StatusPending || is.Int(queue.FieldRetryCount, -1) != 0 {
		t.Errorf("hook isolation: the gate-filed issue %s after session a's failing hook: %s, Retry-Count %d; want pending, 0",
			gateIssue, is.Status(), is.Int(queue.FieldRetryCount, -1))
	}
	own := loadIssue(t, w, res.Retried[0].ID)
	if s, _ := own.Get(FieldSession); s != "a" || own.Int(queue.FieldRetryCount, -1) != 1 || own.Status() != queue.StatusInProgress {
		t.Errorf("session a's issue: Session %q, Retry-Count %d, %s; want a, 1, in_progress", s, own.Int(queue.FieldRetryCount, -1), own.Status())
	}
}

// TestRuleAgentCouldNotRun: an agent command that is missing (exit 127) or
// not executable (exit 126) stops the run at once, as an error, before any
// gate runs: retrying it would only fail the same way.
func TestRuleAgentCouldNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, command string
	}{
		{"exit 127", "no-such-agent-command-for-orchestrate"},
		{"exit 126", "./agent.sh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := "agent:\n  command: " + tc.command + "\n  resume_command: " + tc.command + "\n" +
				"retry:\n  max_retries: 2\n" +
				"gates:\n  - name: unit\n    command: 'echo ran >> gate-ran; exit 1'\n"
			w := ruleWorkspace(t, cfg, "")
			// Not executable: the shell answers 126.
			if err := os.WriteFile(filepath.Join(w.Root(), "agent.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := w.Run(context.Background(), RunOptions{Task: "x"})
			if err == nil || !strings.Contains(err.Error(), "the agent could not run") {
				t.Errorf("Run with agent %q: error %v; want the agent could not run", tc.command, err)
			}
			if res == nil || res.Outcome != RunError || res.Loops != 1 {
				t.Errorf("Run with agent %q: %+v; want an error after loop 1", tc.command, res)
			}
			if _, err := os.Stat(filepath.Join(w.Root(), "gate-ran")); err == nil {
				t.Errorf("Run with agent %q ran the gates after the agent could not run", tc.command)
			}
		})
	}
}
