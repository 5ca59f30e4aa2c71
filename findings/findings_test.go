package findings

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// seed003 is the markdown of seed 003's "Failed Gate: code_review" example,
// with a suggestion, as a reviewer prints it.
const seed003 = `Here is my review.

### P0 Critical
- src/auth.gleam:42 - SQL injection vulnerability in query construction
  Suggestion: Use a parameterized query.

### P1 Major
- src/user.gleam:15 - Missing error handling for database timeout

### P2 Minor
None

### P3 Nit
- None
`

func TestParseFindings(t *testing.T) {
	auth := Finding{Priority: P0, File: "src/auth.gleam", Line: 42, Issue: "SQL injection vulnerability in query construction", Suggestion: "Use a parameterized query."}
	user := Finding{Priority: P1, File: "src/user.gleam", Line: 15, Issue: "Missing error handling for database timeout"}
	for _, tt := range []struct {
		name string
		out  string
		want []Finding
	}{
		{"seed 003 markdown", seed003, []Finding{auth, user}},
		{"JSON lines", `{"priority": "P0", "file": "src/auth.gleam", "line": 42, "issue": "SQL injection vulnerability in query construction", "suggestion": "Use a parameterized query."}
{"priority": "p1", "file": "./src/user.gleam", "line": "15", "issue": "Missing error handling  for database timeout", "extra": 1}
`, []Finding{auth, user}},
		{"JSON array in a fence", "```json\n[{\"severity\": \"critical\", \"file\": \"src/auth.gleam\", \"line\": 42, \"issue\": \"SQL injection vulnerability in query construction\", \"suggestion\": \"Use a parameterized query.\"}]\n```\n",
			[]Finding{auth}},
		{"findings object", `{"findings": [{"priority": "major", "file": "src/user.gleam", "line": 15, "issue": "Missing error handling for database timeout"}]}`, []Finding{user}},
		{"one JSON object", `{"priority": "P1", "issue": "No tests for the new flag"}`, []Finding{{Priority: P1, Issue: "No tests for the new flag"}}},
		{"empty array", "[]", []Finding{}},
		{"no findings", "no findings\n", nil},
		{"No issues found.", "  No issues found.\n", nil},
		{"none in a heading", "### None\n", nil},
		{"no findings in a fence", "```\nno findings\n```", nil},
		{"markdown variants", `## Review

**P1 - Major**
1. ` + "`src/a.go:10`" + ` — off by one in the loop bound
   that reads past the end
   - **Suggestion:** use < instead of <=
2. **b/c.py:3:7**: shadowed builtin
* Missing tests for the new flag

## Critical issues
- Makefile - the clean target deletes the source
  Suggestion: remove rm -rf src

## Summary
- not a finding: outside the priority sections

#### p3 nits
- README.md: typo in "recieve"
`, []Finding{
			{Priority: P1, File: "src/a.go", Line: 10, Issue: "off by one in the loop bound that reads past the end", Suggestion: "use < instead of <="},
			{Priority: P1, File: "b/c.py", Line: 3, Issue: "shadowed builtin"},
			{Priority: P1, Issue: "Missing tests for the new flag"},
			{Priority: P0, Issue: "Makefile - the clean target deletes the source", Suggestion: "remove rm -rf src"},
			{Priority: P3, File: "README.md", Issue: `typo in "recieve"`},
		}},
		{"only empty sections", "### P0 Critical\nNone\n### P1 Major\n(none)\n", []Finding{}},
		{"CRLF and colours", "\x1b[1m### P1 Major\x1b[0m\r\n- a.go:1 - x\r\n", []Finding{{Priority: P1, File: "a.go", Line: 1, Issue: "x"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.out))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.out, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) =\n  %+v\nwant\n  %+v", tt.out, got, tt.want)
			}
		})
	}
}

