package queue

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// agree checks that ParseSome(data, needle) reads every issue it reads as
// Parse does (same ID, line, fields and sections), every issue Parse reads
// whose piece holds the needle, and that a field set on each gives the
// same bytes either way.
func agree(t *testing.T, data []byte, needle string) {
	t.Helper()
	full, some := Parse(data), ParseSome(data, needle)
	if got := some.Bytes(); !bytes.Equal(got, data) {
		t.Fatalf("ParseSome: a no-op changed the bytes:\n%q\n%q", data, got)
	}
	byLine := map[int]*Issue{}
	for _, is := range full.Issues {
		byLine[is.Line] = is
	}
	for _, is := range some.Issues {
		f := byLine[is.Line]
		if f == nil || f.ID != is.ID || describe(f) != describe(is) {
			t.Fatalf("ParseSome(%q) read %s at line %d as\n%s\nParse as\n%v", needle, is.ID, is.Line, describe(is), f)
		}
	}
	for _, is := range full.Issues {
		if !bytes.Contains(data[is.start:is.end], []byte(needle)) {
			continue
		}
		found := false
		for _, s := range some.Issues {
			found = found || s.Line == is.Line
		}
		if !found {
			t.Fatalf("ParseSome(%q) missed %s (line %d), whose text holds the needle", needle, is.ID, is.Line)
		}
	}
	if len(full.Problems) > 0 {
		return
	}
	if len(some.Problems) > 0 {
		t.Fatalf("ParseSome found problems Parse did not: %v", some.Problems)
	}
	for _, is := range some.Issues {
		is.Set("Status", "resolved")
		is.SetSection("Summary", "changed")
		f := full.Issues[0]
		for _, fi := range full.Issues {
			if fi.Line == is.Line {
				f = fi
			}
		}
		f.Set("Status", "resolved")
		f.SetSection("Summary", "changed")
	}
	if a, b := some.Bytes(), full.Bytes(); !bytes.Equal(a, b) {
		t.Fatalf("the same change gives other bytes:\nParseSome %q\nParse     %q", a, b)
	}
}

func describe(is *Issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s@%d [%d,%d)\n", is.ID, is.Line, is.start, is.end)
	is.EachField(func(f *Field) { fmt.Fprintf(&b, "  %s=%s\n", f.Name, f.Value) })
	for _, s := range is.Sections() {
		fmt.Fprintf(&b, "  ### %s@%d: %q\n", s.Title, s.Line, s.Body())
	}
	return b.String()
}

func roundtripQueues(t testing.TB) [][]byte {
	files, _ := filepath.Glob("testdata/roundtrip/*.txtar")
	var out [][]byte
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, af := range ar.Files {
			if strings.HasSuffix(af.Name, ".md") {
				out = append(out, af.Data)
			}
		}
	}
	return out
}

