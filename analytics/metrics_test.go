package analytics

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func computeTestdata(t *testing.T, name string) *Metrics {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Compute(f)
	if err != nil {
		t.Fatalf("Compute(%s): %v", name, err)
	}
	return m
}

func TestComputeGolden(t *testing.T) {
	m := computeTestdata(t, "basic.csv")
	got, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "basic.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Compute(basic.csv) differs from %s (run with -update after checking):\n%s", golden, lineDiff(string(want), string(got)))
	}
}

// TestComputeHeadline checks the headline numbers of basic.csv against the story the
// file tells (see testdata/README.md), independently of the golden file.
func TestComputeHeadline(t *testing.T) {
	m := computeTestdata(t, "basic.csv")
	ints := []struct {
		name      string
		got, want int64
	}{
		{"Rows", m.Rows, 88},
		{"Malformed", m.Malformed, 1},
		{"IssuesFiled", int64(m.IssuesFiled), 7},
		{"FixedAutonomously", int64(m.FixedAutonomously), 1},
		{"FixedByLoop", int64(m.FixedByLoop), 2},
		{"Halted", int64(m.Halted), 2},
		{"CapHits", int64(m.CapHits), 1},
		{"Runs", int64(m.Runs), 5},
		{"RetryLoops", m.RetryLoops, 7},
		{"MaxRetriesPerRun", int64(m.MaxRetriesPerRun), 2},
		{"AgentLaunches", m.AgentLaunches, 12},
		{"GateRuns", m.GateRuns, 19},
		{"GateFailures", m.GateFailures, 14},
		{"TimeToSuccess.Count", int64(m.TimeToSuccess.Count), 2},
		// 102000 for the first issue; 22h30m45s from filing to fixing for the other,
		// whose resolve row has no duration.
		{"TimeToSuccess.MeanMS", m.TimeToSuccess.MeanMS, (102000 + 81045000) / 2},
		{"TimeToSuccess.MedianMS", m.TimeToSuccess.MedianMS, (102000 + 81045000) / 2},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("Compute(basic.csv).%s = %d; want %d", c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"AutonomousFixRate", m.AutonomousFixRate, 1.0 / 7},
		// Two retries then a pass (3 attempts); one pass right after a person's reset (1).
		{"MeanAttemptsToPass", m.MeanAttemptsToPass, 2},
		{"GateFailureRate", m.GateFailureRate, 14.0 / 19},
		{"RetriesPerRun", m.RetriesPerRun, 7.0 / 5},
	}
	for _, c := range floats {
		if diff := c.got - c.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("Compute(basic.csv).%s = %v; want %v", c.name, c.got, c.want)
		}
	}

	outcomes := map[string]int64{}
	for _, c := range m.IssueOutcomes {
		outcomes[c.Name] = c.N
	}
	wantOutcomes := map[string]int64{
		IssueFixedAutonomously: 1, // ISSUE-20260110-001
		IssueFixedAfterRetry:   1, // ISSUE-20260112-001
		IssueResolvedManually:  1, // ISSUE-20260113-002
		IssueHalted:            2, // ISSUE-20260111-001, ISSUE-20260113-001
		IssueExhausted:         1, // ISSUE-20260114-001
		IssueSkipped:           1, // ISSUE-20260112-002
		IssueOpen:              0,
	}
	for name, want := range wantOutcomes {
		if outcomes[name] != want {
			t.Errorf("issues %s = %d; want %d", name, outcomes[name], want)
		}
	}
	if got, want := countsString(m.HaltReasons), "identical=1 nonretryable=1"; got != want {
		t.Errorf("HaltReasons = %s; want %s", got, want)
	}
	if len(m.TopSignatures) == 0 || m.TopSignatures[0].Signature != "sig-ccc" || m.TopSignatures[0].Count != 3 {
		t.Errorf("TopSignatures[0] = %+v; want sig-ccc seen 3 times", m.TopSignatures)
	}
	if len(m.MalformedRows) != 1 || m.MalformedRows[0].Line != 75 {
		t.Errorf("MalformedRows = %+v; want one, on line 75", m.MalformedRows)
	}
	var tests GateStat
	for _, g := range m.Gates {
		if g.Name == "tests" {
			tests = g
		}
	}
	if tests.Runs != 7 || tests.Pass != 2 || tests.Fail != 4 || tests.Timeout != 1 {
		t.Errorf("gate tests = %+v; want 7 runs: 2 pass, 4 fail, 1 timeout", tests)
	}
	if n := len(m.RecentRuns); n != 5 || m.RecentRuns[2].ID != "run-3" || !m.RecentRuns[2].CapReached || m.RecentRuns[2].RetryLoops != 2 {
		t.Errorf("RecentRuns = %+v; want 5 runs, run-3 third with the cap reached after 2 retry loops", m.RecentRuns)
	}
}

