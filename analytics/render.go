package analytics

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

// RenderOptions adjust the page Render writes.
type RenderOptions struct {
	// Title is the page's title; "orchestrate analytics" when empty.
	Title string
	// Source names the history the page was made from, shown under the title and
	// before the line numbers of malformed rows.
	Source string
	// Generated is shown under the title; the zero time leaves it out.
	Generated time.Time
	// Echarts is the echarts.min.js source to inline into the page. Nil means the copy
	// built into the binary (see assets/README.md). When it is empty, or nil with no
	// copy built in, the page loads echarts from the go-echarts CDN, and offline it
	// shows its tables only.
	Echarts []byte
}

//go:embed page.html
var pageHTML string

// pageTemplate is the page's template, parsed when a page is first made,
// not when the program starts: most commands make none.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"pct":      pct,
		"duration": formatMS,
		"date":     formatTime,
		"label":    outcomeLabel,
		"usd":      formatUSD,
		"rate":     ratio,
		"count":    formatCount,
		"counted": func(n any, word string) string {
			switch n := n.(type) {
			case int:
				return count(n, word)
			case int64:
				return count(n, word)
			}
			return fmt.Sprint(n, " ", word)
		},
		"perRun": func(total int64, runs int) string {
			if runs == 0 {
				return "—"
			}
			return formatMS(total / int64(runs))
		},
		"short": func(s string) string { return truncate(s, 12) },
		"args": func(title, name, unit string, counts []Count) countsTable {
			return countsTable{title, name, unit, counts}
		},
	}).Parse(pageHTML))
})

// countsTable is the data of the page's "counts" template.
type countsTable struct {
	Title, Name, Unit string
	Counts            []Count
}

// Chart container IDs: constants, never data, so they are safe in the page's script.
const (
	chartAttempts = "chart-attempts"
	chartGateDays = "chart-gate-outcomes"
	chartRuns     = "chart-runs"
	chartOutcomes = "chart-outcomes"
	chartWeeks    = "chart-weeks"
	chartWeekCost = "chart-week-cost"
)

// How much of the history the tables show: they do not grow with it.
const (
	tableWeeks = 12 // the most recent weeks
	tableRuns  = 20 // the most recent runs
	// dailyDays is the longest span the gate chart draws by day; beyond it, by week.
	dailyDays = 60
)

type page struct {
	Title     string
	Source    string
	Generated string
	M         *Metrics
	Summary   string
	Cards     []card
	Charts    map[string]bool // the charts that have data
	Options   template.JS     // {chart ID: echarts option}, HTML-safe JSON
	Inline    template.JS     // echarts.min.js, or empty
	ScriptURL string          // where to load echarts from when not inlined
	RunsDesc  []RunStat       // the tableRuns most recent runs, newest first
	WeeksDesc []WeekStat      // the tableWeeks most recent weeks, newest first
	Usage     bool            // some agent reported its usage
	Overcount bool            // some signature count is an estimate
	GateBy    string          // "day" or "week": how the gate chart groups
}

type card struct {
	Label, Value, Note string
}

// Render writes analytics.html for m to w: headline numbers, four charts and tables of
// the same numbers. A nil m renders a page that says there is no history yet.
//
// Every string from the history is escaped: html/template escapes the tables, and the
// chart options go in as JSON with <, > and & written as \u003c, \u003e and \u0026, in
// a script element of type application/json that the page's own script parses. (The
// go-echarts page templates are not used: they insert options without escaping.)
func Render(w io.Writer, m *Metrics, opt RenderOptions) error {
	p := page{
		Title:  opt.Title,
		Source: opt.Source,
		M:      m,
		Charts: map[string]bool{},
	}
	if p.Title == "" {
		p.Title = "orchestrate analytics"
	}
	if !opt.Generated.IsZero() {
		p.Generated = formatTime(opt.Generated)
	}
	js := opt.Echarts
	if js == nil {
		js = embeddedEcharts()
	}
	if len(js) > 0 {
		if err := inlineable(js); err != nil {
			return fmt.Errorf("rendering analytics: %w", err)
		}
		p.Inline = template.JS(js)
	} else {
		p.ScriptURL = echartsURL()
	}

	options := map[string]json.RawMessage{}
	if m != nil {
		p.Summary = summary(m)
		p.Cards = cards(m)
		for i := len(m.RecentRuns) - 1; i >= 0 && len(p.RunsDesc) < tableRuns; i-- {
			p.RunsDesc = append(p.RunsDesc, m.RecentRuns[i])
		}
		for i := len(m.Weeks) - 1; i >= 0 && len(p.WeeksDesc) < tableWeeks; i-- {
			p.WeeksDesc = append(p.WeeksDesc, m.Weeks[i])
		}
		p.Usage = m.UsageReports > 0
		p.GateBy = gateGrouping(m)
		for _, s := range m.TopSignatures {
			p.Overcount = p.Overcount || s.Overcount > 0
		}
		for id, chart := range map[string]func(*Metrics) any{
			chartAttempts: attemptsChart,
			chartGateDays: gateDaysChart,
			chartRuns:     runsChart,
			chartOutcomes: outcomesChart,
			chartWeeks:    weeksChart,
			chartWeekCost: weekCostChart,
		} {
			option := chart(m)
			if option == nil {
				continue
			}
			b, err := json.Marshal(option)
			if err != nil {
				return fmt.Errorf("rendering analytics: chart %s: %w", id, err)
			}
			options[id] = b
			p.Charts[id] = true
		}
	}
	// json.Marshal writes <, > and & as \u003c, \u003e and \u0026, so no string from
	// the history can end the script element it is in.
	b, err := json.Marshal(options)
	if err != nil {
		return fmt.Errorf("rendering analytics: %w", err)
	}
	p.Options = template.JS(b)

	if err := pageTemplate().Execute(w, p); err != nil {
		return fmt.Errorf("rendering analytics: %w", err)
	}
	return nil
}

