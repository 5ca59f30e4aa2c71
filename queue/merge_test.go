package queue

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// mergeBase is a queue two machines start from.
const mergeBase = `# Issue Queue

## ISSUE-20260102-001

| Field | Value |
|-------|-------|
| Status | pending |
| Retry-Count | 0 |
| Priority | high |
| Claimed-By | |
| Lease-Epoch | 1 |
| Lease-Until | |

### Summary
one

## ISSUE-20260102-002

| Field | Value |
|-------|-------|
| Status | pending |
| Retry-Count | 0 |

### Summary
two
`

func edit(t testing.TB, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("no %q to change", pairs[i])
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

// issue2 is the text of ISSUE-20260102-002 and the lines after it.
const issue2 = "## ISSUE-20260102-002\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Retry-Count | 0 |"

func TestMerge3(t *testing.T) {
	added := "\n## ISSUE-20260102-003\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n### Summary\nthree\n"
	addedThere := strings.Replace(added, "three", "three, there", 1)
	for _, c := range []struct {
		name, ours, theirs, want string
	}{
		{"each side its issue",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority"),
			edit(t, mergeBase, issue2, strings.Replace(issue2, "pending", "resolved", 1)),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", issue2, strings.Replace(issue2, "pending", "resolved", 1))},
		{"one issue, two rows",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority"),
			edit(t, mergeBase, "| Priority | high |", "| Priority | low |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Priority | high |", "| Priority | low |")},
		{"a row added here, another changed there",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 0 |\n| Failure-Signature | abc |\n| Priority"),
			edit(t, mergeBase, "| Priority | high |", "| Priority | low |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority | high |", "| Retry-Count | 0 |\n| Failure-Signature | abc |\n| Priority | low |")},
		{"the claim's rows: the later lease",
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:01:00Z |", "| Status | pending |\n| Retry-Count | 0 |\n| Priority", "| Status | in_progress |\n| Retry-Count | 0 |\n| Priority"),
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:00:00Z |"),
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:01:00Z |", "| Status | pending |\n| Retry-Count | 0 |\n| Priority", "| Status | in_progress |\n| Retry-Count | 0 |\n| Priority")},
		{"rows added: a record's here, the claim's on both sides",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Failure-Signature | abc |\n| Priority", "| Lease-Until | |", "| Lease-Until | |\n| Claimed-At | 2026-01-02T10:00:00Z |"),
			edit(t, mergeBase, "| Lease-Until | |", "| Lease-Until | 2026-01-02T09:00:00Z |\n| Claimed-At | 2026-01-02T08:00:00Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Failure-Signature | abc |\n| Priority", "| Lease-Until | |", "| Lease-Until | 2026-01-02T09:00:00Z |\n| Claimed-At | 2026-01-02T08:00:00Z |")},
		{"a record here, a renewal mirrored there",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Failure-Signature | abc |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:00:00Z |", "### Summary\none\n", "### Summary\none\n\n### Failure Details\n\n```\nboom\n```\n"),
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Failure-Signature | abc |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |", "### Summary\none\n", "### Summary\none\n\n### Failure Details\n\n```\nboom\n```\n")},
		{"a renewal mirrored here, a record there",
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:04:59Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |")},
		{"one change on both sides, released here, renewed there",
			edit(t, mergeBase, "| Status | pending |\n| Retry-Count | 0 |\n| Priority", "| Status | resolved |\n| Retry-Count | 1 |\n| Priority", "| Lease-Until | |", "| Lease-Until | |\n\n### Failure Details\n\nboom"),
			edit(t, mergeBase, "| Status | pending |\n| Retry-Count | 0 |\n| Priority", "| Status | resolved |\n| Retry-Count | 1 |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |\n\n### Failure Details\n\nboom"),
			edit(t, mergeBase, "| Status | pending |\n| Retry-Count | 0 |\n| Priority", "| Status | resolved |\n| Retry-Count | 1 |\n| Priority", "| Lease-Until | |", "| Lease-Until | |\n\n### Failure Details\n\nboom")},
		// Both sides changed a row of their own and the claim's rows: the
		// rows are merged one by one, the claim's from the later lease,
		// whichever side holds it.
		{"a row and the lease on each side: the later lease here",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |"),
			edit(t, mergeBase, "| Priority | high |", "| Priority | low |", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:04:59Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Priority | high |", "| Priority | low |", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |")},
		{"a row and the lease on each side: the later lease there",
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:04:59Z |"),
			edit(t, mergeBase, "| Priority | high |", "| Priority | low |", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |"),
			edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | 1 |\n| Priority", "| Priority | high |", "| Priority | low |", "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |")},
		{"the claim's rows alone: the greater epoch, though its lease ends sooner",
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | a@x/1 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:05:00Z |"),
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | b@y/2 |", "| Lease-Epoch | 1 |", "| Lease-Epoch | 2 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:01:00Z |"),
			edit(t, mergeBase, "| Claimed-By | |", "| Claimed-By | b@y/2 |", "| Lease-Epoch | 1 |", "| Lease-Epoch | 2 |", "| Lease-Until | |", "| Lease-Until | 2026-01-02T10:01:00Z |")},
		{"added on both sides", mergeBase + added, mergeBase + strings.Replace(added, "003", "004", 2),
			mergeBase + added + strings.Replace(added, "003", "004", 2)},
		{"one ID added on both sides", mergeBase + added, mergeBase + addedThere,
			mergeBase + strings.Replace(added, "003", "004", 1) + addedThere},
		{"added here before another", edit(t, mergeBase, "## ISSUE-20260102-002", strings.TrimPrefix(added, "\n")+"\n## ISSUE-20260102-002"), mergeBase,
			edit(t, mergeBase, "## ISSUE-20260102-002", strings.TrimPrefix(added, "\n")+"\n## ISSUE-20260102-002")},
		{"removed here", strings.Replace(mergeBase, "\n"+issue2+"\n\n### Summary\ntwo\n", "", 1),
			edit(t, mergeBase, "one", "one, there"),
			// The blank line that ended the issue before stays.
			strings.Replace(edit(t, mergeBase, "one", "one, there"), issue2+"\n\n### Summary\ntwo\n", "", 1)},
		{"removed there",
			edit(t, mergeBase, "one", "one, here"),
			strings.Replace(mergeBase, "\n"+issue2+"\n\n### Summary\ntwo\n", "", 1),
			// The blank line that ended the issue here stays with it.
			strings.Replace(edit(t, mergeBase, "one", "one, here"), issue2+"\n\n### Summary\ntwo\n", "", 1)},
		{"a taken-over holder's change: the greater epoch",
			edit(t, mergeBase, "### Summary\none", "### Summary\none\nmore lines\nof the old holder"),
			edit(t, mergeBase, "| Lease-Epoch | 1 |", "| Lease-Epoch | 2 |", "### Summary\none", "### Summary\none, by the new holder"),
			edit(t, mergeBase, "| Lease-Epoch | 1 |", "| Lease-Epoch | 2 |", "### Summary\none", "### Summary\none, by the new holder")},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Merge3([]byte(mergeBase), []byte(c.ours), []byte(c.theirs))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("merged\n%s\nwant\n%s", got, c.want)
			}
			if q := Parse(got); len(q.Problems) > 0 {
				t.Errorf("the merge does not parse: %v", q.Problems)
			}
		})
	}
}

// TestMerge3Conflict: one row changed two ways at one epoch is an error
// that says which issue, and where, and nothing is merged.
func TestMerge3Conflict(t *testing.T) {
	ours := edit(t, mergeBase, "| Priority | high |", "| Priority | low |")
	theirs := edit(t, mergeBase, "| Priority | high |", "| Priority | critical |")
	got, err := Merge3([]byte(mergeBase), []byte(ours), []byte(theirs))
	var me *MergeError
	if !errors.As(err, &me) || me.Line != 3 || me.ID != "## ISSUE-20260102-001" || !strings.Contains(me.Why, "both in the row Priority") || got != nil {
		t.Fatalf("Merge3 = %q, %v; want a MergeError at line 3 of ISSUE-20260102-001", got, err)
	}
}

// FuzzMerge3: a side that changed nothing takes the other's text whole.
func FuzzMerge3(f *testing.F) {
	f.Add(mergeBase, edit(f, mergeBase, "one", "uno"))
	f.Add(mergeBase, mergeBase+"\n## ISSUE-20260102-009\n\nnine\n")
	f.Add("\xEF\xBB\xBF"+mergeBase, "\xEF\xBB\xBF"+mergeBase)
	f.Add(strings.ReplaceAll(mergeBase, "\n", "\r\n"), "")
	f.Fuzz(func(t *testing.T, base, other string) {
		for _, c := range [][2]string{{base, other}, {other, base}} {
			got, err := Merge3([]byte(base), []byte(base), []byte(c[1]))
			if err != nil || !bytes.Equal(got, []byte(c[1])) && c[1] == other {
				t.Fatalf("theirs alone changed: %q, %v; want theirs %q", got, err, other)
			}
			got, err = Merge3([]byte(base), []byte(other), []byte(base))
			if err != nil || !bytes.Equal(got, []byte(other)) {
				t.Fatalf("ours alone changed: %q, %v; want ours %q", got, err, other)
			}
		}
	})
}

// TestMerge3Counts: a count both sides raised, each its way, at one epoch
// or two, is the greater, whichever side holds it: a launch counted on
// one machine is never uncounted by another's.
func TestMerge3Counts(t *testing.T) {
	two := func(n, epoch string) string {
		return edit(t, mergeBase, "| Retry-Count | 0 |\n| Priority", "| Retry-Count | "+n+" |\n| Priority", "| Lease-Epoch | 1 |", "| Lease-Epoch | "+epoch+" |")
	}
	for _, c := range []struct{ name, ours, theirs, want string }{
		{"greater here", two("3", "1"), two("2", "1"), "3"},
		{"greater there", two("2", "1"), two("3", "1"), "3"},
		{"greater at the lesser epoch", two("3", "1"), two("2", "2"), "3"},
		{"one more", two("10", "1"), two("9", "1"), "10"},
	} {
		got, err := Merge3([]byte(mergeBase), []byte(c.ours), []byte(c.theirs))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if q := Parse(got); q.Issues[0].Int(FieldRetryCount, -1) != atoi([]byte(c.want)) {
			t.Errorf("%s: Retry-Count %d; want %s", c.name, q.Issues[0].Int(FieldRetryCount, -1), c.want)
		}
	}
}

// TestMerge3WholeIssueOfTheGreaterEpoch: an issue both sides changed that
// cannot be merged field by field (here a row the remote's holds twice) is
// the greater epoch's whole, whichever side holds it, and said; at one
// epoch it is a conflict.
func TestMerge3WholeIssueOfTheGreaterEpoch(t *testing.T) {
	mine := edit(t, mergeBase, "| Priority | high |", "| Priority | low |")
	twice := func(epoch string) string {
		return edit(t, mergeBase, "| Priority | high |", "| Priority | high |\n| Owner | a |\n| Owner | b |", "| Lease-Epoch | 1 |", "| Lease-Epoch | "+epoch+" |")
	}
	got, notes, err := Merge3Notes([]byte(mergeBase), []byte(mine), []byte(twice("2")))
	if err != nil || string(got) != twice("2") || len(notes) != 1 || !strings.Contains(notes[0], "kept the remote's issue whole, of the greater epoch") {
		t.Errorf("the remote's at the greater epoch: %v, notes %q; want the remote's issue whole, said\n%s", err, notes, got)
	}
	got, notes, err = Merge3Notes([]byte(mergeBase), []byte(twice("2")), []byte(mine))
	if err != nil || string(got) != twice("2") || len(notes) != 1 || !strings.Contains(notes[0], "kept this machine's issue whole, of the greater epoch") {
		t.Errorf("this machine's at the greater epoch: %v, notes %q; want this machine's issue whole, said\n%s", err, notes, got)
	}
	var me *MergeError
	if _, err := Merge3([]byte(mergeBase), []byte(mine), []byte(twice("1"))); !errors.As(err, &me) {
		t.Errorf("at one epoch: %v; want a MergeError", err)
	}
}
