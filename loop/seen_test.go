package loop

import (
	"strings"
	"testing"
)

// TestHeadlinesInOutputOrder: a failure's first failing test is the first
// in its output (TestCommas), not the alphabetically first (FuzzComma),
// which the normalized text, its blocks sorted, puts first.
func TestHeadlinesInOutputOrder(t *testing.T) {
	t.Parallel()
	w := Workspace{Dir: t.TempDir()}
	out := "=== RUN TestCommas\n--- FAIL: TestCommas (0.01s)\n    comma_test.go:12: Commas(1000) = \"1000\"; want \"1,000\"\n" +
		"--- FAIL: FuzzComma (0.00s)\n    comma_test.go:30: round trip 2\nFAIL\nFAIL\texample.com/c\t0.004s\n"
	heads := w.headlines([]byte(out))
	if len(heads) < 2 || heads[0] != `--- FAIL: TestCommas (<dur>): comma_test.go:N: Commas(1000) = "1000"; want "1,000"` ||
		heads[1] != "--- FAIL: FuzzComma (<dur>): comma_test.go:N: round trip 2" {
		t.Errorf("headlines = %q; want TestCommas's, then FuzzComma's", heads)
	}
	py := "____ test_b ____\nE   assert 1 == 2\n=== short test summary info ===\nFAILED t.py::test_b - assert 1 == 2\nFAILED t.py::test_a - assert 3 == 4\n"
	if heads := w.headlines([]byte(py)); len(heads) != 2 || heads[0] != "FAILED t.py::test_b - assert 1 == 2" {
		t.Errorf("pytest headlines = %q; want its FAILED lines, in order", heads)
	}
	if heads := w.headlines([]byte("all good\n")); len(heads) != 0 {
		t.Errorf("headlines of no failure = %q; want none", heads)
	}
}

// TestDistinctHeadline: two different failures with the same first
// failing test and message read apart: the second names what differs.
func TestDistinctHeadline(t *testing.T) {
	t.Parallel()
	first := `--- FAIL: TestCommas: want "1,000"`
	seen := map[string]string{"aaaaaaaaaaaa": first}
	if got := distinctHeadline(seen, "aaaaaaaaaaaa", []string{first, "--- FAIL: FuzzComma: round trip 1"}); got != first {
		t.Errorf("the failure's own line again = %q; want %q", got, first)
	}
	got := distinctHeadline(seen, "bbbbbbbbbbbb", []string{first, "--- FAIL: FuzzComma: round trip 2"})
	if got != first+"; also --- FAIL: FuzzComma: round trip 2" {
		t.Errorf("distinctHeadline = %q; want the first line and what differs", got)
	}
	seen["bbbbbbbbbbbb"] = got
	got = distinctHeadline(seen, "cccccccccccc", []string{first, "--- FAIL: FuzzComma: round trip 2", "--- FAIL: TestZ: nil"})
	if !strings.HasSuffix(got, "; also --- FAIL: TestZ: nil") {
		t.Errorf("distinctHeadline = %q; want the first other failure no other line holds", got)
	}
	if got := distinctHeadline(seen, "dddddddddddd", []string{"--- FAIL: TestOther: x"}); got != "--- FAIL: TestOther: x" {
		t.Errorf("distinctHeadline of a new first line = %q", got)
	}
}