func TestParseFindingsGarbage(t *testing.T) {
	for _, tt := range []struct{ out, want string }{
		{"", `printed nothing (want findings, or "no findings")`},
		{"  \n\n", `printed nothing`},
		{"Sure! The code looks mostly fine, but I would rename x.", `neither JSON findings nor markdown sections (### P0 Critical, ### P1 Major, …), and not "no findings": it begins "Sure! The code looks mostly fine, but I would rename x."`},
		{"- a.go:1 - a finding without a section\n", "neither JSON findings nor markdown sections"},
		{"{\"priority\": \"P1\", \"issue\": \"x\"}\nand then prose\n", `line 2: not a JSON finding: "and then prose"`},
		{"\n\n{\"priority\": \"P1\", \"issue\": \"x\"}\n{\"priority\": \"P9\", \"issue\": \"y\"}\n", `line 4: unknown priority "P9" (want P0, P1, P2 or P3)`},
		{"```json\n{\"priority\": \"P1\", \"issue\": \"x\"}\n{\"issue\": \"y\"}\n```", `line 3: a finding needs a "priority" (P0 to P3)`},
		{`{"priority": "P1", "issue": ""}`, `finding 1: a finding needs an "issue"`},
		{`{"priority": "P1", "issue": "x", "line": "ten"}`, `finding 1: line "ten" is not a line number`},
		{`{"priority": "P1", "issue": "x", "line": -3}`, `finding 1: line -3 is not a line number`},
		{`[1, 2]`, `a JSON array that is not of findings`},
		{`{"findings": "none"}`, `"findings" is not a list of findings`},
		{`{"priority": "P1", "issue": "x"} {"priority": "P1", "issue": "y"}`, `line 1: not a JSON finding`},
	} {
		_, err := Parse([]byte(tt.out))
		var fe *ParseError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v; want a *ParseError with %q", tt.out, err, tt.want)
		}
	}
}