var scriptBreaker = lazyre.New(`(?i)</script|<!--`)

// inlineable reports an error when js cannot go verbatim inside a script element.
func inlineable(js []byte) error {
	if loc := scriptBreaker.Regexp().FindIndex(js); loc != nil {
		return fmt.Errorf("echarts.min.js cannot be inlined: it contains %q at byte %d", js[loc[0]:loc[1]], loc[0])
	}
	return nil
}

// count is n and the word, in the plural unless n is 1: "1 issue", "2 issues",
// "3 agent launches".
func count[N int | int64](n N, word string) string {
	if n == 1 {
		return "1 " + word
	}
	switch {
	case strings.HasSuffix(word, "ch") || strings.HasSuffix(word, "s"):
		word += "es"
	case len(word) > 1 && word[len(word)-1] == 'y' && !strings.ContainsRune("aeiou", rune(word[len(word)-2])):
		word = word[:len(word)-1] + "ies"
	default:
		word += "s"
	}
	return strconv.FormatInt(int64(n), 10) + " " + word
}

func summary(m *Metrics) string {
	if m.IssuesFiled == 0 {
		return fmt.Sprintf("No issue filed yet: %s, %s, %d failed.", count(m.Runs, "run"), count(m.GateRuns, "gate run"), m.GateFailures)
	}
	var parts []string
	for _, c := range m.IssueOutcomes {
		if c.N > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, outcomeLabel(c.Name)))
		}
	}
	return fmt.Sprintf("Of %s filed: %s.", count(m.IssuesFiled, "issue"), strings.Join(parts, ", "))
}

