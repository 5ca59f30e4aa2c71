package analytics

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
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

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct":      pct,
	"duration": formatMS,
	"date":     formatTime,
	"label":    outcomeLabel,
	"short":    func(s string) string { return truncate(s, 12) },
	"args": func(title, name, unit string, counts []Count) countsTable {
		return countsTable{title, name, unit, counts}
	},
}).Parse(pageHTML))

// countsTable is the data of the page's "counts" template.
type countsTable struct {
	Title, Name, Unit string
	Counts            []Count
}

// Chart container IDs: constants, never data, so they are safe in the page's script.
const (
	chartAttempts = "chart-attempts"
	chartGateDays = "chart-gate-outcomes"
	chartRuns     = "chart-retries-per-run"
	chartOutcomes = "chart-outcomes"
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
	RunsDesc  []RunStat       // RecentRuns, newest first
	Overcount bool            // some signature count is an estimate
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
		for i := len(m.RecentRuns) - 1; i >= 0; i-- {
			p.RunsDesc = append(p.RunsDesc, m.RecentRuns[i])
		}
		for _, s := range m.TopSignatures {
			p.Overcount = p.Overcount || s.Overcount > 0
		}
		for id, chart := range map[string]func(*Metrics) any{
			chartAttempts: attemptsChart,
			chartGateDays: gateDaysChart,
			chartRuns:     runsChart,
			chartOutcomes: outcomesChart,
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

	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("rendering analytics: %w", err)
	}
	return nil
}

var scriptBreaker = regexp.MustCompile(`(?i)</script|<!--`)

// inlineable reports an error when js cannot go verbatim inside a script element.
func inlineable(js []byte) error {
	if loc := scriptBreaker.FindIndex(js); loc != nil {
		return fmt.Errorf("echarts.min.js cannot be inlined: it contains %q at byte %d", js[loc[0]:loc[1]], loc[0])
	}
	return nil
}

func summary(m *Metrics) string {
	if m.IssuesFiled == 0 {
		return fmt.Sprintf("No issue filed yet: %d runs, %d gate runs, %d failed.", m.Runs, m.GateRuns, m.GateFailures)
	}
	var parts []string
	for _, c := range m.IssueOutcomes {
		if c.N > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, outcomeLabel(c.Name)))
		}
	}
	return fmt.Sprintf("Of %d issues filed: %s.", m.IssuesFiled, strings.Join(parts, ", "))
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
	return []card{{
		Label: "Autonomous fix rate",
		Value: dash(m.IssuesFiled > 0, pct(m.AutonomousFixRate)),
		Note:  fmt.Sprintf("%d of %d issues fixed with no person's help", m.FixedAutonomously, m.IssuesFiled),
	}, {
		Label: "Attempts to pass",
		Value: dash(m.FixedByLoop > 0, fmt.Sprintf("%.1f", m.MeanAttemptsToPass)),
		Note:  fmt.Sprintf("mean over %d issues the loop fixed; 1 means no retry", m.FixedByLoop),
	}, {
		Label: "Time to success",
		Value: dash(m.TimeToSuccess.Count > 0, formatMS(m.TimeToSuccess.MedianMS)),
		Note:  fmt.Sprintf("median from filed to fixed; mean %s over %d issues", formatMS(m.TimeToSuccess.MeanMS), m.TimeToSuccess.Count),
	}, {
		Label: "Halted issues",
		Value: fmt.Sprint(m.Halted),
		Note:  haltNote,
	}, {
		Label: "Cap hits",
		Value: fmt.Sprint(m.CapHits),
		Note:  fmt.Sprintf("of %d runs reached the global retry cap", m.Runs),
	}, {
		Label: "Gate failure rate",
		Value: dash(m.GateRuns > 0, pct(m.GateFailureRate)),
		Note:  fmt.Sprintf("%d of %d gate runs failed", m.GateFailures, m.GateRuns),
	}, {
		Label: "Retries per run",
		Value: dash(m.Runs > 0, fmt.Sprintf("%.1f", m.RetriesPerRun)),
		Note:  fmt.Sprintf("%d auto-retry loops in all, at most %d in one run", m.RetryLoops, m.MaxRetriesPerRun),
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

func barChart(categories []string, zoom bool) *charts.Bar {
	bar := charts.NewBar()
	global := []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true)}),
		charts.WithGridOpts(opts.Grid{Left: "3%", Right: "3%", Bottom: "3%", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Rotate: 30}}),
		charts.WithYAxisOpts(opts.YAxis{MinInterval: 1}),
	}
	if zoom {
		global = append(global, charts.WithDataZoomOpts(opts.DataZoom{Type: "slider", Start: 0, End: 100}))
	}
	bar.SetGlobalOptions(global...)
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
	bar := barChart(ids, false)
	barSeries(bar, "retries", "#5470c6", "", retries)
	barSeries(bar, "failures recorded", "#ee6666", "", failures)
	return option(bar)
}

func gateDaysChart(m *Metrics) any {
	if len(m.GateOutcomesByDay) == 0 {
		return nil
	}
	days := make([]string, len(m.GateOutcomesByDay))
	series := map[string][]int64{}
	names := []string{OutcomePass, OutcomeFail, OutcomeTimeout, OutcomeError, OutcomeSkipped}
	for _, n := range names {
		series[n] = make([]int64, len(days))
	}
	for i, d := range m.GateOutcomesByDay {
		days[i] = d.Day
		series[OutcomePass][i] = d.Pass
		series[OutcomeFail][i] = d.Fail
		series[OutcomeTimeout][i] = d.Timeout
		series[OutcomeError][i] = d.Error
		series[OutcomeSkipped][i] = d.Skipped
	}
	bar := barChart(days, len(days) > 31)
	for _, n := range names {
		barSeries(bar, n, outcomeColors[n], "outcome", series[n])
	}
	return option(bar)
}

func runsChart(m *Metrics) any {
	if len(m.RecentRuns) == 0 {
		return nil
	}
	ids := make([]string, len(m.RecentRuns))
	loops := make([]int64, len(ids))
	issues := make([]int64, len(ids))
	for i, r := range m.RecentRuns {
		ids[i], loops[i], issues[i] = r.ID, int64(r.RetryLoops), int64(r.IssuesRetried)
	}
	bar := barChart(ids, len(ids) > 30)
	barSeries(bar, "auto-retry loops", "#5470c6", "", loops)
	barSeries(bar, "issues retried", "#fac858", "", issues)
	return option(bar)
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
