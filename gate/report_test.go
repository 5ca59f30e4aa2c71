package gate

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fakeClock advances a fixed step at every reading, so that durations in
// reports of real runs are the same on every machine.
func fakeClock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	now := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
}

// fixCycle runs a two-attempt fix cycle for real: on the first attempt the
// tests fail, a command is missing, a gate hangs and the advisory lint
// complains; on the second, the repository is "fixed".
func fixCycle(t *testing.T) (*Report, string) {
	t.Helper()
	repo := t.TempDir()
	logs := filepath.Join(repo, "runs", "run-12345")
	fixed := func(ok, bad string) string { return "if [ -f fixed ]; then " + ok + "; else " + bad + "; fi" }
	serial := func(g config.Gate) config.Gate { g.Serial = true; return g }
	// No output before the hang: whether a shell prints within 200ms on a
	// loaded machine is not what this golden is about.
	hung := gateOf("Integration", fixed("echo integration ok", "sleep 30"))
	hung.Timeout = 200 * time.Millisecond
	lint := gateOf("Lint | style", fixed("true", "echo 'main.go:3:2: x declared and not used'; exit 1"))
	lint.Enforcement = config.Advisory
	lint.Hints = []string{"Run golangci-lint run locally"}
	tests := gateOf("Run unit tests", fixed("echo 'ok  \tgithub.com/user/project\t0.089s'",
		"printf 'FAIL: TestUserCreation (0.00s)\\n    Expected user.ID to be set\\n'; exit 1"))
	tests.Hints = []string{"Run go test ./... locally", "Read the first failure first"}
	gates := []config.Gate{
		serial(tests),
		serial(gateOf("Build check", fixed("true", "exit 127"))),
		serial(hung),
		serial(lint),
		serial(func() config.Gate {
			g := gateOf("Coverage", "echo 'coverage: 41%'; exit 1")
			g.Enforcement = config.Informational
			return g
		}()),
	}
	opts := Options{
		RepoRoot:  repo,
		LogDir:    logs,
		KillGrace: 100 * time.Millisecond,
		Now:       fakeClock(time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC), 1500*time.Millisecond),
	}
	r := &Report{ExecutionID: "run-12345", MaxRetries: 3}
	ev, err := Evaluate(context.Background(), gates, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.Attempts = append(r.Attempts, Attempt{Number: 1, Evaluation: ev})
	if err := os.WriteFile(filepath.Join(repo, "fixed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// Fixed, the integration gate must pass however slowly a loaded machine
	// starts its shell: its 200ms were for the hang.
	gates[2].Timeout = time.Minute
	ev, err = Evaluate(context.Background(), gates, opts)
	if err != nil {
		t.Fatal(err)
	}
	r.Attempts = append(r.Attempts, Attempt{Number: 2, Evaluation: ev, AgentFixes: "Fixed user ID initialization in CreateUser function"})
	return r, logs
}

func TestReportGolden(t *testing.T) {
	r, logs := fixCycle(t)
	first := r.Attempts[0].Evaluation
	if first.Passed || !r.Attempts[1].Evaluation.Passed || r.FinalStatus() != "passed" {
		t.Fatalf("attempt 1 passed %v, attempt 2 passed %v", first.Passed, r.Attempts[1].Evaluation.Passed)
	}

	data, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "gate-results.json", string(data))
	golden(t, "summary.md", r.Markdown())

	// The files, written atomically next to the logs.
	if err := WriteArtifacts(logs, r); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(logs, ResultsFile))
	if err != nil || string(written) != string(data) {
		t.Errorf("%s: %v, or not the same as JSON()", ResultsFile, err)
	}
	var doc struct {
		QualityGates struct {
			RetryAttempts int    `json:"retry_attempts"`
			MaxRetries    int    `json:"max_retries"`
			FinalStatus   string `json:"final_status"`
			Attempts      []struct {
				Results []struct {
					Name     string `json:"name"`
					Passed   bool   `json:"passed"`
					ExitCode int    `json:"exit_code"`
					Output   int    `json:"output_bytes"`
					Log      string `json:"log"`
				} `json:"results"`
			} `json:"attempts"`
		} `json:"quality_gates"`
	}
	if err := json.Unmarshal(written, &doc); err != nil {
		t.Fatal(err)
	}
	q := doc.QualityGates
	if q.RetryAttempts != 2 || q.MaxRetries != 3 || q.FinalStatus != "passed" || len(q.Attempts) != 2 {
		t.Errorf("gate-results.json = %+v", q)
	}
	for _, a := range q.Attempts {
		for _, res := range a.Results {
			if res.Output == 0 {
				if res.Log != "" {
					t.Errorf("result %q printed nothing, and has a log %q", res.Name, res.Log)
				}
				continue
			}
			if _, err := os.Stat(filepath.Join(logs, res.Log)); res.Log == "" || err != nil {
				t.Errorf("result %q: log %q: %v", res.Name, res.Log, err)
			}
		}
	}
	if md, err := os.ReadFile(filepath.Join(logs, SummaryFile)); err != nil || string(md) != r.Markdown() {
		t.Errorf("%s: %v, or not the same as Markdown()", SummaryFile, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(logs, ".*tmp*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestReportEmpty(t *testing.T) {
	r := &Report{ExecutionID: "x"}
	if r.FinalStatus() != "pending" {
		t.Errorf("FinalStatus() = %q; want pending", r.FinalStatus())
	}
	data, err := r.JSON()
	if err != nil || !strings.Contains(string(data), `"attempts": []`) {
		t.Errorf("JSON() = %s, %v", data, err)
	}
	if md := r.Markdown(); !strings.Contains(md, "No attempt yet") {
		t.Errorf("Markdown() = %q", md)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"one", "two"} {
		if err := writeFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("after writing %q: %q", content, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files; want 1", len(entries))
	}
	// A failed write leaves the old file.
	if err := writeFile(filepath.Join(dir, "missing", "f.json"), []byte("x")); err == nil {
		t.Errorf("writing into a missing directory: no error")
	}
}

func TestFeedbackGolden(t *testing.T) {
	r, logs := fixCycle(t)
	ev := r.Attempts[0].Evaluation
	in := FeedbackInput{Attempt: 1, MaxAttempts: 3, Output: config.Output{FeedbackLines: 1}}
	first, err := RenderFeedback("", NewFeedback(ev, in))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "feedback-attempt1.md", strings.ReplaceAll(first, logs, "$RUN"))

	// Later: the same test failure a third time, the build failure new.
	in = FeedbackInput{
		Attempt: 3, MaxAttempts: 3,
		Signatures: map[string]string{"Run unit tests": "9f2c4e1ab7d3aa00", "Build check": "77aa00bb11cc22dd"},
		Tried: []Tried{
			{Gate: "Run unit tests", Signature: "9f2c4e1ab7d3aa00", Count: 2, Failure: "--- FAIL: TestAdd (<dur>): calc_test.go:N: Add(1, 2) = 3; want 4"},
			{Gate: "Build check", Signature: "0123456789abcdef", Count: 1},
		},
	}
	d := NewFeedback(ev, in)
	if !d.Repeated || d.MostSeen != 2 || d.Failures[0].Seen != 2 || d.Failures[1].Seen != 0 || !d.LastAttempt {
		t.Errorf("NewFeedback = %+v; want the test failure seen twice, last attempt", d)
	}
	later, err := RenderFeedback("", d)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "feedback-attempt3.md", strings.ReplaceAll(later, logs, "$RUN"))

	// A user's template replaces ours.
	override := t.TempDir()
	if err := os.WriteFile(filepath.Join(override, FeedbackTemplate), []byte("{{len .Failures}} failed, attempt {{.Attempt}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := RenderFeedback(override, d); err != nil || got != "3 failed, attempt 3" {
		t.Errorf("RenderFeedback(override) = %q, %v", got, err)
	}
	if _, err := d.Render("{{.NoSuchField}}"); err == nil {
		t.Errorf("Render of a template with an unknown field: no error")
	}
}
