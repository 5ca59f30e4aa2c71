package analytics

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
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
		{"Rows", m.Rows, 91},
		{"Malformed", m.Malformed, 1},
		{"IssuesFiled", int64(m.IssuesFiled), 7},
		{"FixedAutonomously", int64(m.FixedAutonomously), 1},
		{"FixedByLoop", int64(m.FixedByLoop), 2},
		{"Halted", int64(m.Halted), 2},
		{"CapHits", int64(m.CapHits), 1},
		{"Runs", int64(m.Runs), 5}, // the rows outside a run (norun) are none
		{"RetryLoops", m.RetryLoops, 7},
		{"MaxRetriesPerRun", int64(m.MaxRetriesPerRun), 2},
		{"AgentLaunches", m.AgentLaunches, 12},
		{"GateRuns", m.GateRuns, 20}, // an orchestrate gate outside a run included
		{"GateFailures", m.GateFailures, 14},
		{"TimeToFix.Count", int64(m.TimeToFix.Count), 2},
		// 102000 for the first issue; 22h30m45s from filing to fixing for the other,
		// whose resolve row has no duration.
		{"TimeToFix.MeanMS", m.TimeToFix.MeanMS, (102000 + 81045000) / 2},
		{"TimeToFix.MedianMS", m.TimeToFix.MedianMS, (102000 + 81045000) / 2},
		// Only run-1 ends with every gate passing: from its run_start at 09:00:00 to
		// lint's pass at 09:02:47. run-4's tests pass, but its e2e errs.
		{"SucceededRuns", int64(m.SucceededRuns), 1},
		{"TimeToSuccess.Count", int64(m.TimeToSuccess.Count), 1},
		{"TimeToSuccess.MedianMS", m.TimeToSuccess.MedianMS, 167000},
		// The skipped vet issue and the e2e gate that could not run (exit 127).
		{"FalsePositives", int64(m.FalsePositives), 2},
		{"Weeks", int64(len(m.Weeks)), 2}, // Sat 10th and Sun 11th; Mon 12th to Wed 14th
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
		{"GateFailureRate", m.GateFailureRate, 14.0 / 20},
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