func cards(m *Metrics) []card {
	var halts []string
	for _, c := range m.HaltReasons {
		halts = append(halts, fmt.Sprintf("%s %d", c.Name, c.N))
	}
	haltNote := "none halted on a repeated failure"
	if len(halts) > 0 {
		haltNote = "by reason: " + strings.Join(halts, ", ")
	}
	dash := func(ok bool, s string) string {
		if !ok {
			return "—"
		}
		return s
	}
	usage := func(s string) string {
		if m.UsageReports == 0 {
			return "—"
		}
		return s
	}
	usageNote := func(s string) string {
		if m.UsageReports == 0 {
			return "no usage recorded: the agent reported no tokens or cost"
		}
		return s
	}
	out := []card{{
		Label: "Autonomous fix rate",
		Value: dash(m.IssuesFiled > 0, pct(m.AutonomousFixRate)),
		Note:  fmt.Sprintf("%d of %s fixed with no person's help", m.FixedAutonomously, count(m.IssuesFiled, "issue")),
	}, {
		Label: "Time to success",
		Value: dash(m.TimeToSuccess.Count > 0, formatMS(m.TimeToSuccess.MedianMS)),
		Note: fmt.Sprintf("median from the task's start to every gate passing; mean %s; %d of %s got there",
			formatMS(m.TimeToSuccess.MeanMS), m.SucceededRuns, count(m.Runs, "run")),
	}, {
		Label: "Attempts to pass",
		Value: dash(m.FixedByLoop > 0, fmt.Sprintf("%.1f", m.MeanAttemptsToPass)),
		Note:  fmt.Sprintf("mean over %s the loop fixed; 1 means no retry", count(m.FixedByLoop, "issue")),
	}, {
		Label: "False-positive rate",
		Value: dash(m.IssuesFiled > 0, pct(m.FalsePositiveRate)),
		Note:  fmt.Sprintf("%d of %s were not the code's: skipped by a person, or the gate's command could not run", m.FalsePositives, count(m.IssuesFiled, "issue")),
	}, {
		Label: "Token efficiency",
		Value: usage(dash(m.SucceededRuns > 0, formatCount(int64(m.TokensPerSuccess)))),
		Note:  usageNote(fmt.Sprintf("tokens per run whose gates all passed; %s in all, %s per success", formatCount(m.Tokens), formatUSD(m.CostPerSuccess))),
	}, {
		Label: "Agent time per run",
		Value: dash(m.Runs > 0, formatMS(m.AgentMSPerRun)),
		Note:  fmt.Sprintf("mean; %s over %s", formatMS(m.AgentMS), count(m.AgentLaunches, "agent launch")),
	}, {
		Label: "Cost per run",
		Value: usage(dash(m.Runs > 0, formatUSD(m.CostPerRun))),
		Note:  usageNote(fmt.Sprintf("mean; %s in all, as the agents reported it or agent.prices priced their tokens", formatUSD(m.CostUSD))),
	}, {
		Label: "Time to fix",
		Value: dash(m.TimeToFix.Count > 0, formatMS(m.TimeToFix.MedianMS)),
		Note:  fmt.Sprintf("median from an issue filed to fixed; mean %s over %s", formatMS(m.TimeToFix.MeanMS), count(m.TimeToFix.Count, "issue")),
	}, {
		Label: "Halted issues",
		Value: fmt.Sprint(m.Halted),
		Note:  haltNote,
	}, {
		Label: "Cap hits",
		Value: fmt.Sprint(m.CapHits),
		Note:  fmt.Sprintf("of %s reached the global retry cap", count(m.Runs, "run")),
	}, {
		Label: "Gate failure rate",
		Value: dash(m.GateRuns > 0, pct(m.GateFailureRate)),
		Note:  fmt.Sprintf("%d of %s failed", m.GateFailures, count(m.GateRuns, "gate run")),
	}, {
		Label: "Retries per run",
		Value: dash(m.Runs > 0, fmt.Sprintf("%.1f", m.RetriesPerRun)),
		Note:  fmt.Sprintf("%s in all, at most %d in one run", count(m.RetryLoops, "auto-retry loop"), m.MaxRetriesPerRun),
	}}
	return append(out, judgedCards(m)...)
}

// judgedCards are the cards of the attempts judged by their issue's own
// tests: none when no attempt was.
func judgedCards(m *Metrics) []card {
	if m.JudgedAttempts == 0 {
		return nil
	}
	return []card{{
		Label: "Tests fixed",
		Value: fmt.Sprint(m.TestsFixed),
		Note: fmt.Sprintf("failing where the work started, passing after an attempt that passed; %s caught over %s judged by their issue's tests",
			count(m.Regressions, "regression"), count(m.JudgedAttempts, "attempt")),
	}}
}

// Colours of outcomes, the same in every chart.
var outcomeColors = map[string]string{
	OutcomePass:            "#3ba272",
	OutcomeFail:            "#ee6666",
	OutcomeTimeout:         "#fc8452",
	OutcomeError:           "#9a60b4",
	OutcomeSkipped:         "#b0b0b0", // and IssueSkipped, the same word
	IssueFixedAutonomously: "#3ba272",
	IssueFixedAfterRetry:   "#91cc75",
	IssueResolvedManually:  "#73c0de",
	IssueHalted:            "#ee6666",
	IssueExhausted:         "#fc8452",
	IssueOpen:              "#5470c6",
}

var outcomeLabels = map[string]string{
	IssueFixedAutonomously: "fixed by the loop alone",
	IssueFixedAfterRetry:   "fixed after a person's retry",
	IssueResolvedManually:  "resolved by a person",
	IssueHalted:            "halted",
	IssueExhausted:         "out of retries",
	IssueSkipped:           "skipped",
	IssueOpen:              "open",
}

func outcomeLabel(name string) string {
	if l, ok := outcomeLabels[name]; ok {
		return l
	}
	return name
}

// The charts are built with go-echarts' typed options; only their option JSON is used.

