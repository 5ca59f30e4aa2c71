package loop

import (
	"context"
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
