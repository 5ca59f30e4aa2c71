package queue

import (
	"strings"
	"testing"
)

// An issue both sides changed, its text around the table too, is merged
// field by field: a field changed on one side only is that side's; one
// both changed, each its way, is the greater epoch's, and said in a note;
// a count both raised is the greater.
func TestMerge3ByFieldName(t *testing.T) {
	base := "## ISSUE-20241213-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n| Priority | medium |\n| Retry-Count | 0 |\n| Lease-Epoch | 1 |\n\n### Summary\n\nthe base\n"
	ours := strings.NewReplacer("| Priority | medium |", "| Priority | critical |\n| Owner | alice |", "| Retry-Count | 0 |", "| Retry-Count | 5 |", "| Status | pending |", "| Status | stuck |").Replace(base)
	theirs := strings.NewReplacer("| Lease-Epoch | 1 |", "| Lease-Epoch | 3 |", "| Retry-Count | 0 |", "| Retry-Count | 2 |", "| Status | pending |", "| Status | in_progress |").Replace(base) + "\n### Last failure\n\nFAIL\n"
	got, notes, err := Merge3Notes([]byte(base), []byte(ours), []byte(theirs))
	if err != nil {
		t.Fatal(err)
	}
	q := Parse(got)
	if len(q.Problems) > 0 || len(q.Issues) != 1 {
		t.Fatalf("merged:\n%s\nproblems %v", got, q.Problems)
	}
	is := q.Issues[0]
	for name, want := range map[string]string{"Priority": "critical", "Owner": "alice", "Lease-Epoch": "3", "Retry-Count": "5", "Status": "in_progress"} {
		if v, _ := is.Get(name); v != want {
			t.Errorf("%s = %q; want %q in\n%s", name, v, want, got)
		}
	}
	if !strings.Contains(string(got), "### Last failure") {
		t.Errorf("the remote's section is lost:\n%s", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "Status changed here (stuck) and on the remote (in_progress): kept the remote's") {
		t.Errorf("notes = %q; want one that says Status's stuck here was not kept", notes)
	}
}
