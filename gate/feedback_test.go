package gate

import (
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
)

func TestFeedbackSkipped(t *testing.T) {
	ev := &Evaluation{Results: []Result{
		{Gate: config.Gate{Name: "tests", FailFast: true}, Outcome: Fail, ExitCode: 1, Output: "boom\n"},
		{Gate: config.Gate{Name: "build"}, Outcome: Skipped, Err: `skipped: fail_fast gate "tests" did not pass`},
		{Gate: config.Gate{Name: "lint"}, Outcome: Skipped, Err: `skipped: fail_fast gate "tests" did not pass`},
	}}
	d := NewFeedback(ev, FeedbackInput{Attempt: 1, MaxAttempts: 2})
	if len(d.Failures) != 1 || d.Failures[0].Error != "boom" || strings.Join(d.Skipped, ",") != "build,lint" {
		t.Fatalf("NewFeedback = %+v; want tests failed, build and lint skipped", d)
	}
	got, err := RenderFeedback("", d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "❌ tests\nError: exit code 1\n```\nboom\n```\n") ||
		!strings.Contains(got, "Not run, since a gate that must pass first failed: build, lint.\n") ||
		strings.Contains(got, "❌ build") {
		t.Errorf("RenderFeedback =\n%s", got)
	}
}