// TestComputeSeedMetrics pins seed 001's metrics at their boundaries: time to
// success from the task's start to the pass that left every gate passing, a run
// whose gates fail again after passing is no success, the false positives, and
// the tokens per success from usage rows.
func TestComputeSeedMetrics(t *testing.T) {
	const history = `time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail
2026-03-02T10:00:00.000Z,r1,,run_start,,,,,,,,
2026-03-02T10:00:01.000Z,r1,1,agent,,,1,ok,0,50000,,
2026-03-02T10:00:51.000Z,r1,1,usage,,,1,,,,,session=s1 turns=3 input_tokens=1000 output_tokens=200 cache_read_tokens=300 cost_usd=0.5
2026-03-02T10:01:00.000Z,r1,1,gate,I-1,tests,,fail,1,1000,sig-a,
2026-03-02T10:01:00.000Z,r1,1,issue_add,I-1,tests,,,,,sig-a,tests fail
2026-03-02T10:01:01.000Z,r1,1,gate,,lint,,pass,0,1000,,
2026-03-02T10:02:00.000Z,r1,2,agent,,,2,ok,0,30000,,
2026-03-02T10:02:30.000Z,r1,2,usage,,,2,,,,,input_tokens=500 cost_usd=0.25
2026-03-02T10:03:00.000Z,r1,2,gate,I-1,tests,,pass,0,1000,,
2026-03-02T10:03:00.001Z,r1,2,gate,,lint,,pass,0,1000,,
2026-03-02T10:03:01.000Z,r1,2,resolve,I-1,,1,,,,,
2026-03-08T23:59:59.999Z,r2,,run_start,,,,,,,,
2026-03-09T00:00:10.000Z,r2,1,gate,,tests,,pass,0,1000,,
2026-03-09T00:00:11.000Z,r2,1,gate,I-2,lint,,fail,1,1000,sig-b,
2026-03-09T00:00:11.000Z,r2,1,issue_add,I-2,lint,,,,,sig-b,lint fails
2026-03-09T00:00:12.000Z,r2,1,usage,,,1,,,,,output_tokens=100 bogus=1
2026-03-09T00:00:13.000Z,r2,1,usage,,,1,,,,,input_tokens=lots
2026-03-09T00:01:00.000Z,,,skip,I-2,,,,,,,
2026-03-09T01:00:00.000Z,r3,,run_start,,,,,,,,
2026-03-09T01:00:10.000Z,r3,1,gate,I-3,e2e,,error,127,10,sig-c,
2026-03-09T01:00:10.000Z,r3,1,issue_add,I-3,e2e,,,,,sig-c,e2e cannot run
2026-03-09T01:00:10.000Z,r3,1,halt,I-3,e2e,,,,,sig-c,nonretryable
2026-03-09T02:00:00.000Z,r4,,run_start,,,,,,,,
2026-03-09T02:00:10.000Z,r4,1,gate,I-4,tests,,fail,1,10,sig-d,
2026-03-09T02:00:10.000Z,r4,1,issue_add,I-4,tests,,,,,sig-d,flaky
2026-03-09T02:00:20.000Z,r4,1,halt,I-4,tests,,,,,sig-d,identical
2026-03-09T02:00:30.000Z,r4,1,gate,,tests,,skipped,,,,
`
	m, err := Compute(strings.NewReader(history))
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		name      string
		got, want int64
	}{
		// r1 only: 10:00:00.000 to lint's pass at 10:03:00.001, the row that left no
		// gate failing (tests' pass a millisecond before left lint's earlier pass).
		{"SucceededRuns", int64(m.SucceededRuns), 1},
		{"TimeToSuccess.Count", int64(m.TimeToSuccess.Count), 1},
		{"TimeToSuccess.MedianMS", m.TimeToSuccess.MedianMS, 180001},
		// Filed at 10:01:00, resolved at 10:03:01.
		{"TimeToFix.MedianMS", m.TimeToFix.MedianMS, 121000},
		// I-2 skipped by a person, I-3's gate could not run; I-4 halted on identical
		// failures is a true failure, I-1 fixed.
		{"FalsePositives", int64(m.FalsePositives), 2},
		{"IssuesFiled", int64(m.IssuesFiled), 4},
		// Usage: 1500 + 500 + 100 (an unknown key is ignored); the unreadable row is not counted.
		{"UsageReports", m.UsageReports, 3},
		{"Tokens", m.Tokens, 2100},
		{"AgentMS", m.AgentMS, 80000},
		{"AgentMSPerRun", m.AgentMSPerRun, 20000},
		{"Weeks", int64(len(m.Weeks)), 2},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d; want %d", c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"FalsePositiveRate", m.FalsePositiveRate, 0.5},
		{"TokensPerSuccess", m.TokensPerSuccess, 2100},
		{"CostUSD", m.CostUSD, 0.75},
		{"CostPerSuccess", m.CostPerSuccess, 0.75},
		{"CostPerRun", m.CostPerRun, 0.1875},
	}
	for _, c := range floats {
		if diff := c.got - c.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s = %g; want %g", c.name, c.got, c.want)
		}
	}
	// Weeks are Monday to Sunday in UTC: r2 started on Sunday at 23:59:59.999, its
	// rows after midnight belong to the next week.
	w0, w1 := m.Weeks[0], m.Weeks[1]
	if w0.Week != "2026-03-02" || w0.Runs != 2 || w0.Succeeded != 1 || w0.MeanTimeToSuccessMS != 180001 ||
		w0.GateRuns != 4 || w0.GateFailures != 1 || w0.IssuesFiled != 1 || w0.IssuesFixed != 1 ||
		w0.AgentLaunches != 2 || w0.AgentMS != 80000 || w0.Tokens != 2000 {
		t.Errorf("first week = %+v", w0)
	}
	if w1.Week != "2026-03-09" || w1.Runs != 2 || w1.Succeeded != 0 || w1.GateRuns != 4 || w1.GateFailures != 3 ||
		w1.IssuesFiled != 3 || w1.Tokens != 100 {
		t.Errorf("second week = %+v", w1)
	}
	runs := map[string]RunStat{}
	for _, r := range m.RecentRuns {
		runs[r.ID] = r
	}
	if r := runs["r1"]; !r.Succeeded || r.TimeToSuccessMS != 180001 || r.Tokens != 2000 || r.AgentMS != 80000 || r.CostUSD != 0.75 {
		t.Errorf("r1 = %+v", r)
	}
	// r2: tests passed, lint failed last; r4: its failing gate was skipped later.
	for _, id := range []string{"r2", "r3", "r4"} {
		if runs[id].Succeeded {
			t.Errorf("%s succeeded: %+v", id, runs[id])
		}
	}
}

func TestWeekKey(t *testing.T) {
	for _, tc := range []struct {
		t    string
		want string
	}{
		{"2026-03-09T00:00:00Z", "2026-03-09"}, // a Monday
		{"2026-03-08T23:59:59.999Z", "2026-03-02"},
		{"2026-03-15T23:59:59Z", "2026-03-09"}, // the Sunday after
		{"1970-01-01T00:00:00Z", "1969-12-29"},
		{"1969-12-28T23:59:59Z", "1969-12-22"},
	} {
		at, _ := time.Parse(time.RFC3339, tc.t)
		if got := time.Unix(weekKey(at)*86400, 0).UTC().Format(time.DateOnly); got != tc.want {
			t.Errorf("week of %s = %s; want %s", tc.t, got, tc.want)
		}
	}
}

