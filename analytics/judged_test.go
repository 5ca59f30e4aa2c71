package analytics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// judgeRows is a history of three judged attempts in two runs: one sent
// back for a regression, then two that passed.
const judgeRows = `time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail
2026-01-21T10:00:00.000Z,r1,1,judge,ISSUE-20260121-001,,0,fail,,,,fixed=2 regressions=1
2026-01-21T10:01:00.000Z,r1,2,judge,ISSUE-20260121-001,,1,pass,,,,fixed=2 regressions=0
2026-01-21T10:02:00.000Z,r2,1,judge,ISSUE-20260121-002,,0,pass,,,,fixed=1 regressions=0 later=9
2026-01-21T10:03:00.000Z,r2,1,judge,ISSUE-20260121-003,,0,pass,,,,fixed=x
`

// Tests fixed count the attempts that passed; regressions every attempt's;
// a malformed detail counts the attempt and nothing else.
func TestJudgedCounts(t *testing.T) {
	m, err := Compute(strings.NewReader(judgeRows))
	if err != nil {
		t.Fatal(err)
	}
	if m.JudgedAttempts != 4 || m.TestsFixed != 3 || m.Regressions != 1 {
		t.Errorf("judged %d, fixed %d, regressions %d; want 4, 3, 1", m.JudgedAttempts, m.TestsFixed, m.Regressions)
	}
	for run, want := range map[string]Judged{"": {3, 1}, "r1": {2, 1}, "r2": {1, 0}, "r3": {}} {
		got, err := CountJudged(strings.NewReader(judgeRows), run)
		if err != nil || got != want {
			t.Errorf("CountJudged(%q) = %+v, %v; want %+v", run, got, err, want)
		}
	}
	if _, err := ParseJudged("fixed=-1"); err == nil {
		t.Errorf("ParseJudged took a negative count")
	}
}

// The page shows the tests fixed only when some attempt was judged.
func TestJudgedCard(t *testing.T) {
	m, _ := Compute(strings.NewReader(judgeRows))
	var found bool
	for _, c := range cards(m) {
		found = found || c.Label == "Tests fixed" && c.Value == "3" && strings.Contains(c.Note, "1 regression caught over 4 attempts")
	}
	if !found {
		t.Errorf("no Tests fixed card: %+v", cards(m))
	}
	for _, c := range cards(&Metrics{}) {
		if c.Label == "Tests fixed" {
			t.Errorf("a Tests fixed card with no judged attempt")
		}
	}
}

// CountJudgedFile reads the end of a long history with its header, and a
// missing history counts nothing.
func TestCountJudgedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.csv")
	if got, err := CountJudgedFile(path, ""); err != nil || got != (Judged{}) {
		t.Fatalf("missing file: %+v, %v", got, err)
	}
	head, rows, _ := strings.Cut(judgeRows, "\n")
	filler := strings.Repeat("2026-01-21T09:00:00.000Z,r0,1,gate,,tests,0,pass,0,5,,\n", 40)
	if err := os.WriteFile(path, []byte(head+"\n"+filler+rows), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(n int64) { judgedTail = n }(judgedTail)
	judgedTail = int64(len(rows) + 10) // the judge rows and part of a filler row
	if got, err := CountJudgedFile(path, "r1"); err != nil || got != (Judged{2, 1}) {
		t.Errorf("CountJudgedFile(r1) = %+v, %v; want {2 1}", got, err)
	}
}