func barChart(categories []string) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
		charts.WithGridOpts(opts.Grid{Left: "3%", Right: "3%", Bottom: "3%", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Rotate: 30}}),
		charts.WithYAxisOpts(opts.YAxis{MinInterval: 1}),
	)
	bar.SetXAxis(categories)
	return bar
}

func barSeries(bar *charts.Bar, name, color, stack string, values []int64) {
	data := make([]opts.BarData, len(values))
	for i, v := range values {
		data[i] = opts.BarData{Value: v}
	}
	bar.AddSeries(name, data,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		charts.WithBarChartOpts(opts.BarChart{Stack: stack}))
}

func option(c interface {
	Validate()
	JSON() map[string]any
}) any {
	c.Validate()
	return c.JSON()
}

func attemptsChart(m *Metrics) any {
	if len(m.AttemptsPerIssue) == 0 {
		return nil
	}
	ids := make([]string, len(m.AttemptsPerIssue))
	retries := make([]int64, len(ids))
	failures := make([]int64, len(ids))
	for i, s := range m.AttemptsPerIssue {
		ids[i], retries[i], failures[i] = s.ID, int64(s.Retries), int64(s.Failures)
	}
	bar := barChart(ids)
	barSeries(bar, "retries", "#5470c6", "", retries)
	barSeries(bar, "failures recorded", "#ee6666", "", failures)
	return option(bar)
}

// The charts over time have a time axis: echarts spaces and labels its dates
// itself, so 1 run or 1,000 over a year stay readable. A chart over time needs
// two points at least: one bar says nothing. Their options are written as plain
// maps: a time axis takes [time, value] pairs, and two value axes.

// gateGrouping says how the gate chart groups its runs: by day while the days
// kept cover the history, by week beyond.
func gateGrouping(m *Metrics) string {
	if m.Last.Sub(m.First) <= dailyDays*24*time.Hour {
		return "day"
	}
	return "week"
}

type point = [2]any

func at(t time.Time) int64 { return t.UnixMilli() }

func timeChart(series []map[string]any, yAxes ...map[string]any) map[string]any {
	for _, y := range yAxes {
		y["type"] = "value"
		y["splitLine"] = map[string]any{"show": len(yAxes) == 1 || y["position"] != "right"}
	}
	return map[string]any{
		"animation": false,
		"tooltip":   map[string]any{"trigger": "axis"},
		"legend":    map[string]any{"show": true},
		"grid":      map[string]any{"left": "3%", "right": "3%", "bottom": "3%", "containLabel": true},
		"xAxis":     map[string]any{"type": "time", "axisLabel": map[string]any{"hideOverlap": true}},
		"yAxis":     yAxes,
		"series":    series,
	}
}

func bars(name, color, stack string, data []point) map[string]any {
	s := map[string]any{"type": "bar", "name": name, "data": data, "itemStyle": map[string]any{"color": color}, "barMaxWidth": 40}
	if stack != "" {
		s["stack"] = stack
	}
	return s
}

func line(name, color string, axis int, data []point) map[string]any {
	return map[string]any{"type": "line", "name": name, "data": data, "yAxisIndex": axis,
		"itemStyle": map[string]any{"color": color}, "lineStyle": map[string]any{"color": color}, "symbolSize": 6}
}

func gateDaysChart(m *Metrics) any {
	names := []string{OutcomePass, OutcomeFail, OutcomeTimeout, OutcomeError, OutcomeSkipped}
	series := map[string][]point{}
	if gateGrouping(m) == "day" {
		if len(m.GateOutcomesByDay) < 2 {
			return nil
		}
		for _, d := range m.GateOutcomesByDay {
			day, _ := time.Parse(time.DateOnly, d.Day)
			for i, n := range []int64{d.Pass, d.Fail, d.Timeout, d.Error, d.Skipped} {
				series[names[i]] = append(series[names[i]], point{at(day), n})
			}
		}
	} else {
		names = []string{OutcomePass, "failed"}
		n := 0
		for _, w := range m.Weeks {
			if w.GateRuns > 0 {
				n++
			}
			series[OutcomePass] = append(series[OutcomePass], point{at(w.Start), w.GateRuns - w.GateFailures})
			series["failed"] = append(series["failed"], point{at(w.Start), w.GateFailures})
		}
		if n < 2 {
			return nil
		}
	}
	var list []map[string]any
	for _, n := range names {
		color := outcomeColors[n]
		if n == "failed" {
			color = outcomeColors[OutcomeFail]
		}
		list = append(list, bars(n, color, "outcome", series[n]))
	}
	return timeChart(list, map[string]any{"name": "gate runs", "minInterval": 1})
}

