package queue

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/orchestrate-dev/orchestrate/results"
)

// The Tests field reads its items back as they were set, a ";" and a
// backslash inside an item included, and a pipe through the table's cell.
func TestTestsRoundTrip(t *testing.T) {
	units := []results.Unit{
		{Gate: "tests", ID: "github.com/x/y TestA"},
		{Gate: "tests", ID: `tests/test_x.py::test_y[a;b]`},
		{Gate: "lint", ID: `a.go: S1000: use x\y | z`},
		{Gate: "build"},
	}
	v := FormatTests(units)
	if want := `tests: github.com/x/y TestA; tests: tests/test_x.py::test_y[a\;b]; lint: a.go: S1000: use x\\y | z; build`; v != want {
		t.Fatalf("FormatTests = %q; want %q", v, want)
	}
	q := Parse([]byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n"))
	is := q.Issues[0]
	is.SetTests(units)
	q = Parse(q.Bytes())
	if len(q.Problems) > 0 {
		t.Fatalf("problems: %v\n%s", q.Problems, q.Bytes())
	}
	if got := q.Issues[0].Tests(); !slices.Equal(got, units) {
		t.Fatalf("Tests() = %q; want %q\n%s", got, units, q.Bytes())
	}
}

// SetTests with none leaves an issue without the field as it is.
func TestSetTestsNone(t *testing.T) {
	data := []byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n")
	q := Parse(data)
	q.Issues[0].SetTests(nil)
	if got := string(q.Bytes()); got != string(data) {
		t.Fatalf("SetTests(nil) changed the file:\n%s", got)
	}
}

// A malformed item is a problem at the field's line: an empty item, an
// item with no gate; CheckValue refuses them as issue set does.
func TestTestsProblems(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"tests: TestA;; tests: TestB", "item 2 of Tests is empty"},
		{"tests: TestA; ", "item 2 of Tests is empty"},
		{": TestA", `item 1 of Tests, ": TestA", names no gate`},
	} {
		q := Parse([]byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Tests | " + c.value + " |\n"))
		if len(q.Problems) != 1 || q.Problems[0].Line != 6 || !strings.Contains(q.Problems[0].Msg, c.want) {
			t.Errorf("%q: problems = %v; want one at line 6: %s", c.value, q.Problems, c.want)
		}
		if err := CheckValue("tests", c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckValue(%q) = %v; want %s", c.value, err, c.want)
		}
	}
	// The well-formed items still read.
	q := Parse([]byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Tests | a: x;; : y; b |\n"))
	if got, want := q.Issues[0].Tests(), []results.Unit{{Gate: "a", ID: "x"}, {Gate: "b"}}; !slices.Equal(got, want) {
		t.Errorf("Tests() = %q; want %q", got, want)
	}
	if err := CheckValue("Tests", `tests: a\;b; lint`); err != nil {
		t.Errorf("CheckValue of a good value: %v", err)
	}
}

// FuzzTests checks the Tests field's round trip: what ParseTests reads,
// FormatTests writes back as a value that reads the same, and units a
// filing could hold (a gate name without ": ", one-line trimmed text)
// read back as they were.
func FuzzTests(f *testing.F) {
	f.Add(`tests: github.com/x/y TestA; lint: a.go: S1000: x\;y; build`, "tests", `a\;b\`)
	f.Add(`; \\; \`, "g;", "x; y")
	f.Fuzz(func(t *testing.T, value, gate, id string) {
		if units, err := ParseTests(value); err == nil {
			again, err := ParseTests(FormatTests(units))
			if err != nil || !slices.Equal(again, units) {
				t.Fatalf("%q: read %q, formatted %q, read back %q (%v)", value, units, FormatTests(units), again, err)
			}
		}
		u := results.Unit{Gate: gate, ID: id}
		if !fileable(u) {
			return
		}
		in := []results.Unit{u, {Gate: gate}}
		got, err := ParseTests(FormatTests(in))
		if err != nil || !slices.Equal(got, in) {
			t.Fatalf("%q formatted %q, read back %q (%v)", in, FormatTests(in), got, err)
		}
	})
}

// fileable reports whether a unit is one a gate's results could name.
func fileable(u results.Unit) bool {
	if u.Gate == "" || strings.Contains(u.Gate, ": ") {
		return false
	}
	for _, s := range []string{u.Gate, u.ID} {
		if s != strings.TrimSpace(s) || strings.ContainsFunc(s, unicode.IsControl) {
			return false
		}
	}
	return true
}
