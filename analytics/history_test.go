package analytics

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func readAll(t *testing.T, path string) (events []Event, bad []rowError) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = readHistory(f, func(e Event) error {
		events = append(events, e)
		return nil
	}, func(e *rowError) { bad = append(bad, *e) })
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return events, bad
}

func exit(code int) *int { return &code }

func TestAppendHistoryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.csv")
	at := time.Date(2026, 1, 21, 10, 30, 0, 123_000_000, time.FixedZone("CET", 3600))
	in := []Event{
		{Time: at, RunID: "r1", Loop: 2, Event: EventGate, IssueID: "ISSUE-20260121-001", Gate: "tests",
			Outcome: OutcomeFail, ExitCode: exit(1), DurationMS: 4200, Signature: "abc123", Detail: `got "3", want 4`},
		{Time: at, RunID: "r1", Event: EventAgent, Outcome: "ok", ExitCode: exit(0)},
		{Time: at, Event: EventRecord, IssueID: "X", Attempt: 3, Detail: "line one\nline two\r\nthree, with comma"},
	}
	if err := AppendHistory(path, in...); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 4 || lines[0]+"\n" != headerLine {
		t.Fatalf("file = %q; want the header and one line per event", data)
	}
	if !strings.HasPrefix(lines[1], "2026-01-21T09:30:00.123Z,r1,2,gate,") {
		t.Errorf("line 2 = %q; want the time in UTC with milliseconds", lines[1])
	}
	got, bad := readAll(t, path)
	if len(bad) != 0 {
		t.Fatalf("malformed rows: %v", bad)
	}
	want := append([]Event(nil), in...)
	want[2].Detail = "line one line two three, with comma"
	for i := range want {
		want[i].Time = at.UTC()
	}
	for i := range got {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("row %d: time %v; want %v", i, got[i].Time, want[i].Time)
		}
		got[i].Time = want[i].Time
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadHistory(AppendHistory(events)) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestAppendHistoryHeaderOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.csv")
	for i := range 3 {
		if err := AppendHistory(path, Event{Event: EventCheck, Outcome: "nothing", Loop: i}); err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "time,run_id"); n != 1 {
		t.Errorf("header written %d times; want once:\n%s", n, data)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("%d lines; want 4:\n%s", n, data)
	}

	// An empty file (created by someone else) gets the header too.
	empty := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendHistory(empty, Event{Event: EventAbort}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(empty); !strings.HasPrefix(string(data), headerLine) {
		t.Errorf("empty file after append = %q; want the header first", data)
	}
}

func TestAppendHistoryOneWrite(t *testing.T) {
	var writes [][]byte
	testHookWrite = func(b []byte) { writes = append(writes, append([]byte(nil), b...)) }
	defer func() { testHookWrite = nil }()

	path := filepath.Join(t.TempDir(), "history.csv")
	events := make([]Event, 50)
	for i := range events {
		events[i] = Event{Event: EventGate, Gate: fmt.Sprint("g", i), Outcome: OutcomePass}
	}
	if err := AppendHistory(path, events...); err != nil {
		t.Fatal(err)
	}
	if err := AppendHistory(path, events[:3]...); err != nil {
		t.Fatal(err)
	}
	if len(writes) != 2 {
		t.Fatalf("%d writes for 2 calls; want one each", len(writes))
	}
	if n := strings.Count(string(writes[0]), "\n"); n != 51 {
		t.Errorf("first write has %d lines; want header and 50 rows", n)
	}
	if err := AppendHistory(path); err != nil || len(writes) != 2 {
		t.Errorf("AppendHistory with no events: err %v, %d writes; want nil and no write", err, len(writes))
	}
	if err := AppendHistory(path, Event{}); err == nil {
		t.Error("AppendHistory(Event{}) = nil; want an error for the missing event name")
	}
}

