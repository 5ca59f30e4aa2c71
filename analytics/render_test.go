package analytics

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Payloads that would run script if any string from the history reached the page
// unescaped: in the markup, in an attribute, or inside the chart options' script.
var payloads = []string{
	`</script><script>document.title="pwned";window.__pwned=1</script>`,
	`<img src=x onerror="window.__pwned=2;document.title='pwned'">`,
	`"><svg onload="window.__pwned=3">`,
	"\u2028'</SCRIPT ><!--<script>window.__pwned=4</script>",
}

// writeHostileHistory writes a history whose every string column holds a payload,
// as a hand edit could (AppendHistory refuses such IDs).
func writeHostileHistory(t testing.TB, path string) {
	t.Helper()
	at := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	var events []Event
	for i, p := range payloads {
		issue := "ISSUE-" + p
		run := "run-" + p
		at := at.Add(time.Duration(i) * 25 * time.Hour) // over two weeks: Sunday the 1st to Wednesday
		events = append(events,
			Event{Time: at, RunID: run, Event: EventRunStart},
			Event{Time: at, RunID: run, Loop: 1, Event: EventAgent, Outcome: "ok", ExitCode: exit(0), DurationMS: 1000},
			Event{Time: at, RunID: run, Loop: 1, Event: EventGate, IssueID: issue, Gate: "gate-" + p, Outcome: OutcomeFail, ExitCode: exit(1), Signature: "sig-" + p},
			Event{Time: at, RunID: run, Loop: 1, Event: EventGate, Gate: "lint", Outcome: OutcomePass, ExitCode: exit(0)},
			Event{Time: at, RunID: run, Loop: 1, Event: EventIssueAdd, IssueID: issue, Gate: "gate-" + p, Signature: "sig-" + p, Detail: "summary " + p},
			Event{Time: at, RunID: run, Loop: 1, Event: EventCheck, Outcome: OutcomeTriggered, Detail: issue},
			Event{Time: at, RunID: run, Loop: 1, Event: EventRetryTriggered, IssueID: issue, Attempt: 1},
			Event{Time: at, RunID: run, Loop: 2, Event: EventRecord, IssueID: issue, Attempt: 1, Outcome: p, Signature: "sig-" + p, Detail: p},
			Event{Time: at, RunID: run, Loop: 2, Event: EventHalt, IssueID: issue, Detail: "halt " + p},
			Event{Time: at, RunID: run, Event: EventRunEnd, Outcome: "end " + p},
			Event{Time: at, Event: "event " + p, Detail: p},
		)
	}
	rows, err := encodeRows(events, at)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append([]byte(headerLine), rows...), 0o644); err != nil {
		t.Fatal(err)
	}
}

var optionsBlock = regexp.MustCompile(`(?s)<script type="application/json" id="chart-options">(.*?)</script>`)

func TestRenderEscapesHistoryStrings(t *testing.T) {
	dir := t.TempDir()
	history := filepath.Join(dir, "history.csv")
	writeHostileHistory(t, history)
	f, err := os.Open(history)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compute(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, m, RenderOptions{Source: "history-" + payloads[0], Echarts: []byte("/* echarts */")}); err != nil {
		t.Fatal(err)
	}
	page := b.String()

	for _, bad := range []string{"<script>document", "<script>window", "<img", "<svg", "onerror=\"window", "<SCRIPT", "<!--"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: a string from the history was not escaped", bad)
		}
	}
	// The page's own scripts only: echarts, the options, the code that draws.
	if n := strings.Count(strings.ToLower(page), "<script"); n != 3 {
		t.Errorf("page has %d script elements; want 3", n)
	}
	// The payloads are shown, as text.
	if !strings.Contains(page, "&lt;/script&gt;&lt;script&gt;document.title=&#34;pwned&#34;") {
		t.Error("page does not show the payload as text")
	}

	block := optionsBlock.FindStringSubmatch(page)
	if block == nil {
		t.Fatal("no chart options in the page")
	}
	if strings.ContainsAny(block[1], "<>") || strings.Contains(block[1], "\u2028") {
		t.Errorf("chart options hold a raw <, > or U+2028: %.200s", block[1])
	}
	var options map[string]any
	if err := json.Unmarshal([]byte(block[1]), &options); err != nil {
		t.Fatalf("chart options are not JSON: %v", err)
	}
	for _, id := range []string{chartAttempts, chartGateDays, chartRuns, chartOutcomes} {
		if options[id] == nil {
			t.Errorf("no options for chart %s", id)
		}
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("no container for chart %s", id)
		}
	}
	// The data did reach the charts, intact once parsed.
	if !strings.Contains(block[1], `ISSUE-\u003c/script\u003e\u003cscript\u003edocument.title`) {
		t.Errorf("the attempts chart does not name the issues: %.300s", block[1])
	}
}

