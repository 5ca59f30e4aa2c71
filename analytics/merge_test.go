package analytics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sources makes a Source of each text, named h0, h1, …
func sources(texts ...string) []Source {
	var srcs []Source
	for i, text := range texts {
		srcs = append(srcs, Source{Name: "h" + itoa(i), R: strings.NewReader(text)})
	}
	return srcs
}

// metricsJSON is m as JSON, without what only ComputeAll says (what each
// history gave).
func metricsJSON(t *testing.T, m *Metrics) string {
	t.Helper()
	c := *m
	c.Sources, c.Duplicates = nil, 0
	for i := range c.MalformedRows {
		c.MalformedRows[i].File = ""
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// One history split among machines, each run on one of them, and copies
// of rows besides (the history all started from, committed; rows a copied
// clone holds twice): read as one, the machines' histories give the
// numbers of the history they were split from, every row once, whichever
// machine holds it. Order matters in it: an issue is filed in one run,
// failed again in others, resolved, failed again.
func TestComputeAllIsTheWholeHistory(t *testing.T) {
	whole := filepath.Join(t.TempDir(), "history.csv")
	writeBenchHistory(t, whole, 20_000)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	rows := lines[1:]
	const machines = 3
	rng := rand.New(rand.NewPCG(3, 4))
	hosts := make([]strings.Builder, machines)
	for i := range hosts {
		hosts[i].WriteString(lines[0])
	}
	copies := int64(0)
	machine := 0
	for i, row := range rows {
		if strings.Contains(row, ","+EventRunStart+",") {
			machine = rng.IntN(machines)
		}
		switch {
		case i < len(rows)/5:
			// The history every machine started from.
			for h := range hosts {
				hosts[h].WriteString(row)
			}
			copies += machines - 1
		case rng.IntN(50) == 0:
			// A row a copied clone holds as well.
			hosts[machine].WriteString(row)
			hosts[(machine+1)%machines].WriteString(row)
			copies++
		default:
			hosts[machine].WriteString(row)
		}
	}
	want, err := Compute(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ComputeAll(sources(hosts[0].String(), hosts[1].String(), hosts[2].String()))
	if err != nil {
		t.Fatal(err)
	}
	if w, g := metricsJSON(t, want), metricsJSON(t, got); w != g {
		t.Errorf("the machines' histories read as one differ from the whole history:\n%s", lineDiff(w, g))
	}
	if got.Rows != int64(len(rows)) || got.Duplicates != copies {
		t.Errorf("%d rows, %d duplicates; want %d rows, %d duplicates", got.Rows, got.Duplicates, len(rows), copies)
	}
	var sum int64
	for i, s := range got.Sources {
		sum += s.Rows
		if s.Name != "h"+itoa(i) || s.Rows == 0 || s.LeftOut != "" {
			t.Errorf("source %d: %+v", i, s)
		}
	}
	if sum != got.Rows || got.Sources[0].Duplicates != 0 {
		t.Errorf("the sources' rows add up to %d of %d; the first's duplicates: %d", sum, got.Rows, got.Sources[0].Duplicates)
	}
}

// Read host after host instead of in time order, an issue resolved on one
// machine and failed again on another after it would read as resolved.
func TestComputeAllInTimeOrder(t *testing.T) {
	a := headerLine +
		"2026-01-02T10:00:00.000Z,r1,1,issue_add,ISSUE-20260102-001,unit,,fail,1,,sig1,TestX\n" +
		"2026-01-02T10:05:00.000Z,r1,2,resolve,ISSUE-20260102-001,,1,,,,,\n"
	b := headerLine +
		"2026-01-02T10:10:00.000Z,r2,1,record,ISSUE-20260102-001,unit,1,fail,1,,sig1,repeat=1\n"
	for _, order := range [][]string{{a, b}, {b, a}} {
		m, err := ComputeAll(sources(order...))
		if err != nil {
			t.Fatal(err)
		}
		if m.FixedAutonomously != 0 || m.IssuesFiled != 1 || m.Rows != 3 {
			t.Errorf("fixed %d of %d issues, %d rows; want the issue open again, 3 rows", m.FixedAutonomously, m.IssuesFiled, m.Rows)
		}
	}
}

// Equal rows in a row in one history are each an event: counted as many
// times as the history that holds the most of them holds them.
func TestComputeAllEqualRows(t *testing.T) {
	row := "2026-01-02T10:00:00.000Z,r1,1,gate,,unit,,pass,0,5,,\n"
	other := "2026-01-02T10:00:01.000Z,r1,1,gate,,lint,,pass,0,5,,\n"
	for _, tc := range []struct {
		texts      []string
		rows, dups int64
	}{
		{[]string{row + row, row}, 2, 1},
		{[]string{row, row + row}, 2, 1},
		{[]string{row + row, row + row + other}, 3, 2},
		{[]string{row, row, row}, 1, 2},
		{[]string{row + other + row}, 3, 0},
	} {
		var texts []string
		for _, s := range tc.texts {
			texts = append(texts, headerLine+s)
		}
		m, err := ComputeAll(sources(texts...))
		if err != nil {
			t.Fatal(err)
		}
		if m.Rows != tc.rows || m.Duplicates != tc.dups {
			t.Errorf("%q: %d rows, %d duplicates; want %d, %d", tc.texts, m.Rows, m.Duplicates, tc.rows, tc.dups)
		}
	}
}

// Another machine's history that cannot be read is left out, and the page
// says why; this machine's is an error. A malformed row is named with its
// history.
func TestComputeAllUnreadable(t *testing.T) {
	good := headerLine + "2026-01-02T10:00:00.000Z,r1,1,gate,,unit,,pass,0,5,,\n"
	bad := "not,a,history\n"
	torn := headerLine + "2026-01-02T10:00:01.000Z,r2,1,gate,,unit\n"
	srcs := sources(good, bad, torn)
	srcs[1].Optional = true
	m, err := ComputeAll(srcs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Rows != 1 || !strings.Contains(m.Sources[1].LeftOut, `not a history header: no "time" column`) {
		t.Errorf("%d rows; h1 left out for %q", m.Rows, m.Sources[1].LeftOut)
	}
	if len(m.MalformedRows) != 1 || m.MalformedRows[0].File != "h2" || m.MalformedRows[0].Line != 2 {
		t.Errorf("malformed rows: %+v, want h2's line 2", m.MalformedRows)
	}
	var page bytes.Buffer
	if err := Render(&page, m, RenderOptions{Source: "history.csv + 2", Echarts: []byte{}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>h2:2: 6 fields, want 12</code>", "The history <code>h1</code> could not be read, and was left out",
		"<tr><td><code>h0</code></td><td class=\"n\">1</td><td class=\"n\">0</td></tr>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	srcs = sources(good, bad)
	if _, err := ComputeAll(srcs); err == nil || !strings.HasPrefix(err.Error(), `h1: line 1: not a history header`) {
		t.Errorf("a history that must be read, unreadable: %v", err)
	}
}

// One history read by ComputeAll is read as Compute reads it.
func TestComputeAllOne(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "basic.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Compute(bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ComputeAll(sources(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if w, g := metricsJSON(t, want), metricsJSON(t, got); w != g {
		t.Errorf("one history through ComputeAll:\n%s", lineDiff(w, g))
	}
}
