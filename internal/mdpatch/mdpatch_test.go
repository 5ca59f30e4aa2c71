package mdpatch

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/yuin/goldmark/text"
)

// wholeBlocks parses the text in one piece, as Walk would without cuts.
func wholeBlocks(s *Source) []Block {
	var blocks []Block
	doc := mdParser.Parse(text.NewReader(s.Text))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		s.collect(n, 0, func(b Block) { blocks = append(blocks, b) })
	}
	return blocks
}

var cutCases = []string{
	"## ISSUE-1\n\n| a | b |\n|---|---|\n| c | d |\n\n## ISSUE-2\n",
	"```\n\n## not a heading\n```\n\n## heading\n",
	"~~~~\n\n## in\n~~~\n\n## still in\n~~~~\n\n## out\n",
	// A vertical tab after the marks: no close (spaces and tabs only).
	"```\n```\v\n\n## in\n```\t \n\n## out\n",
	// A backquote after the marks of backquotes: no fence, code inline.
	"```x`\n\n## out\n```\n\n## in\n",
	"<!--\n\n## in a comment\n-->\n\n## out\n",
	"<!-- one line -->\n\n## out\n",
	"<script>\n\n## in a script\n</script>\n\n## out\n",
	"<div>\n\n## a blank line ended the div\n",
	"para\n## no blank line before\n",
	"- item\n\n## after a list\n",
	"> quote\n\n## after a quote\n",
	"    ## indented code\n\n## real\n",
	"- item\n\n  ```\n\n## in a fence in a list\n  ```\n",
	"Setext\n------\n\n## after\n",
	"<?php\n\n## in\n?>\n\n## out\n",
	"<![CDATA[\n\n## in\n]]>\n\n## out\n",
	"<!DOCTYPE html\n\n## in\n>\n\n## out\n",
}

func TestCutsParseAsTheWhole(t *testing.T) {
	files, _ := filepath.Glob("../../queue/testdata/roundtrip/*.txtar")
	inputs := append([]string(nil), cutCases...)
	for _, f := range files {
		ar, err := txtar.ParseFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, af := range ar.Files {
			if strings.HasSuffix(af.Name, ".md") {
				inputs = append(inputs, string(af.Data))
			}
		}
	}
	for _, in := range inputs {
		s := NewSource([]byte(in))
		if got, want := s.Blocks(), wholeBlocks(s); !reflect.DeepEqual(got, want) {
			t.Errorf("cut parse of %q:\n got %+v\nwant %+v", in, got, want)
		}
	}
}

// FuzzCuts checks that parsing in pieces finds what parsing the whole finds.
func FuzzCuts(f *testing.F) {
	for _, c := range cutCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s := NewSource([]byte(in))
		if got, want := s.Blocks(), wholeBlocks(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("cut parse of %q:\n got %+v\nwant %+v", in, got, want)
		}
	})
}

