package queue

import (
	"strings"
	"testing"
)

// The seeds' "completed" is a finished issue: it reads as resolved and is
// no problem; any other unknown status is one.
func TestStatusCompleted(t *testing.T) {
	q := Parse([]byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Status | completed |\n\n## ISSUE-20241213-002\n\n| Field | Value |\n|-------|-------|\n| Status | complete |\n"))
	if len(q.Problems) != 1 || q.Problems[0].Line != 11 {
		t.Fatalf("problems = %v; want one, for complete on line 11", q.Problems)
	}
	if got := q.Issue("ISSUE-20241213-001").Status(); got != StatusResolved {
		t.Errorf("Status() of completed = %q; want resolved", got)
	}
}

// A row of the field table with one cell is a problem at its line.
func TestMissingCell(t *testing.T) {
	q := Parse([]byte("## ISSUE-20241213-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Priority |\n"))
	want := "ISSUE-20241213-001: table row has a missing cell"
	if len(q.Problems) != 1 || q.Problems[0].Line != 6 || q.Problems[0].Msg != want {
		t.Fatalf("problems = %v; want one at line 6: %s", q.Problems, want)
	}
}

// TestCheckValuePriority: the four priorities pass in any case, in
// backquotes too; any other value is refused with the four.
func TestCheckValuePriority(t *testing.T) {
	for _, v := range []string{"critical", "High", "`medium`", "LOW", ""} {
		if err := CheckValue("priority", v); err != nil {
			t.Errorf("Priority %q: %v", v, err)
		}
	}
	for _, v := range []string{"urgent", "P1", "highest"} {
		err := CheckValue("Priority", v)
		if err == nil || !strings.Contains(err.Error(), "critical, high, medium, low") {
			t.Errorf("Priority %q: %v, want a refusal naming the four", v, err)
		}
	}
}