func TestAppendHistoryRepairsTornLine(t *testing.T) {
	row := func(issue string) string {
		b, err := encodeRows([]Event{{Time: time.Unix(0, 0), Event: EventRecord, IssueID: issue}}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	good := row("A")
	tests := []struct {
		name      string
		content   string
		wantRows  []string // issue IDs read back, in order
		wantBad   int      // rows skipped as malformed
		wantBytes string   // what the file must start with, when set
	}{
		{"torn in a field", headerLine + good + "2026-01-01T00:00:00.000Z,r,1,gate,I", []string{"A", "B"}, 1, ""},
		{"torn in a quoted field", headerLine + good + `2026-01-01T00:00:00.000Z,r,1,record,I,"a gate, with a comma`, []string{"A", "B"}, 1, ""},
		{"torn in the detail", headerLine + good + `2026-01-01T00:00:00.000Z,r,1,record,T,,,,,,,"half a det`, []string{"A", "T", "B"}, 0, ""},
		{"torn in the header", headerLine[:7], []string{"B"}, 0, headerLine},
		{"no newline after the header", strings.TrimSuffix(headerLine, "\n"), []string{"B"}, 0, headerLine},
		{"intact", headerLine + good, []string{"A", "B"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.csv")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := AppendHistory(path, Event{Time: time.Unix(0, 0), Event: EventRecord, IssueID: "B"}); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(data), tt.content) {
				t.Errorf("the file lost bytes: %q does not start with %q", data, tt.content)
			}
			if tt.wantBytes != "" && !strings.HasPrefix(string(data), tt.wantBytes) {
				t.Errorf("file = %q; want it to start with %q", data, tt.wantBytes)
			}
			events, bad := readAll(t, path)
			var ids []string
			for _, e := range events {
				ids = append(ids, e.IssueID)
			}
			if !reflect.DeepEqual(ids, tt.wantRows) || len(bad) != tt.wantBad {
				t.Errorf("read back issues %v with %d bad rows; want %v with %d\nfile:\n%s", ids, len(bad), tt.wantRows, tt.wantBad, data)
			}
		})
	}
}

func TestAppendHistoryConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.csv")
	const goroutines, calls, perCall = 8, 6, 4
	long := strings.Repeat("x", 5000) // rows large enough to tear if writes interleaved
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for g := range goroutines {
		wg.Go(func() {
			for c := range calls {
				events := make([]Event, perCall)
				for i := range events {
					events[i] = Event{Event: EventGate, RunID: fmt.Sprintf("g%d", g), Loop: c, Attempt: i, Detail: long}
				}
				if err := AppendHistory(path, events...); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	events, bad := readAll(t, path)
	if len(bad) != 0 {
		t.Fatalf("%d malformed rows after concurrent appends: %v", len(bad), bad[0])
	}
	seen := map[string]bool{}
	for _, e := range events {
		seen[fmt.Sprintf("%s/%d/%d", e.RunID, e.Loop, e.Attempt)] = true
	}
	if len(events) != goroutines*calls*perCall || len(seen) != len(events) {
		t.Errorf("read %d rows (%d distinct); want %d", len(events), len(seen), goroutines*calls*perCall)
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "time,run_id"); n != 1 {
		t.Errorf("header appears %d times; want once", n)
	}
}

func TestReadHistory(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		events  int
		bad     []int // lines of skipped rows
		wantErr string
	}{
		{"empty", "", 0, nil, ""},
		{"header only", headerLine, 0, nil, ""},
		{"not a header", "a,b,c\n", 0, nil, `line 1: not a history header: no "time" column`},
		{"columns in another order, and an extra one", "event,extra,time,run_id,loop,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n" +
			"agent,zzz,2026-01-01T00:00:00Z,,,,,,,,,,\n", 1, nil, ""},
		{"seconds and an offset", headerLine + "2026-01-01T01:00:00+01:00,,,agent,,,,,,,,\n", 1, nil, ""},
		{"CRLF and a BOM", "\ufeff" + strings.ReplaceAll(headerLine, "\n", "\r\n") + "2026-01-01T00:00:00Z,,,agent,,,,,,,,\r\n", 1, nil, ""},
		{"malformed rows", headerLine +
			"2026-01-01T00:00:00Z,,,agent,,,,,,,,\n" + // 2: fine
			"yesterday,,,agent,,,,,,,,\n" + // 3: bad time
			"2026-01-01T00:00:00Z,,x,agent,,,,,,,,\n" + // 4: bad loop
			"2026-01-01T00:00:00Z,,,,,,,,,,,\n" + // 5: no event
			"2026-01-01T00:00:00Z,,,agent\n" + // 6: too few fields
			"2026-01-01T00:00:00Z,,,agent,,,,,1.5,,,\n" + // 7: bad exit code
			"2026-01-01T00:00:00Z,,,agent,,\"bare\"quote,,,,,,\n" + // 8: bad quoting
			headerLine + // 9: a repeated header, skipped silently
			"2026-01-01T00:00:00Z,,,agent,,,,,,99999999999,,\n", // 10: fine
			2, []int{3, 4, 5, 6, 7, 8}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int
			var bad []int
			err := readHistory(strings.NewReader(tt.in), func(Event) error { n++; return nil },
				func(e *rowError) { bad = append(bad, e.Line) })
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ReadHistory = %v; want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.events || !reflect.DeepEqual(bad, tt.bad) {
				t.Errorf("ReadHistory: %d events, bad lines %v; want %d, %v", n, bad, tt.events, tt.bad)
			}
		})
	}
}

func TestReadHistoryStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	in := headerLine + strings.Repeat("2026-01-01T00:00:00Z,,,agent,,,,,,,,\n", 3)
	n := 0
	err := readHistory(strings.NewReader(in), func(Event) error { n++; return stop }, nil)
	if err != stop || n != 1 {
		t.Errorf("ReadHistory = %v after %d calls; want the callback's error after 1", err, n)
	}
}
