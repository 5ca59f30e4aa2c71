package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// scaleHistory makes a history of n runs spread evenly over span from start, as
// the loop writes them: each run's agent launches with their usage, its gates,
// the issues they file, the retries and how the run ends. The same n gives the
// same history.
func scaleHistory(n int, start time.Time, span time.Duration) []Event {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	var evs []Event
	step := span / time.Duration(max(n, 1))
	exit := func(c int) *int { return &c }
	issue := 0
	for i := range n {
		at := start.Add(time.Duration(i) * step)
		tick := func(d time.Duration) time.Time { at = at.Add(d); return at }
		run := fmt.Sprintf("%s-%04d", at.Format("20060102-150405"), i)
		evs = append(evs, Event{Time: at, RunID: run, Event: EventRunStart})
		loops := 1 + rng.IntN(3)
		var id string
		outcome := "passed"
		for loop := 1; loop <= loops; loop++ {
			agentMS := int64(20000 + rng.IntN(300000))
			evs = append(evs,
				Event{Time: tick(time.Second), RunID: run, Loop: loop, Event: EventAgent, Attempt: loop, Outcome: "ok", ExitCode: exit(0), DurationMS: agentMS},
				Event{Time: tick(time.Duration(agentMS) * time.Millisecond), RunID: run, Loop: loop, Event: EventUsage, Attempt: loop,
					Detail: FormatUsage(Usage{Turns: int64(2 + rng.IntN(9)), InputTokens: int64(5000 + rng.IntN(60000)), OutputTokens: int64(500 + rng.IntN(8000)), CostUSD: float64(rng.IntN(90000)) / 100000})})
			last := loop == loops
			testsPass := last && rng.IntN(10) > 0
			g := Event{Time: tick(4 * time.Second), RunID: run, Loop: loop, Event: EventGate, Gate: "tests", Outcome: OutcomePass, ExitCode: exit(0), DurationMS: 4000}
			if !testsPass {
				g.Outcome, g.ExitCode, g.Signature = OutcomeFail, exit(1), fmt.Sprintf("sig-%d", rng.IntN(40))
				if id == "" {
					issue++
					id = fmt.Sprintf("ISSUE-%s-%03d", at.Format("20060102"), issue%1000)
					g.IssueID = id
					evs = append(evs, g, Event{Time: at, RunID: run, Loop: loop, Event: EventIssueAdd, IssueID: id, Gate: "tests", Signature: g.Signature, Detail: "tests fail"})
				} else {
					g.IssueID = id
					evs = append(evs, g, Event{Time: at, RunID: run, Loop: loop, Event: EventRecord, IssueID: id, Attempt: loop - 1, Outcome: OutcomeFail, Signature: g.Signature})
				}
			} else {
				g.IssueID = id
				evs = append(evs, g)
				if id != "" {
					evs = append(evs, Event{Time: at, RunID: run, Loop: loop, Event: EventResolve, IssueID: id, Attempt: loop - 1})
				}
			}
			evs = append(evs, Event{Time: tick(time.Second), RunID: run, Loop: loop, Event: EventGate, Gate: "lint", Outcome: OutcomePass, ExitCode: exit(0), DurationMS: 900})
			if !last {
				evs = append(evs,
					Event{Time: tick(time.Second), RunID: run, Loop: loop, Event: EventCheck, Outcome: OutcomeTriggered, Detail: id},
					Event{Time: at, RunID: run, Loop: loop, Event: EventRetryTriggered, IssueID: id, Attempt: loop})
			} else if !testsPass {
				outcome = "halted"
				evs = append(evs, Event{Time: tick(time.Second), RunID: run, Loop: loop, Event: EventHalt, IssueID: id, Detail: "identical"})
			}
		}
		evs = append(evs, Event{Time: tick(time.Second), RunID: run, Loop: loops, Event: EventRunEnd, Outcome: outcome})
	}
	return evs
}