func TestMergeFindings(t *testing.T) {
	a := []Finding{
		{Priority: P2, File: "a.go", Line: 3, Issue: "Nil map write", Dimensions: []string{"correctness"}},
		{Priority: P3, File: "b.go", Line: 1, Issue: "naming", Dimensions: []string{"correctness"}},
	}
	b := []Finding{
		{Priority: P0, File: "a.go", Line: 3, Issue: "nil  map write.", Suggestion: "make the map", Dimensions: []string{"resilience"}},
		{Priority: P1, File: "a.go", Line: 4, Issue: "Nil map write", Dimensions: []string{"resilience"}},
		{Priority: P3, File: "b.go", Line: 1, Issue: "naming", Dimensions: []string{"correctness"}},
	}
	got := Merge(a, b)
	want := []Finding{
		{Priority: P0, File: "a.go", Line: 3, Issue: "Nil map write", Suggestion: "make the map", Dimensions: []string{"correctness", "resilience"}},
		{Priority: P1, File: "a.go", Line: 4, Issue: "Nil map write", Dimensions: []string{"resilience"}},
		{Priority: P3, File: "b.go", Line: 1, Issue: "naming", Dimensions: []string{"correctness"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Merge =\n  %+v\nwant\n  %+v", got, want)
	}
	if len(a[0].Dimensions) != 1 {
		t.Errorf("Merge changed its input: %+v", a[0])
	}
}

func TestSignatureText(t *testing.T) {
	one := []Finding{
		{Priority: P1, File: "src/user.go", Line: 15, Issue: "Missing error handling", Suggestion: "wrap it", Dimensions: []string{"correctness"}},
		{Priority: P0, File: "src/auth.go", Line: 42, Issue: "SQL injection"},
	}
	// The same findings, moved, reordered, advised otherwise, found by others.
	moved := []Finding{
		{Priority: P0, File: "src/auth.go", Line: 50, Issue: "SQL  injection"},
		{Priority: P1, File: "src/user.go", Line: 19, Issue: "Missing error handling", Suggestion: "return it", Dimensions: []string{"resilience"}},
	}
	want := "P0 src/auth.go - SQL injection\nP1 src/user.go - Missing error handling\n"
	if got := SignatureText(one); got != want {
		t.Errorf("SignatureText(one) = %q; want %q", got, want)
	}
	if SignatureText(moved) != SignatureText(one) {
		t.Errorf("SignatureText differs for the same findings moved: %q, %q", SignatureText(moved), SignatureText(one))
	}
	for _, other := range [][]Finding{
		one[:1],
		{{Priority: P1, File: "src/user.go", Issue: "Missing error handling"}, {Priority: P1, File: "src/auth.go", Issue: "SQL injection"}},
		{{Priority: P1, File: "src/user.go", Issue: "Missing error handling"}, {Priority: P0, File: "src/db.go", Issue: "SQL injection"}},
		{{Priority: P1, File: "src/user.go", Issue: "Missing error handling"}, {Priority: P0, File: "src/auth.go", Issue: "XSS"}},
	} {
		if SignatureText(other) == SignatureText(one) {
			t.Errorf("SignatureText(%+v) = SignatureText(one): a different set of findings", other)
		}
	}
}

func TestFindingsMarkdownRoundTrip(t *testing.T) {
	fs, err := Parse([]byte(seed003))
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(fs)
	want := "### P0 Critical\n- src/auth.gleam:42 - SQL injection vulnerability in query construction\n  Suggestion: Use a parameterized query.\n\n### P1 Major\n- src/user.gleam:15 - Missing error handling for database timeout\n"
	if md != want {
		t.Errorf("Markdown =\n%s\nwant\n%s", md, want)
	}
	back, err := Parse([]byte(md))
	if err != nil || !reflect.DeepEqual(back, fs) {
		t.Errorf("Parse(Markdown(fs)) = %+v, %v; want %+v", back, err, fs)
	}
}

func TestGroupFindings(t *testing.T) {
	fs := []Finding{
		{Priority: P2, File: "c.go", Issue: "minor"},
		{Priority: P0, File: "a.go", Line: 1, Issue: "critical"},
		{Priority: P2, File: "b.go", Issue: "minor too"},
	}
	got := Groups(fs, P1)
	if len(got) != 2 || got[0].Priority != "P0" || !got[0].Blocking || got[1].Priority != "P2" || got[1].Blocking ||
		got[1].Title != "Minor" || len(got[1].Items) != 2 || got[1].Items[0].Location != "b.go" {
		t.Errorf("Groups = %+v", got)
	}
}

// FuzzParse: no output makes the parser panic; what it accepts
// are findings with a priority and a one-line issue, which survive a round
// trip through the JSON lines a synthesis command reads.
func FuzzParse(f *testing.F) {
	f.Add([]byte(seed003))
	f.Add([]byte(`{"priority": "P1", "file": "a.go", "line": 3, "issue": "x", "suggestion": "y"}`))
	f.Add([]byte("```json\n[{\"severity\": \"major\", \"issue\": \"z\"}]\n```"))
	f.Add([]byte("no findings"))
	f.Add([]byte("#### P3\n1. `x.go:1:2`: y\n   Suggestion: z\n   more\n"))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "findings", "*"))
	for _, name := range seeds {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		fs, err := Parse(out)
		if err != nil {
			var fe *ParseError
			if !errors.As(err, &fe) || fe.Msg == "" {
				t.Fatalf("Parse(%q): error %v is not a *ParseError", out, err)
			}
			return
		}
		for _, x := range fs {
			if x.Priority < P0 || x.Priority > P3 || x.Issue == "" || strings.ContainsAny(x.Issue+x.Suggestion+x.File, "\n\r") || x.Line < 0 {
				t.Fatalf("Parse(%q): bad finding %+v", out, x)
			}
		}
		back, err := Parse(JSONLines(fs))
		if len(fs) == 0 {
			return
		}
		if err != nil || !reflect.DeepEqual(back, fs) {
			t.Fatalf("Parse(%q) = %+v; through JSON lines: %+v, %v", out, fs, back, err)
		}
		SignatureText(Merge(fs))
	})
}