// TestComputeGateAfterRunEnd: a gate run later in a passed run's session
// (orchestrate gate) does not turn its success into a failure; in a session
// with no run_end, the gates' last rows still decide.
func TestComputeGateAfterRunEnd(t *testing.T) {
	in := headerLine +
		"2026-01-01T00:00:00Z,r1,,run_start,,,,,,,,\n" +
		"2026-01-01T00:00:01Z,r1,1,gate,,unit,,pass,0,5,,\n" +
		"2026-01-01T00:00:02Z,r1,1,run_end,,,,passed,,,,every blocking quality gate passes\n" +
		"2026-01-01T00:00:09Z,r1,,gate,,unit,,fail,1,5,abc,\n" +
		"2026-01-02T00:00:00Z,s2,,gate,,unit,,fail,1,5,abc,\n" +
		"2026-01-02T00:00:05Z,s2,,gate,,unit,,pass,0,5,,\n" +
		"2026-01-03T00:00:00Z,s3,,gate,,unit,,pass,0,5,,\n" +
		"2026-01-03T00:00:05Z,s3,,gate,,unit,,fail,1,5,abc,\n"
	m, err := Compute(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 3 || m.SucceededRuns != 2 || m.TimeToSuccess.Count != 2 {
		t.Errorf("Compute = %d runs, %d succeeded, %d times to success; want 3, 2 (r1 and s2), 2", m.Runs, m.SucceededRuns, m.TimeToSuccess.Count)
	}
}

// An advisory or informational gate that fails (its row says so in detail)
// does not fail the run: the run that passed its blocking gates succeeded,
// at the time they passed.
func TestComputeAdvisoryFailure(t *testing.T) {
	in := headerLine +
		"2026-01-01T00:00:00Z,r1,,run_start,,,,,,,,\n" +
		"2026-01-01T00:00:04Z,r1,1,gate,,unit,,pass,0,5,,\n" +
		"2026-01-01T00:00:05Z,r1,1,gate,,style,,fail,1,5,abc,advisory\n" +
		"2026-01-01T00:00:06Z,r1,1,gate,,size,,fail,1,5,abd,informational\n" +
		"2026-01-01T00:00:07Z,r1,1,run_end,,,,passed,,,,every blocking quality gate passes\n" +
		"2026-01-02T00:00:00Z,r2,,run_start,,,,,,,,\n" +
		"2026-01-02T00:00:04Z,r2,1,gate,,unit,,pass,0,5,,\n" +
		"2026-01-02T00:00:05Z,r2,1,gate,,style,,fail,1,5,abc,\n" +
		"2026-01-02T00:00:07Z,r2,1,run_end,,,,failed,,,,\n"
	m, err := Compute(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 2 || m.SucceededRuns != 1 || m.TimeToSuccess.Count != 1 || m.TimeToSuccess.MedianMS != 4000 {
		t.Errorf("Compute = %d runs, %d succeeded, times to success %+v; want 2, 1 (r1, at 4 s)", m.Runs, m.SucceededRuns, m.TimeToSuccess)
	}
}

// Runs of several agents: each agent's claims, merges and merge failures,
// a takeover counted for its new holder, and the time saved against one
// agent after another.
func TestComputeAgents(t *testing.T) {
	csv := `time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail
2026-01-10T09:00:00.000Z,r1,,claim,ISSUE-1,,1,,,,,holder=agent-1@h/10
2026-01-10T09:00:00.000Z,r1,,claim,ISSUE-2,,1,,,,,holder=agent-2@h/10
2026-01-10T09:00:05.000Z,r1,1,merge,ISSUE-1,,,pass,,,,abc into main
2026-01-10T09:00:06.000Z,r1,1,merge,ISSUE-2,,,fail,,,,merge conflict rebasing onto main in a.go
2026-01-10T09:00:07.000Z,r1,,claim,ISSUE-2,,2,,,,,holder=agent-1@h/11 from=agent-2@h/10
2026-01-10T09:00:09.000Z,r1,2,merge,ISSUE-2,,,pass,,,,def into main
2026-01-10T09:00:10.000Z,r1,,run_end,,,,passed,,10000,,every issue worked was merged; agents=2 merged=2 agent_ms=16000
2026-01-10T09:01:00.000Z,r2,,run_end,,,,passed,,5000,,every blocking quality gate passes
`
	m, err := Compute(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := []AgentStat{{Name: "agent-1@h", Claims: 2, Merged: 2}, {Name: "agent-2@h", Claims: 1, MergeFailures: 1}}
	if !slices.Equal(m.Agents, want) {
		t.Errorf("Agents = %+v, want %+v", m.Agents, want)
	}
	if m.ParallelRuns != 1 || m.ParallelWallMS != 10000 || m.ParallelAgentMS != 16000 || m.TimeSavedMS != 6000 || m.MergeConflicts != 1 {
		t.Errorf("parallel runs %d, wall %d, agents %d, saved %d, conflicts %d", m.ParallelRuns, m.ParallelWallMS, m.ParallelAgentMS, m.TimeSavedMS, m.MergeConflicts)
	}
}

// Machines that share a remote each run an agent-1: the page tells them
// apart by their host, in one history or in each machine's own.
func TestComputeAgentsByHost(t *testing.T) {
	head := "time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n"
	a := head +
		"2026-01-10T09:00:00.000Z,ra,,claim,ISSUE-1,,1,,,,,holder=agent-1@hostA/10\n" +
		"2026-01-10T09:00:05.000Z,ra,1,merge,ISSUE-1,,,pass,,,,abc into main\n"
	b := head +
		"2026-01-10T09:00:01.000Z,rb,,claim,ISSUE-2,,1,,,,,holder=agent-1@hostB/10\n" +
		"2026-01-10T09:00:06.000Z,rb,1,merge,ISSUE-2,,,fail,,,,merge conflict in a.go\n" +
		"2026-01-10T09:00:07.000Z,rb,,claim,ISSUE-3,,1,,,,,holder=agent-1@hostB/12\n"
	want := []AgentStat{{Name: "agent-1@hostA", Claims: 1, Merged: 1}, {Name: "agent-1@hostB", Claims: 2, MergeFailures: 1}}
	m, err := ComputeAll([]Source{{Name: "a", R: strings.NewReader(a)}, {Name: "b", R: strings.NewReader(b)}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Agents, want) {
		t.Errorf("two histories: Agents = %+v, want %+v", m.Agents, want)
	}
	m, err = Compute(strings.NewReader(a + strings.TrimPrefix(b, head)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Agents, want) {
		t.Errorf("one history: Agents = %+v, want %+v", m.Agents, want)
	}
}

// The rows orchestrate gate and issue add write outside any run (run_id
// norun) are no run: they count for their gate and their issue only.
func TestComputeOutsideRuns(t *testing.T) {
	csv := `time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail
2026-01-10T08:00:00.000Z,norun,,gate,ISSUE-1,tests,,fail,1,100,sig-a,
2026-01-10T08:00:00.000Z,norun,,issue_add,ISSUE-1,tests,,,,,sig-a,TestA fails
2026-01-10T08:30:00.000Z,norun,,issue_add,ISSUE-2,,,,,,,filed by hand
2026-01-10T09:00:00.000Z,r1,,run_start,,,,,,,,
2026-01-10T09:00:01.000Z,r1,1,agent,,,,ok,0,1000,,
2026-01-10T09:00:02.000Z,r1,1,gate,ISSUE-1,tests,,pass,0,100,,
2026-01-10T09:00:02.000Z,r1,1,resolve,ISSUE-1,tests,0,,,,,
2026-01-10T09:00:03.000Z,r1,,run_end,,,,passed,,3000,,
2026-01-10T10:00:00.000Z,norun,,gate,,tests,,pass,0,100,,
`
	m, err := Compute(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 1 || len(m.RecentRuns) != 1 || m.RecentRuns[0].ID != "r1" || m.SucceededRuns != 1 {
		t.Errorf("Runs %d, RecentRuns %+v, SucceededRuns %d; want the one run r1, succeeded", m.Runs, m.RecentRuns, m.SucceededRuns)
	}
	if len(m.Weeks) != 1 || m.Weeks[0].Runs != 1 {
		t.Errorf("Weeks = %+v; want one week of one run", m.Weeks)
	}
	if m.GateRuns != 3 || m.GateFailures != 1 || m.IssuesFiled != 2 {
		t.Errorf("GateRuns %d, GateFailures %d, IssuesFiled %d; want 3, 1, 2", m.GateRuns, m.GateFailures, m.IssuesFiled)
	}
	if m.RetriesPerRun != 0 || m.AgentMSPerRun != 1000 {
		t.Errorf("RetriesPerRun %v, AgentMSPerRun %d; want 0, 1000", m.RetriesPerRun, m.AgentMSPerRun)
	}
}
