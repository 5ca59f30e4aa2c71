package loop

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
)

// TestFeedbackAttemptFromIssue: the feedback's attempt count is that of the
// first failing blocking gate that has an issue, even when a gate without
// one (auto_retry: false) failed before it. A new run's first loop (no
// previous attempts) whose unit gate fails for the fourth time says
// "attempt 4/10", not "attempt 1/10" from the lint gate's own count; when
// unit's issue waits for a person (its failure recorded against it, as
// the gate's open issue), it says no attempt is left.
func TestFeedbackAttemptFromIssue(t *testing.T) {
	t.Parallel()
	const (
		lint = "  - name: lint\n    command: 'echo \"lint: unused variable x\"; exit 1'\n    auto_retry: false\n"
		unit = "  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n"
	)
	for _, tc := range []struct {
		name, gates, status string
		want                string
	}{
		{"lint first, in progress", lint + unit, "in_progress", "(attempt 4/10)"},
		{"lint first, stuck", lint + unit, "stuck", "(no attempt left)"},
		{"unit alone, in progress", unit, "in_progress", "(attempt 4/10)"},
		{"unit alone, stuck", unit, "stuck", "(no attempt left)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ruleWorkspace(t, "gates:\n"+tc.gates, "# Queue\n\n"+issueText("ISSUE-20241213-001",
				"Status", tc.status, "Auto-Retry", "true", "Retry-Count", "3", "Max-Retries", "10",
				"Gate", "unit", "Failure-Signature", sigOf("a"), "Signature-Repeat-Count", "1"))
			now := func() time.Time { return ruleNow }
			// A run's fix cycle starts with it: no previous attempts.
			gr, err := w.RunGates(context.Background(), now, GateOptions{Previous: []gate.Attempt{}})
			if err != nil {
				t.Fatal(err)
			}
			if a := gr.Issues["unit"]; a.ID != "ISSUE-20241213-001" || a.Recorded == nil {
				t.Fatalf("unit's failure went to %+v; want recorded against ISSUE-20241213-001", a)
			}
			if _, ok := gr.Issues["lint"]; ok {
				t.Fatalf("lint (auto_retry: false) filed an issue")
			}
			head, _, _ := strings.Cut(gr.Feedback, "\n")
			if !strings.Contains(head, tc.want) {
				t.Errorf("feedback's first line %q; want %s", head, tc.want)
			}
		})
	}
}

// TestFeedbackAttemptOfOpenIssue: with two failing gates, each with its
// issue, one stuck and one at its second attempt of ten, the feedback
// counts the open one's attempt and never says that no attempt is left;
// it says so only when both are stuck. The order of the gates in
// config.yaml does not matter.
func TestFeedbackAttemptOfOpenIssue(t *testing.T) {
	t.Parallel()
	const (
		gateA = "  - name: a\n    command: 'echo \"a: got 1, want 2\"; exit 1'\n"
		gateB = "  - name: b\n    command: 'echo \"b: got 3, want 4\"; exit 1'\n"
	)
	for _, tc := range []struct {
		name, gates, statusB, want string
	}{
		{"stuck first", gateA + gateB, "in_progress", "(attempt 2/10)"},
		{"stuck last", gateB + gateA, "in_progress", "(attempt 2/10)"},
		{"both stuck", gateA + gateB, "stuck", "(no attempt left)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ruleWorkspace(t, "gates:\n"+tc.gates, "# Queue\n\n"+
				issueText("ISSUE-20241213-001", "Status", "stuck", "Auto-Retry", "true",
					"Retry-Count", "2", "Max-Retries", "10", "Gate", "a", "Failure-Signature", sigOf("a"), "Signature-Repeat-Count", "1")+
				issueText("ISSUE-20241213-002", "Status", tc.statusB, "Auto-Retry", "true",
					"Retry-Count", "1", "Max-Retries", "10", "Gate", "b", "Failure-Signature", sigOf("b"), "Signature-Repeat-Count", "1"))
			now := func() time.Time { return ruleNow }
			gr, err := w.RunGates(context.Background(), now, GateOptions{Previous: []gate.Attempt{}})
			if err != nil {
				t.Fatal(err)
			}
			if gr.Issues["a"].ID != "ISSUE-20241213-001" || gr.Issues["b"].ID != "ISSUE-20241213-002" {
				t.Fatalf("the failures went to %+v; want one issue each", gr.Issues)
			}
			head, _, _ := strings.Cut(gr.Feedback, "\n")
			if !strings.Contains(head, tc.want) {
				t.Errorf("feedback's first line %q; want %s", head, tc.want)
			}
			if left := strings.Contains(gr.Feedback, "No attempt is left"); left != (tc.want == "(no attempt left)") {
				t.Errorf("feedback says no attempt is left: %v; want %v:\n%s", left, !left, gr.Feedback)
			}
		})
	}
}

// TestFeedbackTriedOnlyEarlier: the first failure of a gate is not told as
// already tried; the same failure again is, once; a third time, twice.
func TestFeedbackTriedOnlyEarlier(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n", "# Queue\n")
	now := func() time.Time { return ruleNow }
	for i, want := range []string{"", "1 time)", "2 times)"} {
		gr, err := w.RunGates(context.Background(), now, GateOptions{Previous: []gate.Attempt{}})
		if err != nil {
			t.Fatal(err)
		}
		tried := strings.Contains(gr.Feedback, "Already tried")
		if tried != (want != "") || want != "" && !strings.Contains(gr.Feedback, want) {
			t.Errorf("failure %d: already tried %v, want %q:\n%s", i+1, tried, want, gr.Feedback)
		}
	}
}

// TestResolveOpenKeepsAPersonsChoice: a run resolves an issue it worked on
// only while it is open; one a person skipped or resolved meanwhile keeps
// their choice, and nothing is written.
func TestResolveOpenKeepsAPersonsChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status string
		ok     bool
	}{{"pending", true}, {"in_progress", true}, {"skipped", false}, {"resolved", false}, {"stuck", false}} {
		w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'true'\n", "# Queue\n\n"+issueText("ISSUE-20241213-001", "Status", tc.status))
		before, err := os.ReadFile(w.Path(QueueFile))
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := w.resolveOpen(context.Background(), ruleNow, "ISSUE-20241213-001")
		if err != nil || ok != tc.ok {
			t.Errorf("%s: resolved %v, %v; want %v", tc.status, ok, err, tc.ok)
		}
		after, _ := os.ReadFile(w.Path(QueueFile))
		if changed := string(after) != string(before); changed != tc.ok {
			t.Errorf("%s: the queue changed: %v; want %v", tc.status, changed, tc.ok)
		}
	}
}
