package queue

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
)

// Peek reads what the parser reads, whenever it says it read it: the
// property the fuzz target checks on any text.
func checkPeek(t *testing.T, piece string) {
	t.Helper()
	names := []string{"status", "priority", "claimedby", "leaseuntil"}
	fields := []string{FieldStatus, FieldPriority, FieldClaimedBy, FieldLeaseUntil}
	values := make([][]byte, len(names))
	id, ok := Peek([]byte(piece), values, names...)
	// What Peek reads is what it reads row by row, each row looked at
	// whole, with the regular expression of IDs.
	was := make([][]byte, len(names))
	// (What either gives with ok false is not to be read.)
	if wasID, wasOK := peekRowByRow([]byte(piece), was, names...); ok != wasOK || ok && (!bytes.Equal(id, wasID) || !slices.EqualFunc(values, was, bytes.Equal)) {
		t.Fatalf("Peek: %q %v %q; row by row: %q %v %q\n%s", id, ok, values, wasID, wasOK, was, piece)
	}
	// The heading's text, as the ID Peek reads: told as the pattern tells.
	line, _, _ := strings.Cut(piece, "\n")
	if title := strings.TrimSpace(strings.TrimPrefix(line, "## ")); isID([]byte(title)) != idPattern.MatchString(title) {
		t.Fatalf("isID(%q) = %v; the pattern says otherwise", title, isID([]byte(title)))
	}
	if !ok {
		return
	}
	q := Parse([]byte(piece))
	if len(q.Issues) != 1 || q.Issues[0].ID != string(id) {
		t.Fatalf("Peek read issue %q; the parser %d issues:\n%s", id, len(q.Issues), piece)
	}
	is := q.Issues[0]
	for i, f := range fields {
		want, _ := is.Get(f)
		if string(values[i]) != unquote(strings.TrimSpace(want)) {
			t.Errorf("%s: Peek %q, the parser %q:\n%s", f, values[i], want, piece)
		}
	}
}

func TestPeek(t *testing.T) {
	for _, piece := range []string{
		"## ISSUE-20260101-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Priority | `high` |\n| claimed_by | a@h/1 |\n",
		"## ISSUE-20260101-002\n\n|Field|Value|\n|-|-|\n|Status|resolved|\n\n### Summary\n\n| Status | pending |\n",
		"## ISSUE-20260101-003\n\n| Field | Value |\n|---|---|\n| Lease Until | 2026-01-01T00:00:00Z |\n",
		// A field written twice: the first, as the parser reads it, even
		// empty; a row without a value cell is none.
		"## ISSUE-20260101-006\n\n| Field | Value |\n|---|---|\n| Status | pending |\n| Status | resolved |\n",
		"## ISSUE-20260101-007\n\n| Field | Value |\n|---|---|\n| Priority | |\n| Priority | high |\n| Status |\n| Status | stuck |\n",
		// A CRLF queue; a delimiter row with colons.
		"## ISSUE-20260101-008\r\n\r\n| Field | Value |\r\n|:---|---:|\r\n| Status | pending |\r\n",
	} {
		if _, ok := Peek([]byte(piece), make([][]byte, 1), "status"); !ok {
			t.Errorf("Peek could not read:\n%s", piece)
		}
		checkPeek(t, piece)
	}
	// Not plainly an issue with a table: left to the parser.
	for _, piece := range []string{
		"# Issue Queue\n",
		"## Notes\n\n| Field | Value |\n|---|---|\n| Status | pending |\n",
		"## ISSUE-20260101-004\n\n```\n| Status | pending |\n```\n",
		"## ISSUE-20260101-005\n\n| Field | Value |\n|---|---|\n| Status | pend\\|ing |\n",
		// An issue after the first in the piece, its heading under text
		// (no blank line before it), or a setext heading.
		"## ISSUE-20260101-009\n\n| Field | Value |\n|---|---|\n| Status | resolved |\n\ntext\n## ISSUE-20260101-010\n\n| Field | Value |\n|---|---|\n| Status | pending |\n",
		"## ISSUE-20260101-011\n\n| Field | Value |\n|---|---|\n| Status | resolved |\n\nISSUE-20260101-012\n---\n",
		// A carriage return within a row, which ends it for the parser;
		// a vertical tab after the delimiter row, a tab before it, or a
		// delimiter cell of two colons at an end: no table for the parser.
		"## ISSUE-20260101-013\n\n| Field | Value |\n|---|---|\n| Title | a\r| Status | pending |\n",
		"## ISSUE-20260101-014\n\n| Field | Value |\n|---|---|\v\n| Status | pending |\n",
		"## ISSUE-20260101-015\n\n| Field | Value |\n\t|---|---|\n| Status | pending |\n",
		"## ISSUE-20260101-016\n\n| Field | Value |\n|---|---::|\n| Status | pending |\n",
		// A first table of other than two columns, or a value cell with
		// nothing in it, not even a space.
		"## ISSUE-20260101-017\n\n| Field | Value | Note |\n|---|---|---|\n| Status | pending | x |\n",
		"## ISSUE-20260101-018\n\n| Field | Value |\n|---|---|\n| Status ||\n| Status | pending |\n",
	} {
		if _, ok := Peek([]byte(piece), make([][]byte, 1), "status"); ok {
			t.Errorf("Peek read:\n%s", piece)
		}
	}
}