func TestComputeEmpty(t *testing.T) {
	for _, in := range []string{"", headerLine} {
		m, err := Compute(strings.NewReader(in))
		if err != nil {
			t.Fatalf("Compute(%q): %v", in, err)
		}
		if m.Rows != 0 || m.IssuesFiled != 0 || m.AutonomousFixRate != 0 || m.MeanAttemptsToPass != 0 {
			t.Errorf("Compute(%q) = %v; want all zero", in, m)
		}
	}
}

func TestComputeIgnoresIssueRowsWithoutIssue(t *testing.T) {
	in := headerLine +
		"2026-01-01T00:00:00Z,,,record,,,1,fail,1,,sig,\n" +
		"2026-01-01T00:00:00Z,,,resolve,,,,,,,,\n" +
		"2026-01-01T00:00:00Z,,,halt,,,,,,,,identical\n"
	m, err := Compute(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 3 || m.IssuesFiled != 0 || m.Halted != 0 || len(m.TopSignatures) != 0 {
		t.Errorf("Compute of issue rows with no issue ID = %v, %d signatures; want 3 rows and nothing else", m, len(m.TopSignatures))
	}
}

func TestComputeBoundsRunsAndDays(t *testing.T) {
	var b strings.Builder
	b.WriteString(headerLine)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const runs = 3 * keepRuns
	for i := range runs {
		at := start.Add(time.Duration(i) * 24 * time.Hour)
		rows, err := encodeRows([]Event{
			{Time: at, RunID: "run-" + itoa(i), Event: EventGate, Gate: "tests", Outcome: OutcomePass},
			{Time: at, RunID: "run-" + itoa(i), Event: EventCheck, Outcome: OutcomeTriggered},
		}, at)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(rows)
	}
	m, err := Compute(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != runs || len(m.RecentRuns) != keepRuns {
		t.Errorf("Runs = %d, len(RecentRuns) = %d; want %d, %d", m.Runs, len(m.RecentRuns), runs, keepRuns)
	}
	if first, last := m.RecentRuns[0].ID, m.RecentRuns[keepRuns-1].ID; first != "run-"+itoa(runs-keepRuns) || last != "run-"+itoa(runs-1) {
		t.Errorf("RecentRuns from %s to %s; want the last %d", first, last, keepRuns)
	}
	if len(m.GateOutcomesByDay) != keepDays {
		t.Errorf("len(GateOutcomesByDay) = %d; want %d", len(m.GateOutcomesByDay), keepDays)
	}
	if want := start.Add((runs - 1) * 24 * time.Hour).Format(time.DateOnly); m.GateOutcomesByDay[keepDays-1].Day != want {
		t.Errorf("last day = %s; want %s", m.GateOutcomesByDay[keepDays-1].Day, want)
	}
}

func TestTopSignaturesSketch(t *testing.T) {
	s := newTopSignatures(4)
	at := time.Unix(0, 0)
	// Two heavy signatures among many that come once each: the heavy ones must stay,
	// with counts no lower than the truth.
	for i := range 200 {
		s.add("heavy-a", "I-1", "g", at)
		if i%2 == 0 {
			s.add("heavy-b", "I-2", "g", at)
		}
		s.add("noise-"+itoa(i), "I-3", "g", at)
	}
	top := s.top(2)
	if len(top) != 2 || top[0].Signature != "heavy-a" || top[1].Signature != "heavy-b" {
		t.Fatalf("top(2) = %+v; want heavy-a then heavy-b", top)
	}
	if top[0].Count < 200 || top[0].Count-top[0].Overcount > 200 {
		t.Errorf("heavy-a: count %d, overcount %d; want a bound around 200", top[0].Count, top[0].Overcount)
	}
	if len(s.bySig) != 4 || len(s.heap) != 4 {
		t.Errorf("sketch holds %d/%d counters; want 4", len(s.bySig), len(s.heap))
	}
}

func countsString(cs []Count) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Name+"="+itoa(int(c.N)))
	}
	return strings.Join(parts, " ")
}

func itoa(i int) string { return strconv.Itoa(i) }

// lineDiff shows the first differing lines of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl + "\n")
			shown++
		}
	}
	return b.String()
}
