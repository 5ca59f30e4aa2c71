package gate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
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

// A go test failure with 200 lines of output: the tail alone would not name
// the failing test; the excerpt does, with its message, and ends with the
// output's end.
func TestFailureExcerptNamesTheTest(t *testing.T) {
	var b strings.Builder
	b.WriteString("--- FAIL: TestCommas (0.00s)\n    number_test.go:41: Commas(1000) = \"1000\"; want \"1,000\"\n")
	for i := range 200 {
		fmt.Fprintf(&b, "    number_test.go:50: case %d ok\n", i)
	}
	b.WriteString("FAIL\nFAIL\tgithub.com/dustin/go-humanize\t0.012s\n")
	out := b.String()
	if tail, _ := Excerpt(out, 40, 4096); strings.Contains(tail, "TestCommas") {
		t.Fatalf("the tail names the test: the case proves nothing")
	}
	got, cut := FailureExcerpt(out, nil, 40, 4096)
	lines := strings.Split(got, "\n")
	if !cut || !strings.Contains(got, "--- FAIL: TestCommas") || !strings.Contains(got, `want "1,000"`) ||
		!strings.HasSuffix(got, "FAIL\tgithub.com/dustin/go-humanize\t0.012s") || len(lines) > 41 || len(got) > 4096 {
		t.Errorf("FailureExcerpt = %d lines, cut %v:\n%s", len(lines), cut, got)
	}
	// The byte budget holds too, failure lines first.
	got, _ = FailureExcerpt(out, nil, 40, 120)
	if len(got) > 120 || !strings.Contains(got, "--- FAIL: TestCommas") {
		t.Errorf("FailureExcerpt(120 bytes) = %q", got)
	}
	// Failure lines from a middle the capture dropped come first.
	got, _ = FailureExcerpt("head\n… 9999 bytes omitted …\ntail\n", []string{"--- FAIL: TestMiddle (0.00s)", "    x_test.go:3: boom"}, 40, 4096)
	if !strings.HasPrefix(got, "--- FAIL: TestMiddle (0.00s)\n    x_test.go:3: boom\n…\n") {
		t.Errorf("FailureExcerpt with marks = %q", got)
	}
	// Nothing fails by name: the tail, as Excerpt.
	plain := "a\nb\nc\nd\n"
	if got, _ := FailureExcerpt(plain, nil, 2, 100); got != "…\nc\nd" && got != "c\nd" {
		t.Errorf("FailureExcerpt(plain) = %q", got)
	}
}

// Binary garbage in a gate's output becomes text in the feedback: no
// control byte but tab and newline, valid UTF-8, no escape sequence.
func TestFeedbackIsText(t *testing.T) {
	garbage := "--- FAIL: TestBin (0.00s)\n    got \x00\x01\x02\xff\xfe \x1b]0;title\x07\x1b[31mred\x1b[0m\r\n\x7f\u0085end\n"
	ev := &Evaluation{Results: []Result{{Gate: config.Gate{Name: "tests"}, Outcome: Fail, ExitCode: 1, Output: garbage,
		Marks: []string{"--- FAIL: TestGone \x00\x1b[1m"}}}}
	text, err := RenderFeedback("", NewFeedback(ev, FeedbackInput{Attempt: 1, MaxAttempts: 2,
		Tried: []Tried{{Gate: "tests", Signature: "abc", Count: 1, Failure: "x\x00\x1b[2Jy"}}}))
	if err != nil {
		t.Fatal(err)
	}
	if what, at, bad := textclean.Problem(text); bad {
		t.Errorf("feedback holds a %s at %d:\n%q", what, at, text)
	}
	if !strings.Contains(text, `got \x00\x01\x02`) || strings.Contains(text, "title") {
		t.Errorf("feedback =\n%s", text)
	}
}

// A timeout tells the agent the time limit and where the output ended;
// with no output, that there was none: never a bare "please fix".
func TestFeedbackTimeout(t *testing.T) {
	for _, tc := range []struct{ output, want string }{
		{"", "It did not finish within 5m0s (the gate's timeout) and was killed, having printed nothing. Find what hangs"},
		{"=== RUN TestServe\nlistening on :8080\n", "```\n=== RUN TestServe\nlistening on :8080\n```\nIt did not finish within 5m0s (the gate's timeout) and was killed: the end of its output above is where it was."},
	} {
		ev := &Evaluation{Results: []Result{{Gate: config.Gate{Name: "tests", Timeout: 5 * time.Minute}, Outcome: TimedOut, ExitCode: -1, Output: tc.output}}}
		got, err := RenderFeedback("", NewFeedback(ev, FeedbackInput{Attempt: 1, MaxAttempts: 2}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("RenderFeedback with output %q =\n%s\nwant it to hold %q", tc.output, got, tc.want)
		}
	}
	// A failure that is not a timeout says nothing of a time limit.
	ev := &Evaluation{Results: []Result{{Gate: config.Gate{Name: "tests", Timeout: 5 * time.Minute}, Outcome: Fail, ExitCode: 1, Output: "boom\n"}}}
	if got, _ := RenderFeedback("", NewFeedback(ev, FeedbackInput{Attempt: 1, MaxAttempts: 2})); strings.Contains(got, "did not finish") {
		t.Errorf("RenderFeedback of a failure =\n%s\nsays it did not finish", got)
	}
}