func weeksChart(m *Metrics) any {
	if len(m.Weeks) < 2 {
		return nil
	}
	var ok, other, rate []point
	for _, w := range m.Weeks {
		ok = append(ok, point{at(w.Start), w.Succeeded})
		other = append(other, point{at(w.Start), w.Runs - w.Succeeded})
		if w.GateRuns > 0 {
			rate = append(rate, point{at(w.Start), roundTo(100*ratio(w.GateFailures, w.GateRuns), 1)})
		}
	}
	return timeChart([]map[string]any{
		bars("runs that succeeded", outcomeColors[OutcomePass], "runs", ok),
		bars("other runs", "#b0b0b0", "runs", other),
		line("gate failure rate (%)", outcomeColors[OutcomeFail], 1, rate),
	}, map[string]any{"name": "runs", "minInterval": 1}, map[string]any{"name": "%", "position": "right", "min": 0, "max": 100})
}

func weekCostChart(m *Metrics) any {
	if len(m.Weeks) < 2 || (m.AgentMS == 0 && m.CostUSD == 0) {
		return nil
	}
	var agent, cost []point
	for _, w := range m.Weeks {
		if w.Runs == 0 {
			continue
		}
		agent = append(agent, point{at(w.Start), roundTo(float64(w.AgentMS)/float64(w.Runs)/60000, 2)})
		cost = append(cost, point{at(w.Start), roundTo(w.CostUSD/float64(w.Runs), 4)})
	}
	series := []map[string]any{bars("agent minutes per run", "#5470c6", "", agent)}
	axes := []map[string]any{{"name": "minutes"}}
	if m.CostUSD > 0 {
		series = append(series, line("cost per run (USD)", "#fc8452", 1, cost))
		axes = append(axes, map[string]any{"name": "USD", "position": "right"})
	}
	return timeChart(series, axes...)
}

func runsChart(m *Metrics) any {
	if len(m.RecentRuns) < 2 {
		return nil
	}
	var agent, success, fails []point
	for _, r := range m.RecentRuns {
		agent = append(agent, point{at(r.Start), roundTo(float64(r.AgentMS)/60000, 2)})
		if r.GateFailures > 0 {
			fails = append(fails, point{at(r.Start), r.GateFailures})
		}
		if r.Succeeded {
			success = append(success, point{at(r.Start), roundTo(float64(r.TimeToSuccessMS)/60000, 2)})
		}
	}
	succ := line("time to success (min)", outcomeColors[OutcomePass], 0, success)
	succ["type"] = "scatter"
	failures := line("gate failures", outcomeColors[OutcomeFail], 1, fails)
	failures["type"] = "scatter"
	return timeChart([]map[string]any{
		bars("agent minutes", "#5470c6", "", agent),
		succ,
		failures,
	}, map[string]any{"name": "minutes"}, map[string]any{"name": "failures", "position": "right", "minInterval": 1})
}

func roundTo(f float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(f*p) / p
}

func outcomesChart(m *Metrics) any {
	var data []opts.PieData
	for _, c := range m.IssueOutcomes {
		if c.N == 0 {
			continue
		}
		data = append(data, opts.PieData{
			Name:      outcomeLabel(c.Name),
			Value:     c.N,
			ItemStyle: &opts.ItemStyle{Color: outcomeColors[c.Name]},
		})
	}
	if len(data) == 0 {
		return nil
	}
	pie := charts.NewPie()
	pie.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "0"}),
	)
	pie.AddSeries("issues", data,
		charts.WithPieChartOpts(opts.PieChart{Radius: []string{"35%", "65%"}}),
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Formatter: "{b}: {c}"}))
	return option(pie)
}

// formatUSD writes dollars with cents, or more digits under a dollar.
func formatUSD(f float64) string {
	switch {
	case f == 0:
		return "$0"
	case f < 1:
		return fmt.Sprintf("$%.3f", f)
	default:
		return fmt.Sprintf("$%.2f", f)
	}
}

// formatCount writes a count with k and M for thousands and millions.
func formatCount(n int64) string {
	switch {
	case n < 10_000:
		return fmt.Sprint(n)
	case n < 999_500:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
}

func pct(f float64) string {
	return fmt.Sprintf("%.0f%%", 100*f)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// formatMS writes a duration in milliseconds in at most two units.
func formatMS(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
	}
}
