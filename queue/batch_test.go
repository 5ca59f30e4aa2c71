package queue

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// batchQueues are queues a batch must change as the updates one at a time
// would: the round-trip ones, and a table a formatter aligned (whose
// alignment an update may break, which changes how the next one pads),
// with CRLF line endings, a BOM, no final line ending, empty.
func batchQueues(t *testing.T) map[string][]byte {
	aligned := `# Queue

## ISSUE-20241213-001

| Field                  | Value                |
| ---------------------- | -------------------- |
| Type                   | bug                  |
| Status                 | pending              |
| Session                | s9                   |
| Auto-Retry             | true                 |
| Retry-Count            | 1                    |
| Max-Retries            | 10                   |
| Failure-Signature      | abc                  |
| Previous-Signatures    | []                   |
| Signature-Repeat-Count | 1                    |

### Failure Details

old

## ISSUE-20241213-002

| Field   | Value   |
| ------- | ------- |
| Status  | pending |
| Session | s1      |
`
	plain := `# Queue

## ISSUE-20241213-001

| Field | Value |
|---|---|
| Status | pending |
| Session | s9 |
| Category | |

### Summary
one

## ISSUE-20241213-002

| Field | Value |
|---|---|
| Status | pending |
| Session | s1 |
| Note | see ISSUE-20241213-003 |
`
	queues := map[string][]byte{
		"aligned":    []byte(aligned),
		"plain":      []byte(plain),
		"crlf":       bytes.ReplaceAll([]byte(plain), []byte("\n"), []byte("\r\n")),
		"bom":        append([]byte{0xEF, 0xBB, 0xBF}, plain...),
		"no-newline": []byte(strings.TrimSuffix(plain, "\n")),
		"empty":      nil,
	}
	for i, data := range roundtripQueues(t) {
		queues["roundtrip-"+strconv.Itoa(i)] = data
	}
	return queues
}

// batchSteps are updates as the Stop hook makes them, and some that test
// the edges: a record (long values that overflow an aligned column, a
// new row, a section), a new issue, the retry (the same cells again), a
// change of the same length, a value set to nothing, an update that fails
// half-way, one that changes nothing, and sections set again.
func batchSteps() []func(*Queue) error {
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	mine := func(q *Queue) []*Issue {
		var out []*Issue
		for _, is := range q.All() {
			if s, _ := is.Get("Session"); s == "s9" {
				out = append(out, is)
			}
		}
		return out
	}
	return []func(*Queue) error{
		func(q *Queue) error { // a record
			for _, is := range mine(q) {
				if is.Field("Status") == nil {
					continue
				}
				is.Set(FieldFailureSignature, strings.Repeat("f", 64))
				is.Set(FieldPreviousSignatures, "[abc, 0123456789ab, 0123456789ab, 0123456789ab]")
				is.SetInt(FieldSignatureRepeatCount, 1)
				is.Set(FieldStatus, StatusPending)
				is.Set("Recent-Signatures", "[ffffffffffff]")
				is.SetSection(SectionFailureDetails, "```\nboom\n```")
				return nil
			}
			return nil
		},
		func(q *Queue) error { // a new issue
			q.Add(now, map[string]string{"Session": "s9", FieldStatus: StatusPending, FieldRetryCount: "0",
				FieldCategory: "", "Gate": "unit"}, map[string]string{SectionSummary: "Quality gate unit failed"})
			return nil
		},
		func(q *Queue) error { // the retry
			for _, is := range mine(q) {
				is.SetInt(FieldRetryCount, is.Int(FieldRetryCount, 0)+1)
				is.Set(FieldStatus, StatusInProgress)
				is.SetBool("Escalated", true)
			}
			return nil
		},
		func(q *Queue) error { // a change of the same length: a digit for another
			for _, is := range mine(q) {
				if n := is.Int(FieldRetryCount, 0); n < 9 {
					is.SetInt(FieldRetryCount, n+1)
				}
			}
			return nil
		},
		func(q *Queue) error { // values set to nothing, and back
			for _, is := range mine(q) {
				is.Set("Gate", "")
				is.Set(FieldCategory, "quality-gate")
			}
			return nil
		},
		func(q *Queue) error { // a failure half-way: nothing of it stays
			for _, is := range mine(q) {
				is.Set(FieldStatus, StatusStuck)
				is.SetSection(SectionSummary, "never written")
			}
			q.Add(now, map[string]string{"Session": "s9"}, nil)
			return errors.New("refused")
		},
		func(q *Queue) error { return nil },
		func(q *Queue) error { // sections again, and a new one
			for _, is := range mine(q) {
				is.SetSection(SectionFailureDetails, "```\nboom again\n```")
				is.SetSection("Notes", "\n\nleading blank lines\n")
				is.SetSection(SectionSummary, "Quality gate unit failed: again")
			}
			return nil
		},
		func(q *Queue) error { // another new issue, after the first
			q.Add(now, map[string]string{"Session": "s9", FieldStatus: StatusStuck}, nil)
			return nil
		},
	}
}