// peekRowByRow is Peek as it was first written: the rows each looked at
// whole, the ID matched with idPattern (and a field written twice read
// as the parser reads it, the first). Peek must read as it.
func peekRowByRow(piece []byte, values [][]byte, names ...string) (id []byte, ok bool) {
	clear(values)
	line, rest, _ := bytes.Cut(piece, []byte("\n"))
	title, found := bytes.CutPrefix(bytes.TrimRight(line, " \r"), []byte("## "))
	if id = bytes.TrimSpace(title); !found || !idPattern.Match(id) {
		return nil, false
	}
	// Blank lines, then the table: a header row, a delimiter row of as
	// many cells, and rows up to a blank line or the piece's end; anything
	// else is left to the parser.
	rows, header := 0, 0
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, " \t\r")
		switch {
		case len(line) == 0 && rows == 0:
			continue
		case len(line) == 0:
			return id, rows > 2 && !headingIn(rest)
		case line[0] != '|' || bytes.IndexByte(line, '\\') >= 0 || bytes.IndexByte(line, '\r') >= 0 || bytes.IndexByte(line, '`') >= 0 && bytes.Count(line, []byte("|")) > 3:
			return nil, false
		}
		rows++
		switch rows {
		case 1:
			// Two named columns, as Field | Value.
			inner := bytes.TrimSuffix(line[1:], []byte("|"))
			a, b, _ := bytes.Cut(inner, []byte("|"))
			if header = cellCount(line); header != 2 || len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
				return nil, false
			}
			continue
		case 2:
			if !delimiterRowByCells(line) || cellCount(line) != header {
				return nil, false
			}
			continue
		}
		name, value, found := bytes.Cut(line[1:], []byte("|"))
		if !found || len(value) == 0 {
			continue
		}
		empty := bytes.HasPrefix(value, []byte("|"))
		value, _, _ = bytes.Cut(value, []byte("|"))
		for i, n := range names {
			if values[i] == nil && normEqual(name, n) {
				if empty {
					return nil, false // an empty cell: left to the parser
				}
				values[i] = unquoteBytes(bytes.TrimSpace(value))
				if values[i] == nil {
					values[i] = value[:0]
				}
			}
		}
	}
	return id, rows > 2
}

// delimiterRowByCells is delimiterRow as first written, the row cut into
// its cells.
func delimiterRowByCells(line []byte) bool {
	inner := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("|")), []byte("|"))
	for more := true; more; {
		var cell []byte
		cell, inner, more = bytes.Cut(inner, []byte("|"))
		cell = bytes.Trim(cell, " \t")
		cell, _ = bytes.CutPrefix(cell, []byte(":"))
		cell, _ = bytes.CutSuffix(cell, []byte(":"))
		if len(cell) == 0 || len(bytes.Trim(cell, "-")) != 0 {
			return false
		}
	}
	return true
}

// normEqual reports whether mdpatch.Norm(string(name)) == norm, without
// making the string.
func normEqual(name []byte, norm string) bool {
	j := 0
	for _, c := range name {
		if mdpatch.NameSep(c) {
			continue
		}
		if j >= len(norm) || norm[j] != mdpatch.Lower(c) {
			return false
		}
		j++
	}
	return j == len(norm)
}

// cellCount counts a table row's cells, its outer pipes left out.
func cellCount(line []byte) int {
	inner := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("|")), []byte("|"))
	return bytes.Count(inner, []byte("|")) + 1
}

func FuzzPeek(f *testing.F) {
	f.Add("## ISSUE-20260101-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Claimed-By | a |\n")
	f.Add("## ISSUE-20260101-001\n| Field | Value |\n| --- | --- |\n| Status | `stuck` |\n\ntext\n")
	f.Add("## ISSUE-20260101-001\n\n<div>\n| Status | pending |\n</div>\n")
	f.Add("## ISSUE-20260101-001\n\n| Field | Value |\n|---|---|\n| Priority | `high` |\n| Status | `a|b` |\n| Claimed-By | x\\|y |\n")
	f.Add("## ISSUE-2026010-0001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n")
	f.Fuzz(func(t *testing.T, piece string) {
		checkPeek(t, piece)
	})
}

// TestIsID: isID tells an issue's ID as idPattern does, at each of its
// bounds: eight digits of date, then at least three of number.
func TestIsID(t *testing.T) {
	for _, id := range []string{
		"ISSUE-20260101-001", "ISSUE-20260101-1234", "ISSUE-20260101-01", "ISSUE-2026010-001",
		"ISSUE-202601011-001", "ISSUE-20260101_001", "ISSUE-2026010a-001", "ISSUE-20260101-00a",
		"issue-20260101-001", "ISSUE-20260101-", "ISSUE-", "", " ISSUE-20260101-001",
	} {
		if got, want := isID([]byte(id)), idPattern.MatchString(id); got != want {
			t.Errorf("isID(%q) = %v; the pattern says %v", id, got, want)
		}
	}
}
