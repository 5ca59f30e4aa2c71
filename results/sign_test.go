package results

import (
	"testing"

	"github.com/orchestrate-dev/orchestrate/signature"
)

func TestSignIsOrderFree(t *testing.T) {
	a := Failed{Unit: Unit{Gate: "tests", ID: "pkg TestA"}, Block: "--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2\n"}
	b := Failed{Unit: Unit{Gate: "tests", ID: "pkg TestB"}, Block: "--- FAIL: TestB (0.00s)\n    b_test.go:4: got x\n"}
	ab, _ := Sign([]Failed{a, b}, signature.Options{})
	ba, _ := Sign([]Failed{b, a}, signature.Options{})
	if ab != ba {
		t.Errorf("Sign(a, b) = %s, Sign(b, a) = %s: want one signature", ab, ba)
	}
	only, _ := Sign([]Failed{a}, signature.Options{})
	if only == ab {
		t.Errorf("Sign(a) = Sign(a, b) = %s: a second failing unit must change it", only)
	}
	other := a
	other.Block = "--- FAIL: TestA (0.00s)\n    a_test.go:9: got 3, want 2\n"
	if s, _ := Sign([]Failed{other}, signature.Options{}); s == only {
		t.Errorf("another message signs as %s too", s)
	}
}

func TestParseUnit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Unit
	}{
		{"tests: github.com/x/y TestA", Unit{"tests", "github.com/x/y TestA"}},
		{" lint : a.go: errcheck: x ", Unit{"lint", "a.go: errcheck: x"}},
		{"build", Unit{Gate: "build"}},
	} {
		if got := ParseUnit(tc.in); got != tc.want {
			t.Errorf("ParseUnit(%q) = %+v; want %+v", tc.in, got, tc.want)
		}
		if got := ParseUnit(tc.want.String()); got != tc.want {
			t.Errorf("ParseUnit(String(%+v)) = %+v", tc.want, got)
		}
	}
}