func TestSameName(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"Auto-Retry", "auto_retry", true},
		{"Auto-Retry", "auto retry", true},
		{"AUTORETRY", "Auto-Retry", true},
		{"Retry-Count", "Retry-Counts", false},
		{"", "-", true},
		{"a", "", false},
	} {
		if got := SameName(c.a, c.b); got != c.want {
			t.Errorf("SameName(%q, %q) = %v; want %v", c.a, c.b, got, c.want)
		}
		if got := Norm(c.a) == Norm(c.b); got != c.want {
			t.Errorf("Norm(%q) == Norm(%q) is %v; want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a|b", `a\|b`},
		{`a\|b`, `a\\|b`},
		{"two\nlines", "two lines"},
		{"  padded  ", "padded"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// appendedCuts checks that a source made by Appended from a source of
// in's first at bytes cuts in as a source of the whole does, and counts
// its lines alike.
func appendedCuts(t *testing.T, in string, at int) {
	t.Helper()
	at = max(0, min(at, len(in)))
	before := NewSource([]byte(in[:at]))
	before.cuts()
	before.Line(len(before.Text))
	got, want := before.Appended([]byte(in)), NewSource([]byte(in))
	if !reflect.DeepEqual(got.cuts(), want.cuts()) {
		t.Fatalf("%q appended to %q: cuts %v, want %v", in[at:], in[:at], got.cuts(), want.cuts())
	}
	for _, off := range []int{0, at, len(in)} {
		if g, w := got.Line(off), want.Line(off); g != w {
			t.Fatalf("%q appended to %q: line %d at %d, want %d", in[at:], in[:at], g, off, w)
		}
	}
}

// TestAppendedCuts: each case cut at each of its bytes, and the queue's
// new issue after each.
func TestAppendedCuts(t *testing.T) {
	issue := "\n## ISSUE-20241213-009\n\n| Field | Value |\n|---|---|\n| Status | pending |\n"
	for _, c := range append(cutCases, "\xEF\xBB\xBF## ISSUE-1\n\n## ISSUE-2\n", "## a\r\n\r\n## b\r\n") {
		for at := 0; at <= len(c); at++ {
			appendedCuts(t, c, at)
		}
		appendedCuts(t, c+issue, len(c))
	}
}

func FuzzAppendedCuts(f *testing.F) {
	for _, c := range cutCases {
		f.Add(c, len(c)/2)
	}
	f.Fuzz(appendedCuts)
}

// appendedUncut checks that a source made by Appended from a source of
// in's first at bytes that was never cut walks in as a source of the
// whole does (the same blocks), though it keeps those bytes as one piece;
// and that what was added is cut as the whole is, when the first part
// leaves no block open.
func appendedUncut(t *testing.T, in string, at int) {
	t.Helper()
	at = max(0, min(at, len(in)))
	got, want := NewSource([]byte(in[:at])).Appended([]byte(in)), NewSource([]byte(in))
	if g, w := got.Blocks(), want.Blocks(); !reflect.DeepEqual(g, w) {
		t.Fatalf("%q appended to %q uncut: blocks\n%+v\nwant\n%+v", in[at:], in[:at], g, w)
	}
	// Two additions, the source never cut between them.
	mid := (at + len(in)) / 2
	twice := NewSource([]byte(in[:at])).Appended([]byte(in[:mid])).Appended([]byte(in))
	if g, w := twice.Blocks(), want.Blocks(); !reflect.DeepEqual(g, w) {
		t.Fatalf("%q and %q appended to %q uncut: blocks\n%+v\nwant\n%+v", in[at:mid], in[mid:], in[:at], g, w)
	}
	first := NewSource([]byte(in[:at]))
	if len(first.Text) == 0 || len(got.Raw)-len(got.Text) != len(first.Raw)-len(first.Text) || !first.closedAt(len(first.Text)) {
		return
	}
	var added, wantAdded []int
	for _, c := range got.cuts() {
		if c >= len(first.Text) {
			added = append(added, c)
		}
	}
	for _, c := range want.cuts() {
		if c >= len(first.Text) {
			wantAdded = append(wantAdded, c)
		}
	}
	if !reflect.DeepEqual(added, wantAdded) {
		t.Fatalf("%q appended to %q uncut: cuts in the addition %v, want %v", in[at:], in[:at], added, wantAdded)
	}
}

// TestAppendedUncut: each case cut at each of its bytes, and the queue's
// new issue after each, with and without a blank line before it, and
// after a fence left open.
func TestAppendedUncut(t *testing.T) {
	issue := "## ISSUE-20241213-009\n\n| Field | Value |\n|---|---|\n| Status | pending |\n"
	for _, c := range append(cutCases, "\xEF\xBB\xBF## ISSUE-1\n\n## ISSUE-2\n", "## a\r\n\r\n## b\r\n", "## a\n\n```\nopen\n") {
		for at := 0; at <= len(c); at++ {
			appendedUncut(t, c, at)
		}
		appendedUncut(t, c+"\n"+issue, len(c))
		appendedUncut(t, c+issue, len(c))
	}
}

func FuzzAppendedUncut(f *testing.F) {
	for _, c := range cutCases {
		f.Add(c, len(c)/2)
	}
	f.Fuzz(appendedUncut)
}

// lineByLineCuts is findCutsFrom as it was first written, each line looked
// at whole: what the quick scan must find.
func lineByLineCuts(t []byte, from int) []int {
	cuts := []int{from}
	var fence byte
	fenceLen := 0
	htmlEnd := ""
	blank := true
	// Each line, from ls to le, its ending included; after a last line
	// ending, the empty line that follows.
	for ls, le, more := from, from, true; more; ls = le {
		le, more = len(t), false
		if i := bytes.IndexByte(t[ls:], '\n'); i >= 0 {
			le, more = ls+i+1, true
		}
		line := t[ls:le]
		if len(line) > 0 && htmlEnd == "" && plainStart(line[0]) {
			// Most lines: no fence, no HTML, no heading, not blank.
			blank = false
			continue
		}
		trimmed := bytes.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		isBlank := blankLine(trimmed)
		switch {
		case fence != 0:
			if indent <= 3 && fenceRun(trimmed, fence) >= fenceLen && closesFence(trimmed[fenceRun(trimmed, fence):]) {
				fence = 0
			}
		case htmlEnd != "":
			if bytes.Contains(bytes.ToLower(line), []byte(htmlEnd)) {
				htmlEnd = ""
			}
		case indent <= 3 && (fenceRun(trimmed, '`') >= 3 && opensFence('`', trimmed[fenceRun(trimmed, '`'):]) || fenceRun(trimmed, '~') >= 3):
			fence = trimmed[0]
			fenceLen = fenceRun(trimmed, fence)
		case indent <= 3 && len(trimmed) > 1 && trimmed[0] == '<':
			htmlEnd = htmlBlockEnd(trimmed)
			if htmlEnd != "" && bytes.Contains(bytes.ToLower(trimmed[1:]), []byte(htmlEnd)) {
				htmlEnd = "" // opened and closed on one line
			}
		case blank && ls > from && bytes.HasPrefix(line, []byte("## ")):
			cuts = append(cuts, ls)
		}
		blank = isBlank && fence == 0 && htmlEnd == ""
	}
	return cuts
}

// sameCuts checks that the quick scan cuts in as the line-by-line one,
// from the start and from each of its cuts.
func sameCuts(t *testing.T, in string) {
	t.Helper()
	s := NewSource([]byte(in))
	for _, from := range append([]int{0}, lineByLineCuts(s.Text, 0)...) {
		if got, want := s.findCutsFrom(from), lineByLineCuts(s.Text, from); !reflect.DeepEqual(got, want) {
			t.Fatalf("cuts of %q from %d: %v, want %v", in, from, got, want)
		}
	}
}

// TestQuickCuts: the cases, each cut short at each of its bytes, with
// lines of every length about the eight bytes looked at at once.
func TestQuickCuts(t *testing.T) {
	cases := append(cutCases, "## a\r\n\r\n## b\r\n", "\n## ", "\n\n##", "```\n## a\n  ```\n\n## b\n", "~~~~\n~~~\n ~~~~ \n\n## c", "x\n\n    ```\n\n## a\n", "```\n    ```\n\n## c\n   ```\n\n## d\n", "<pre>\n\n## a\n</PRE>\n\n## b\n", "a\n\n### b\n\n##c\n\n## d\n\n####\n\n## e")
	for n := range 80 {
		long := strings.Repeat("x", n)
		cases = append(cases, "# t\n\n## "+long+"\n"+long+"\n\n## b\n", long+"\n\n## c\n```"+long+"\n\n## d\n")
	}
	for _, c := range cases {
		for at := 0; at <= len(c); at++ {
			sameCuts(t, c[:at])
		}
	}
}

// TestCutsFarApart: marks further apart than the stretch each is looked
// for in at a time (markStretch), every mark at each place about a
// stretch's end: a fence, an HTML block and a heading the scan comes to
// only after a stretch without them.
func TestCutsFarApart(t *testing.T) {
	for _, n := range []int{markStretch - 8, markStretch - 1, markStretch, markStretch + 1, 2*markStretch + 3} {
		for pad := range 6 {
			gap := strings.Repeat("y", pad) + "\n" + strings.Repeat("text\n", n/5) + strings.Repeat("z", n%5) + "\n\n"
			sameCuts(t, "# q\n\n## a\n"+gap+"```\n"+gap+"## in a fence\n```\n\n## b\n"+gap+"<pre>\n"+gap+"## in html\n</pre>\n\n## c\n"+gap+"~~~\n\n## in a tilde fence\n"+gap+"~~~\n"+gap+"## d\n"+gap)
		}
	}
}

func FuzzQuickCuts(f *testing.F) {
	for _, c := range cutCases {
		f.Add(c)
	}
	f.Fuzz(sameCuts)
}

// plainStart reports whether a line that starts with c is, for cuts,
// nothing but text: not blank, not indented, and no fence, HTML block or
// heading.
func plainStart(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\v', '\f', '`', '~', '<', '#':
		return false
	}
	return c < 0x80
}

// blankLine is len(bytes.TrimSpace(line)) == 0, quick for the lines that
// start with something else than white space, as most do.
func blankLine(line []byte) bool {
	if len(line) > 0 {
		switch c := line[0]; {
		case c >= 0x80:
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
		default:
			return false
		}
	}
	return len(bytes.TrimSpace(line)) == 0
}
