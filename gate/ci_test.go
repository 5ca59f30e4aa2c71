package gate

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/findings"

	"github.com/orchestrate-dev/orchestrate/config"
)

// Workflow commands escape what would end a message or a property.
func TestAnnotationEscapes(t *testing.T) {
	got := annotation("error", "a,b:c.go", 3, "t: x, y", "100% done\r\nnext")
	want := "::error file=a%2Cb%3Ac.go,line=3,title=t%3A x%2C y::100%25 done%0D%0Anext\n"
	if got != want {
		t.Errorf("annotation = %q; want %q", got, want)
	}
	if got := annotation("warning", "", 7, "t", "m"); got != "::warning title=t::m\n" {
		t.Errorf("annotation without a file = %q", got)
	}
	if got := annotation("notice", "f.go", 0, "t", "m"); got != "::notice file=f.go,title=t::m\n" {
		t.Errorf("annotation without a line = %q", got)
	}
}

// A finding's SARIF level from its priority, each boundary.
func TestSARIFLevel(t *testing.T) {
	for p, want := range map[findings.Priority]string{findings.P0: "error", findings.P1: "error", findings.P2: "warning", findings.P3: "note"} {
		if got := SARIFLevel(p); got != want {
			t.Errorf("SARIFLevel(%s) = %s; want %s", p, got, want)
		}
	}
}

// JUnit XML holds any output as valid XML: control characters and markup
// in a gate's output parse back.
func TestJUnitParses(t *testing.T) {
	g := config.Gate{Name: `tests <"unit">`, Enforcement: config.Blocking}
	ev := &Evaluation{Started: time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC), Results: []Result{
		{Gate: g, Outcome: Fail, ExitCode: 1, Duration: 1500 * time.Millisecond, Output: "\x1b[31mFAIL\x1b[0m a < b && c > d\x00\n"},
		{Gate: config.Gate{Name: "skipped"}, Outcome: Skipped, Err: "skipped: x"},
	}}
	data, err := JUnit(ev, config.Output{})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Suite struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Time    string `xml:"time,attr"`
				Failure struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &v); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, data)
	}
	c := v.Suite.Cases[0]
	if c.Name != g.Name || c.Time != "1.500" || !strings.Contains(c.Failure.Text, "a < b && c > d") {
		t.Errorf("testcase = %+v", c)
	}
}

// The SARIF of an evaluation without review findings is a valid log with
// no results, and JSON throughout.
func TestSARIFEmpty(t *testing.T) {
	data, err := SARIF(&Evaluation{Results: []Result{{Gate: config.Gate{Name: "t"}, Outcome: Fail}}}, "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	runs := v["runs"].([]any)
	if v["version"] != "2.1.0" || len(runs) != 1 || len(runs[0].(map[string]any)["results"].([]any)) != 0 {
		t.Errorf("SARIF = %s", data)
	}
}