// rowsUnder counts the rows of the first table under the heading h2.
func rowsUnder(t *testing.T, page, h2 string) int {
	t.Helper()
	m := regexp.MustCompile(`(?s)<h2>` + regexp.QuoteMeta(h2) + `</h2>(.*?)<h2>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no section %q", h2)
	}
	table := regexp.MustCompile(`(?s)<table>(.*?)</table>`).FindStringSubmatch(m[1])
	if table == nil {
		return 0
	}
	return strings.Count(table[1], "<tr>") - 1
}

func renderEvents(t *testing.T, evs []Event) (*Metrics, string, map[string]map[string]any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.csv")
	if len(evs) > 0 {
		if err := AppendHistory(path, evs...); err != nil {
			t.Fatal(err)
		}
	}
	m, err := computeFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, m, RenderOptions{Echarts: []byte("/* echarts */")}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	var options map[string]map[string]any
	if err := json.Unmarshal([]byte(optionsBlock.FindStringSubmatch(page)[1]), &options); err != nil {
		t.Fatal(err)
	}
	return m, page, options
}

// TestPageAtScale renders one run, then 1,000 runs over a year: the charts over
// time have time axes and appear from two points on, and no table grows with the
// history.
func TestPageAtScale(t *testing.T) {
	start := time.Date(2025, 11, 3, 9, 0, 0, 0, time.UTC)

	t.Run("one run", func(t *testing.T) {
		m, page, options := renderEvents(t, scaleHistory(1, start, time.Hour))
		if m.Runs != 1 {
			t.Fatalf("Runs = %d", m.Runs)
		}
		for _, id := range []string{chartWeeks, chartWeekCost, chartRuns, chartGateDays} {
			if options[id] != nil {
				t.Errorf("chart %s drawn for one run: one point says nothing", id)
			}
		}
		for _, want := range []string{"Trends show once the history spans two weeks", "1 week, newest first", "The one run."} {
			if !strings.Contains(page, want) {
				t.Errorf("page does not say %q", want)
			}
		}
		if n := rowsUnder(t, page, "The last runs"); n != 1 {
			t.Errorf("runs table has %d rows; want 1", n)
		}
	})

	t.Run("1000 runs over a year", func(t *testing.T) {
		m, page, options := renderEvents(t, scaleHistory(1000, start, 365*24*time.Hour))
		if m.Runs != 1000 || len(m.Weeks) != 53 {
			t.Fatalf("Runs = %d, Weeks = %d; want 1000 over 53", m.Runs, len(m.Weeks))
		}
		for _, id := range []string{chartWeeks, chartWeekCost, chartRuns, chartGateDays} {
			o := options[id]
			if o == nil {
				t.Errorf("chart %s not drawn", id)
				continue
			}
			if x, _ := o["xAxis"].(map[string]any); x["type"] != "time" {
				t.Errorf("chart %s: x axis %v; want a time axis", id, o["xAxis"])
			}
		}
		// Over 60 days, the gate chart is by week: 53 points, not 365.
		if n := len(options[chartGateDays]["series"].([]any)[0].(map[string]any)["data"].([]any)); n != 53 {
			t.Errorf("gate chart has %d points; want 53 weeks", n)
		}
		if n := rowsUnder(t, page, "Trends by week"); n != tableWeeks {
			t.Errorf("weeks table has %d rows; want %d", n, tableWeeks)
		}
		if n := rowsUnder(t, page, "The last runs"); n != tableRuns {
			t.Errorf("runs table has %d rows; want %d", n, tableRuns)
		}
		if strings.Contains(page, "Day (UTC)") {
			t.Error("the page still has a table by day")
		}
		for _, want := range []string{"The 12 most recent of 53 weeks", "The 20 most recent of 1000 runs", "Token efficiency", "Cost per run", "False-positive rate"} {
			if !strings.Contains(page, want) {
				t.Errorf("page does not say %q", want)
			}
		}
	})
}