// TestBatchAsUpdates: a batch's text after each update is the file that
// update, written on its own (UpdateSome, or Update with no needles),
// leaves; each update fails as it would; the batch's one write leaves the
// file the last update would.
func TestBatchAsUpdates(t *testing.T) {
	steps := batchSteps()
	for name, data := range batchQueues(t) {
		for _, needles := range [][]string{nil, {"s9", "ISSUE-20241213-"}, {"s9"}} {
			t.Run(fmt.Sprintf("%s/%q", name, needles), func(t *testing.T) {
				dir := t.TempDir()
				one, batched := filepath.Join(dir, "one.md"), filepath.Join(dir, "batched.md")
				for _, p := range []string{one, batched} {
					if err := os.WriteFile(p, data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				b, err := ReadBatch(batched, needles...)
				if err != nil {
					t.Fatal(err)
				}
				for i, fn := range steps {
					var want error
					if needles == nil {
						want = Update(one, fn)
					} else {
						want = UpdateSome(one, needles, fn)
					}
					got := b.Update(fn)
					if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
						t.Fatalf("update %d: batch %v; alone %v", i, got, want)
					}
					file, _ := os.ReadFile(one)
					if text := b.textNow(); !bytes.Equal(text, file) {
						t.Fatalf("after update %d the batch holds\n%s\nthe file alone\n%s", i, text, file)
					}
					if r := b.Queue(); len(r.All()) != len(ParseSome(file, needles...).All()) && needles != nil {
						t.Fatalf("after update %d the batch reads %d issues", i, len(r.All()))
					}
				}
				if got, _ := os.ReadFile(batched); !bytes.Equal(got, data) {
					t.Fatalf("the batch wrote before its Write")
				}
				if err := b.Write(); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(batched)
				want, _ := os.ReadFile(one)
				if !bytes.Equal(got, want) {
					t.Fatalf("the batch wrote\n%s\nthe updates alone\n%s", got, want)
				}
			})
		}
	}
}

// TestBatchEditedMeanwhile: a person's edit of the file between the
// batch's read and its write is kept, and the updates are made again on
// it, one after another.
func TestBatchEditedMeanwhile(t *testing.T) {
	steps := batchSteps()
	data := batchQueues(t)["plain"]
	edited := bytes.Replace(data, []byte("| Note | see"), []byte("| Note | as a person wrote it: see"), 1)
	edited = append(edited, "\nA person's note at the end.\n"...)
	needles := []string{"s9", "ISSUE-20241213-"}
	dir := t.TempDir()
	one, batched := filepath.Join(dir, "one.md"), filepath.Join(dir, "batched.md")
	os.WriteFile(one, edited, 0o644)
	os.WriteFile(batched, data, 0o644)
	b, err := ReadBatch(batched, needles...)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range steps {
		UpdateSome(one, needles, fn)
		b.Update(fn)
	}
	os.WriteFile(batched, edited, 0o644)
	if err := b.Write(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(batched)
	want, _ := os.ReadFile(one)
	if !bytes.Equal(got, want) {
		t.Fatalf("after an edit the batch wrote\n%s\nthe updates on the edit\n%s", got, want)
	}
	if !bytes.Contains(got, []byte("as a person wrote it")) || !bytes.Contains(got, []byte("A person's note")) {
		t.Errorf("the person's edit is lost:\n%s", got)
	}
}

// TestBatchWritesOnce: a batch that changes nothing writes nothing; one
// that does replaces the file once, whatever its number of updates.
func TestBatchWritesOnce(t *testing.T) {
	data := batchQueues(t)["plain"]
	path := filepath.Join(t.TempDir(), "issue_queue.md")
	os.WriteFile(path, data, 0o644)
	inode := func() uint64 {
		var st syscall.Stat_t
		if err := syscall.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return uint64(st.Ino)
	}
	before := inode()
	b, err := ReadBatch(path, "s9")
	if err != nil {
		t.Fatal(err)
	}
	b.Update(func(*Queue) error { return nil })
	if err := b.Write(); err != nil {
		t.Fatal(err)
	}
	if inode() != before {
		t.Errorf("a batch that changed nothing replaced the file")
	}
	b, _ = ReadBatch(path, "s9", "ISSUE-20241213-")
	for _, fn := range batchSteps() {
		b.Update(fn)
	}
	if inode() != before {
		t.Errorf("the batch wrote before its Write")
	}
	if err := b.Write(); err != nil {
		t.Fatal(err)
	}
	if inode() == before {
		t.Errorf("the batch's changes were not written")
	}
}

// textNow is the batch's text as the updates so far leave it.
func (b *Batch) textNow() []byte {
	b.join()
	return b.text
}

// TestFoundAppended: the places of needles in a text found again only
// after what was searched before, the seam included, are the places a
// search of the whole finds, each split of each text.
func TestFoundAppended(t *testing.T) {
	needles := []string{"ab", "abab", "s9", "ISSUE-20241213-"}
	for _, text := range []string{"", "ab", "abababab", "xxaxbab", "## ISSUE-20241213-001\n| Session | s9 |\n## ISSUE-20241213-002\nabab"} {
		want := findNeedles([]byte(text), needles)
		for at := 0; at <= len(text); at++ {
			got := findNeedles([]byte(text[:at]), needles).appended([]byte(text), at)
			if fmt.Sprint(got.at) != fmt.Sprint(want.at) || got.many != want.many {
				t.Errorf("%q then %q: found %v, want %v", text[:at], text[at:], got.at, want.at)
			}
		}
	}
}