func TestParseSome(t *testing.T) {
	queue := []byte(`# Queue

## ISSUE-20241213-001

| Field | Value |
|---|---|
| Status | pending |
| Session | s1 |

### Summary
one

## ISSUE-20241213-002

| Field | Value |
|---|---|
| Status | pending |
| Session | s2 |

### Summary
two
## ISSUE-20241213-003
| Field | Value |
|---|---|
| Session | s2 |

` + "```" + `
## ISSUE-20241213-004 (in a fence: no issue)
` + "```" + `

## Notes

### orphan
`)
	some := ParseSome(queue, "s2")
	var ids []string
	for _, is := range some.Issues {
		ids = append(ids, is.ID)
	}
	if got := strings.Join(ids, " "); got != "ISSUE-20241213-002 ISSUE-20241213-003" {
		t.Errorf("ParseSome(s2) read %s; want 002 and 003", got)
	}
	// The orphan section's problem names the last issue, read or not.
	some = ParseSome(queue, "orphan")
	if len(some.Problems) != 1 || !strings.Contains(some.Problems[0].Msg, "ends ISSUE-20241213-003") {
		t.Errorf("ParseSome(orphan) problems %v; want the orphan section after ISSUE-20241213-003", some.Problems)
	}
	// And so it does when the pieces skipped just before hold no issue.
	between := bytes.Replace(queue, []byte("## Notes\n"), []byte("## Aside\n\nno issue here\n\n## More\n\nnor here\n\n## Notes\n"), 1)
	some = ParseSome(between, "orphan")
	if len(some.Problems) != 1 || !strings.Contains(some.Problems[0].Msg, "ends ISSUE-20241213-003") {
		t.Errorf("ParseSome(orphan), two pieces with no issue before it: problems %v; want the orphan section after ISSUE-20241213-003", some.Problems)
	}
	if len(ParseSome(queue, "nothing here").Issues) != 0 {
		t.Errorf("ParseSome(a needle nowhere) read issues")
	}
	for _, needle := range []string{"s1", "s2", "ISSUE-20241213-00", "orphan", "Notes"} {
		agree(t, queue, needle)
		agree(t, bytes.ReplaceAll(queue, []byte("\n"), []byte("\r\n")), needle)
	}
	for _, data := range roundtripQueues(t) {
		for _, needle := range []string{"ISSUE", "pending", "Summary", "|", "a"} {
			agree(t, data, needle)
		}
	}
	// A big queue, with needles found in few pieces, and in so many places
	// that each piece is searched instead.
	var big bytes.Buffer
	big.WriteString("# Queue\n\n")
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&big, "## ISSUE-20241213-%03d\n\n| Field | Value |\n|---|---|\n| Status | pending |\n| Session | s%d |\n\n### Summary\na task, a fix, a test\n\n", i, i%7)
	}
	for _, needle := range []string{"s3 ", "ISSUE-20241213-99", "a", "| s", "nowhere"} {
		agree(t, big.Bytes(), needle)
	}
}

// FuzzParseSome: ParseSome reads the issues it reads as Parse does, misses
// none whose text holds the needle, and a change to them gives the same
// bytes.
func FuzzParseSome(f *testing.F) {
	for _, data := range roundtripQueues(f) {
		f.Add(data, "pending")
		f.Add(data, "ISSUE-")
	}
	f.Fuzz(func(t *testing.T, data []byte, needle string) {
		if needle == "" {
			return
		}
		agree(t, data, needle)
	})
}

