package analytics

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// nouns are the things the page counts, singular and plural.
var nouns = map[string]string{
	"issue": "issues", "run": "runs", "row": "rows", "launch": "launches",
	"loop": "loops", "failure": "failures", "week": "weeks", "history": "histories",
	"agent": "agents", "retry": "retries", "signature": "signatures", "check": "checks",
	"attempt": "attempts", "gate": "gates",
}

// pageText renders m and returns the page's text: no script, no style, a
// line break for each tag (a table's cells do not run into each other).
func pageText(t *testing.T, m *Metrics) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, m, RenderOptions{Echarts: []byte("/* echarts */")}); err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>`).ReplaceAllString(b.String(), "")
	return regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, "\n")
}

// disagreements returns the counts in text whose noun disagrees in number:
// "1 issues", "2 issue".
func disagreements(text string) []string {
	var alt []string
	for one, many := range nouns {
		alt = append(alt, one, many)
	}
	re := regexp.MustCompile(`(?:^|[\s(])(\d+) (?:[a-z-]+ )?(` + strings.Join(alt, "|") + `)\b`)
	var bad []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		_, singular := nouns[m[2]]
		if (n == 1) != singular {
			bad = append(bad, strings.TrimSpace(m[0]))
		}
	}
	return bad
}

// Every count on the page agrees in number with its noun: "1 issue", "2
// issues", whatever there is one or two of.
func TestPageAgreesInNumber(t *testing.T) {
	head := "time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n"
	one := head +
		"2026-01-10T09:00:00.000Z,r1,,run_start,,,,,,,,\n" +
		"2026-01-10T09:00:01.000Z,r1,1,agent,,,,ok,0,1000,,\n" +
		"2026-01-10T09:00:02.000Z,r1,1,gate,ISSUE-1,tests,,fail,1,100,sig-a,\n" +
		"2026-01-10T09:00:02.000Z,r1,1,issue_add,ISSUE-1,tests,,,,,sig-a,TestA fails\n" +
		"2026-01-10T09:00:03.000Z,r1,1,check,,,,triggered,,,,ISSUE-1\n" +
		"2026-01-10T09:00:03.000Z,r1,1,retry_triggered,ISSUE-1,,1,,,,,\n" +
		"2026-01-10T09:00:04.000Z,r1,,claim,ISSUE-1,,1,,,,,holder=agent-1@h/10\n" +
		"2026-01-10T09:00:05.000Z,r1,2,merge,ISSUE-1,,,fail,,,,merge conflict in a.go\n" +
		"2026-01-10T09:00:06.000Z,r1,,run_end,,,,gates_failed,,6000,,; agents=2 merged=0 agent_ms=1000\n" +
		"2026-01-10T09:00:07.000Z,r1,,torn\n"
	two := head +
		"2026-01-10T09:00:00.000Z,r1,,run_start,,,,,,,,\n" +
		"2026-01-10T09:00:01.000Z,r1,1,agent,,,,ok,0,1000,,\n" +
		"2026-01-10T09:00:01.000Z,r1,1,agent,,,,ok,0,1000,,\n" +
		"2026-01-10T09:00:02.000Z,r1,1,gate,ISSUE-1,tests,,fail,1,100,sig-a,\n" +
		"2026-01-10T09:00:02.000Z,r1,1,issue_add,ISSUE-1,tests,,,,,sig-a,TestA fails\n" +
		"2026-01-10T09:00:02.000Z,r1,1,gate,ISSUE-2,lint,,fail,1,100,sig-b,\n" +
		"2026-01-10T09:00:02.000Z,r1,1,issue_add,ISSUE-2,lint,,,,,sig-b,lint fails\n" +
		"2026-01-10T09:00:03.000Z,r1,1,check,,,,triggered,,,,ISSUE-1 ISSUE-2\n" +
		"2026-01-10T09:00:03.000Z,r1,2,check,,,,triggered,,,,ISSUE-1 ISSUE-2\n" +
		"2026-01-10T09:00:04.000Z,r1,,claim,ISSUE-1,,1,,,,,holder=agent-1@h/10\n" +
		"2026-01-10T09:00:05.000Z,r1,2,merge,ISSUE-1,,,fail,,,,merge conflict in a.go\n" +
		"2026-01-10T09:00:05.000Z,r1,2,merge,ISSUE-1,,,fail,,,,merge conflict in b.go\n" +
		"2026-01-10T09:00:06.000Z,r1,,run_end,,,,gates_failed,,6000,,; agents=2 merged=0 agent_ms=1000\n" +
		"2026-01-10T09:01:00.000Z,r2,,run_end,,,,passed,,,,\n" +
		"2026-01-10T09:00:07.000Z,r1,,torn\n" +
		"2026-01-10T09:00:07.000Z,r1,,torn\n"
	for _, tt := range []struct{ name, csv string }{
		{"one row", head + "2026-01-10T09:00:00.000Z,r1,,run_start,,,,,,,,\n"},
		{"one of each", one},
		{"two of each", two},
	} {
		m, err := Compute(strings.NewReader(tt.csv))
		if err != nil {
			t.Fatal(err)
		}
		if bad := disagreements(pageText(t, m)); len(bad) > 0 {
			t.Errorf("%s: the page says %q", tt.name, bad)
		}
	}
	// The check itself finds what it is for.
	if bad := disagreements("The 1 issues with the most retries, of 2 issue.\n1 auto-retry loops"); len(bad) != 3 {
		t.Errorf("disagreements found %q; want 3", bad)
	}
}

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n          int
		word, want string
	}{
		{1, "issue", "1 issue"}, {0, "issue", "0 issues"}, {2, "agent launch", "2 agent launches"},
		{3, "history", "3 histories"}, {2, "day", "2 days"}, {1, "retry", "1 retry"}, {2, "retry", "2 retries"},
	} {
		if got := count(tt.n, tt.word); got != tt.want {
			t.Errorf("count(%d, %q) = %q; want %q", tt.n, tt.word, got, tt.want)
		}
	}
}

func TestMetricsStringAgreesInNumber(t *testing.T) {
	m := &Metrics{Rows: 1, IssuesFiled: 1, CapHits: 1, Runs: 1}
	if got, want := m.String(), "1 row, 1 issue, 0 fixed autonomously (0%), 0 halted, 1 cap hit, 1 run"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
}