func TestRenderEchartsSource(t *testing.T) {
	m := &Metrics{}
	tests := []struct {
		name          string
		echarts       []byte
		inline, cdn   bool
		wantErrSubstr string
	}{
		{"given", []byte("var echarts = {};"), true, false, ""},
		{"empty: the CDN", []byte{}, false, true, ""},
		{"cannot be inlined", []byte("x = '</script>'"), false, false, "cannot be inlined"},
		{"comment opener", []byte("x = '<!--'"), false, false, "cannot be inlined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Render(&b, m, RenderOptions{Echarts: tt.echarts})
			if tt.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrSubstr) {
					t.Fatalf("Render = %v; want an error with %q", err, tt.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if got := strings.Contains(page, "<script>"+string(tt.echarts)+"</script>"); got != tt.inline {
				t.Errorf("echarts inlined: %v; want %v", got, tt.inline)
			}
			if got := strings.Contains(page, `<script src="`+echartsURL()+`">`); got != tt.cdn {
				t.Errorf("echarts from the CDN: %v; want %v", got, tt.cdn)
			}
		})
	}
}

func TestEmbeddedEcharts(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("assets", "build-echarts.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "\nECHARTS_VERSION="+echartsVersion+"\n") {
		t.Errorf("assets/build-echarts.sh does not build echarts %s (echartsVersion)", echartsVersion)
	}
	// Every build embeds the committed copy: no build step, no network.
	js := embeddedEcharts()
	if len(js) == 0 {
		t.Fatal("echarts.min.js is not embedded")
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(js))
	file, err := os.ReadFile(filepath.Join("assets", "echarts.min.js.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	if want := sum + "  echarts.min.js\n"; string(file) != want {
		t.Errorf("assets/echarts.min.js.sha256 = %q; the embedded file's is %q", file, want)
	}
	if !strings.Contains(string(script), "\nECHARTS_SHA256="+sum+"\n") {
		t.Errorf("assets/build-echarts.sh pins another checksum than the embedded file's %s", sum)
	}
	if !bytes.Contains(js, []byte(`="`+echartsVersion+`"`)) || !bytes.Contains(js[:1024], []byte("Apache ECharts "+echartsVersion+" ")) {
		t.Errorf("embedded echarts.min.js is not version %s", echartsVersion)
	}
	// Its license goes with it: beside it in the repository, and at the top of the
	// script that the page inlines.
	for _, f := range []string{"echarts.LICENSE", "echarts.NOTICE"} {
		if _, err := os.Stat(filepath.Join("assets", f)); err != nil {
			t.Error(err)
		}
	}
	if !bytes.Contains(js[:1024], []byte("Licensed to the Apache Software Foundation")) {
		t.Error("echarts.min.js does not begin with its license header")
	}
	if err := inlineable(js); err != nil {
		t.Error(err)
	}
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "analytics.html")

	// No history yet.
	if err := generate(filepath.Join(dir, "history.csv"), out); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(out)
	if !strings.Contains(string(page), "There is no history yet") {
		t.Errorf("page for a missing history does not say there is none:\n%.500s", page)
	}

	// A real one.
	data, err := os.ReadFile(filepath.Join("testdata", "basic.csv"))
	if err != nil {
		t.Fatal(err)
	}
	history := filepath.Join(dir, "history.csv")
	if err := os.WriteFile(history, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := generate(history, out); err != nil {
		t.Fatal(err)
	}
	page, _ = os.ReadFile(out)
	for _, want := range []string{
		"Is the loop working?",
		"Of 7 issues filed: 1 fixed by the loop alone, 1 fixed after a person&#39;s retry",
		`<div class="value">14%</div>`, // autonomous fix rate
		"ISSUE-20260111-001",
		history + ":75: 3 fields, want 12", // the torn row, where it is
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("page mode: %v, %v; want 0644", fi.Mode(), err)
	}

	// A failure leaves the old page and no temporary file.
	if err := generate(dir, out); err == nil {
		t.Error("generate with a directory for history = nil; want an error")
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, page) {
		t.Error("a failed generate changed the page")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v; want only history.csv and analytics.html", names)
	}
}

func TestFormatMS(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{
		{0, "0ms"}, {950, "950ms"}, {4200, "4.2s"}, {192_000, "3m 12s"},
		{7_500_000, "2h 5m"}, {81_045_000, "22h 30m"}, {3*86_400_000 + 4*3_600_000, "3d 4h"},
	}
	for _, tt := range tests {
		if got := formatMS(tt.ms); got != tt.want {
			t.Errorf("formatMS(%d) = %q; want %q", tt.ms, got, tt.want)
		}
	}
}

// TestPageCounts: one issue is "1 issue", one run "1 run"; two are plural.
func TestPageCounts(t *testing.T) {
	one := &Metrics{IssuesFiled: 1, Runs: 1, GateRuns: 1, FixedByLoop: 1}
	one.TimeToFix.Count = 1
	text := summary(one)
	for _, c := range cards(one) {
		text += "\n" + c.Note
	}
	for _, want := range []string{"Of 1 issue filed", "0 of 1 issue fixed with", "mean over 1 issue the loop", "over 1 issue\n",
		"0 of 1 run got there", "of 1 run reached", "0 of 1 gate run failed"} {
		if !strings.Contains(text+"\n", want) {
			t.Errorf("page text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "1 issues") || strings.Contains(text, "1 runs") {
		t.Errorf("page text has a plural for one:\n%s", text)
	}
	if s := summary(&Metrics{Runs: 2, GateRuns: 3}); s != "No issue filed yet: 2 runs, 3 gate runs, 0 failed." {
		t.Errorf("summary = %q", s)
	}
}