func TestUpdateSome(t *testing.T) {
	const base = `# Queue

## ISSUE-20241213-001

| Field | Value |
|---|---|
| Status | pending |
| Session | s1 |

## ISSUE-20241213-002

| Field | Value |
|---|---|
| Status | pending |
| Session | s2 |
`
	write := func(t *testing.T, text string) string {
		path := filepath.Join(t.TempDir(), "issue_queue.md")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	setStatus := func(id string) func(*Queue) error {
		return func(q *Queue) error {
			is := q.Issue(id)
			if is == nil {
				return fmt.Errorf("no %s", id)
			}
			is.Set(FieldStatus, StatusResolved)
			return nil
		}
	}

	t.Run("the same bytes as Update", func(t *testing.T) {
		some, full := write(t, base), write(t, base)
		if err := UpdateSome(some, []string{"s2"}, setStatus("ISSUE-20241213-002")); err != nil {
			t.Fatal(err)
		}
		if err := Update(full, setStatus("ISSUE-20241213-002")); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(some)
		b, _ := os.ReadFile(full)
		if !bytes.Equal(a, b) || bytes.Equal(a, []byte(base)) {
			t.Errorf("UpdateSome wrote\n%s\nUpdate\n%s", a, b)
		}
		if err := UpdateSome(some, []string{"s2"}, setStatus("ISSUE-20241213-001")); err == nil {
			t.Errorf("UpdateSome found an issue whose text holds no needle")
		}
	})

	t.Run("a problem elsewhere does not stop it, one in its issues does", func(t *testing.T) {
		bad := base + "\n## ISSUE-20241213-003\n\n| Field | Value |\n|---|---|\n| Status | weird |\n"
		path := write(t, bad)
		if err := Update(path, setStatus("ISSUE-20241213-002")); err == nil {
			t.Fatalf("Update wrote a queue with an unknown status")
		}
		if err := UpdateSome(path, []string{"s2"}, setStatus("ISSUE-20241213-002")); err != nil {
			t.Errorf("UpdateSome(s2) = %v; want the problem in another issue left alone", err)
		}
		data, _ := os.ReadFile(path)
		if !strings.Contains(string(data), "| Status | weird |") {
			t.Errorf("the other issue changed:\n%s", data)
		}
		if got := Parse(data).Issue("ISSUE-20241213-002").Status(); got != StatusResolved {
			t.Errorf("status %s; want resolved", got)
		}
		var verr *ValidationError
		if err := UpdateSome(path, []string{"weird"}, func(*Queue) error { return nil }); !errors.As(err, &verr) {
			t.Errorf("UpdateSome(weird) = %v; want the problem of the issue it reads", err)
		}
	})

	t.Run("an ID given twice elsewhere is found", func(t *testing.T) {
		dup := base + "\n## ISSUE-20241213-002\n\n| Field | Value |\n|---|---|\n| Status | pending |\n"
		path := write(t, dup)
		var verr *ValidationError
		if err := UpdateSome(path, []string{"s2"}, setStatus("ISSUE-20241213-002")); !errors.As(err, &verr) || !strings.Contains(err.Error(), "duplicate issue ID") {
			t.Errorf("UpdateSome = %v; want the duplicate ID refused", err)
		}
		if data, _ := os.ReadFile(path); string(data) != dup {
			t.Errorf("the file changed")
		}
	})

	t.Run("a new issue never takes an ID of a piece not read", func(t *testing.T) {
		path := write(t, base)
		var id string
		err := UpdateSome(path, []string{"nothing"}, func(q *Queue) error {
			id = q.Add(time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC), map[string]string{"Session": "s3"}, nil).ID
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if id != "ISSUE-20241213-003" {
			t.Errorf("new issue %s; want ISSUE-20241213-003, after the two in pieces not read", id)
		}
		data, _ := os.ReadFile(path)
		if q := Parse(data); len(q.Problems) > 0 || len(q.Issues) != 3 {
			t.Errorf("after the add: %d issues, problems %v", len(q.Issues), q.Problems)
		}
	})
}

// TestUpdateChosen: the pieces a chooser keeps are read; of the others,
// one that the look read plainly an issue is known by its ID alone (an
// issue of the same ID there is found, a mention of it is not one), and
// one it could not read is searched for the IDs of the issues changed.
func TestUpdateChosen(t *testing.T) {
	const first = "# Queue\n\n## ISSUE-20241213-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n"
	// A chooser that keeps the first issue, by its place (after the
	// queue's title): the look gives each piece's ID, as Peek reads it.
	chooser := func(looked *[]string) Chooser {
		return func(pieces func(look func([]byte) []byte)) func(int) bool {
			v := make([][]byte, 1)
			pieces(func(piece []byte) []byte {
				id, ok := Peek(piece, v, "status")
				if !ok {
					id = nil
				}
				*looked = append(*looked, string(id))
				return id
			})
			return func(i int) bool { return i == 1 }
		}
	}
	setStatus := func(q *Queue) error {
		is := q.Issue("ISSUE-20241213-001")
		if is == nil || len(q.Issues) != 1 {
			return fmt.Errorf("read %d issues, want the one kept", len(q.Issues))
		}
		is.Set(FieldStatus, StatusResolved)
		return nil
	}
	for _, c := range []struct {
		name, rest string
		refused    bool
	}{
		{"an issue of the same ID in a plain piece", "\n## ISSUE-20241213-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n", true},
		{"a mention of the ID in a plain piece", "\n## ISSUE-20241213-002\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\nLike ISSUE-20241213-001.\n", false},
		{"an issue of the same ID in a piece not read at a look", "\n## ISSUE-20241213-002\n\ntext first\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\nISSUE-20241213-001\n---\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "issue_queue.md")
			text := first + c.rest
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			var looked []string
			err := UpdateChosen(path, chooser(&looked), setStatus)
			data, _ := os.ReadFile(path)
			if c.refused {
				if !strings.Contains(fmt.Sprint(err), "duplicate issue ID") || string(data) != text {
					t.Errorf("UpdateChosen = %v, the file changed %v; want the duplicate ID refused, the file as it was", err, string(data) != text)
				}
				return
			}
			if err != nil || !strings.Contains(string(data), "| Status | resolved |") {
				t.Errorf("UpdateChosen = %v; want the status written:\n%s", err, data)
			}
			if want := []string{"", "ISSUE-20241213-001", "ISSUE-20241213-002"}; !slices.Equal(looked, want) {
				t.Errorf("the look read IDs %q; want %q", looked, want)
			}
		})
	}
}
