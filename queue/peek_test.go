package queue

import (
	"strings"
	"testing"
)

// Peek reads what the parser reads, whenever it says it read it: the
// property the fuzz target checks on any text.
func checkPeek(t *testing.T, piece string) {
	t.Helper()
	names := []string{"status", "priority", "claimedby", "leaseuntil"}
	fields := []string{FieldStatus, FieldPriority, FieldClaimedBy, FieldLeaseUntil}
	values := make([][]byte, len(names))
	id, ok := Peek([]byte(piece), values, names...)
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
	} {
		if _, ok := Peek([]byte(piece), make([][]byte, 1), "status"); ok {
			t.Errorf("Peek read:\n%s", piece)
		}
	}
}

func FuzzPeek(f *testing.F) {
	f.Add("## ISSUE-20260101-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Claimed-By | a |\n")
	f.Add("## ISSUE-20260101-001\n| Field | Value |\n| --- | --- |\n| Status | `stuck` |\n\ntext\n")
	f.Add("## ISSUE-20260101-001\n\n<div>\n| Status | pending |\n</div>\n")
	f.Fuzz(func(t *testing.T, piece string) {
		checkPeek(t, piece)
	})
}
