package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/findings"
	"github.com/orchestrate-dev/orchestrate/results"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// The artifact files of a run, in .orchestrator/runs/<run-id>/.
const (
	ResultsFile = "gate-results.json"
	SummaryFile = "summary.md"
)

// Attempt is one evaluation of the gates in a fix cycle.
type Attempt struct {
	Number     int
	Timestamp  time.Time // zero means Evaluation.Started
	AgentFixes string    // what the agent said it changed, when known
	Evaluation *Evaluation
}

func (a *Attempt) time() time.Time {
	if a.Timestamp.IsZero() && a.Evaluation != nil {
		return a.Evaluation.Started
	}
	return a.Timestamp
}

// Report is the attempts of a fix cycle so far: what gate-results.json and
// summary.md show (seed 001).
type Report struct {
	ExecutionID string
	MaxRetries  int // fix attempts allowed after the first: MaxRetries + 1 attempts in all
	Attempts    []Attempt
	Output      config.Output // bounds the error output in the summary; zero takes the defaults
}

// FinalStatus is "passed" or "failed", as the last attempt went, or
// "pending" before any attempt.
func (r *Report) FinalStatus() string {
	if len(r.Attempts) == 0 || r.Attempts[len(r.Attempts)-1].Evaluation == nil {
		return "pending"
	}
	if r.Attempts[len(r.Attempts)-1].Evaluation.Passed {
		return "passed"
	}
	return "failed"
}

// TotalDuration is the time spent running gates, over all attempts.
func (r *Report) TotalDuration() time.Duration {
	var d time.Duration
	for _, a := range r.Attempts {
		if a.Evaluation != nil {
			d += a.Evaluation.Duration
		}
	}
	return d
}

// seconds rounds to tenths, as in seed 001, so that the files read well and
// compare well.
type seconds float64

func secondsOf(d time.Duration) seconds { return seconds(math.Round(d.Seconds()*10) / 10) }

func (s seconds) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.1f", float64(s))), nil
}

type jsonResults struct {
	ExecutionID  string    `json:"execution_id"`
	QualityGates jsonCycle `json:"quality_gates"`
}

type jsonCycle struct {
	RetryAttempts        int           `json:"retry_attempts"`
	MaxRetries           int           `json:"max_retries"`
	FinalStatus          string        `json:"final_status"`
	TotalDurationSeconds seconds       `json:"total_duration_seconds"`
	Attempts             []jsonAttempt `json:"attempts"`
}

type jsonAttempt struct {
	Attempt         int          `json:"attempt"`
	Timestamp       string       `json:"timestamp"`
	AgentFixes      string       `json:"agent_fixes,omitempty"`
	Passed          bool         `json:"passed"`
	DurationSeconds seconds      `json:"duration_seconds"`
	Warnings        []string     `json:"warnings,omitempty"`
	Results         []jsonResult `json:"results"`
}

// jsonResult is seed 001's result (name, passed, duration_seconds,
// exit_code, output) and what else a reader needs to know.
type jsonResult struct {
	Name            string  `json:"name"`
	Passed          bool    `json:"passed"`
	DurationSeconds seconds `json:"duration_seconds"`
	ExitCode        int     `json:"exit_code,omitempty"`
	Output          string  `json:"output"`
	Outcome         Outcome `json:"outcome"`
	Enforcement     string  `json:"enforcement"`
	Error           string  `json:"error,omitempty"`
	OutputBytes     int64   `json:"output_bytes"`
	OmittedBytes    int64   `json:"omitted_bytes,omitempty"`
	Log             string  `json:"log,omitempty"` // file name, in the gate log directory

	// A review gate's verdict: its fail_on, the final findings, and each
	// review command's run.
	FailOn    string             `json:"fail_on,omitempty"`
	Findings  []findings.Finding `json:"findings,omitempty"`
	Reviewers []jsonReviewer     `json:"reviewers,omitempty"`
	// A human gate's approval: its state and request.
	Approval *jsonApproval `json:"approval,omitempty"`
	// A command gate's test-level results.
	Tests *jsonTests `json:"tests,omitempty"`
}

// jsonTests are a gate's test-level results (results.Report): the units
// that failed, with their signatures, and the tests seen passing.
type jsonTests struct {
	Runner string       `json:"runner"`
	Whole  bool         `json:"whole"`
	Failed []jsonFailed `json:"failed"`
	More   int          `json:"more,omitempty"`
	Passed []string     `json:"passed,omitempty"`
}

type jsonFailed struct {
	Unit      string `json:"unit"` // as an issue's Tests field holds it: "GATE: ID", "GATE"
	ID        string `json:"id"`
	Signature string `json:"signature"`
}

// testsJSON returns the test-level results of gate-results.json; nil for none.
func testsJSON(rep *results.Report) *jsonTests {
	if rep == nil {
		return nil
	}
	t := &jsonTests{Runner: rep.Runner, Whole: rep.Whole, Failed: []jsonFailed{}, More: rep.More, Passed: rep.Passed}
	for _, f := range rep.Failed {
		t.Failed = append(t.Failed, jsonFailed{Unit: f.Unit.String(), ID: f.ID, Signature: f.Signature})
	}
	return t
}

type jsonReviewer struct {
	Name            string  `json:"name"`
	Outcome         Outcome `json:"outcome"`
	ExitCode        int     `json:"exit_code"`
	Error           string  `json:"error,omitempty"`
	Findings        int     `json:"findings"`
	DurationSeconds seconds `json:"duration_seconds"`
	Log             string  `json:"log,omitempty"`
}

type jsonApproval struct {
	State   ApprovalState `json:"state"`
	Issue   string        `json:"issue,omitempty"`
	Comment string        `json:"comment,omitempty"`
	Note    string        `json:"note,omitempty"`
}

// JSON returns the content of gate-results.json.
func (r *Report) JSON() ([]byte, error) {
	out := jsonResults{
		ExecutionID: r.ExecutionID,
		QualityGates: jsonCycle{
			RetryAttempts:        len(r.Attempts),
			MaxRetries:           r.MaxRetries,
			FinalStatus:          r.FinalStatus(),
			TotalDurationSeconds: secondsOf(r.TotalDuration()),
			Attempts:             []jsonAttempt{},
		},
	}
	for _, a := range r.Attempts {
		ja := jsonAttempt{Attempt: a.Number, Timestamp: timestamp(a.time()), AgentFixes: a.AgentFixes, Results: []jsonResult{}}
		if ev := a.Evaluation; ev != nil {
			ja.Passed, ja.Warnings, ja.DurationSeconds = ev.Passed, ev.Warnings, secondsOf(ev.Duration)
			for _, res := range ev.Results {
				jr := jsonResult{
					Name:            res.Name(),
					Passed:          res.Passed(),
					DurationSeconds: secondsOf(res.Duration),
					Output:          res.Output,
					Outcome:         res.Outcome,
					Enforcement:     string(res.Enforcement()),
					Error:           res.Err,
					OutputBytes:     res.OutputBytes,
					OmittedBytes:    res.Omitted,
				}
				if res.Outcome != Skipped {
					jr.ExitCode = res.ExitCode
				}
				if res.LogPath != "" {
					jr.Log = filepath.Base(res.LogPath)
				}
				if rev := res.Review; rev != nil {
					jr.FailOn, jr.Findings = rev.FailOn.String(), rev.Findings
					for _, rv := range rev.Reviewers {
						jrv := jsonReviewer{Name: rv.Name, Outcome: rv.Outcome, ExitCode: rv.ExitCode, Error: rv.Err,
							Findings: rv.Findings, DurationSeconds: secondsOf(rv.Duration)}
						if rv.LogPath != "" {
							jrv.Log = filepath.Base(rv.LogPath)
						}
						jr.Reviewers = append(jr.Reviewers, jrv)
					}
				}
				if a := res.Approval; a != nil {
					jr.Approval = &jsonApproval{State: a.State, Issue: a.Ref, Comment: a.Comment, Note: a.Note}
				}
				jr.Tests = testsJSON(res.Tests)
				ja.Results = append(ja.Results, jr)
			}
		}
		out.QualityGates.Attempts = append(out.QualityGates.Attempts, ja)
	}
	// Outputs are full of <, > and &: kept as they are, for people to read.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Markdown returns the content of summary.md, in seed 001's form.
func (r *Report) Markdown() string {
	opts := Options{Output: r.Output}
	out := opts.output()
	var b strings.Builder
	b.WriteString("## Quality Gates - Iterative Fix Cycle\n\n")
	n := len(r.Attempts)
	switch r.FinalStatus() {
	case "passed":
		fmt.Fprintf(&b, "**Final Status:** ✅ All gates passed after %d %s\n", n, plural(n, "attempt"))
	case "failed":
		fmt.Fprintf(&b, "**Final Status:** ❌ Gates failing after %d %s\n", n, plural(n, "attempt"))
	default:
		b.WriteString("**Final Status:** ⏳ No attempt yet\n")
	}
	for i, a := range r.Attempts {
		if a.Evaluation == nil {
			continue
		}
		if i > 0 {
			b.WriteString("\n---\n")
		}
		writeAttempt(&b, a, out)
		// What the agent did about this attempt's failures: the fixes the
		// next attempt checked (seed 001 shows them under the failure).
		if i+1 < len(r.Attempts) && r.Attempts[i+1].AgentFixes != "" {
			fmt.Fprintf(&b, "\n**Agent Action:** %s\n", findings.OneLine(r.Attempts[i+1].AgentFixes))
		}
	}
	fmt.Fprintf(&b, "\n**Total Duration:** %.1f seconds\n", float64(secondsOf(r.TotalDuration())))
	// The first attempt and MaxRetries fixes; a gate run again once none
	// is left (orchestrate gate, by hand) is an attempt past the limit.
	if allowed := r.MaxRetries + 1; n <= allowed {
		fmt.Fprintf(&b, "**Total Attempts:** %d of %d allowed\n", n, allowed)
	} else {
		fmt.Fprintf(&b, "**Total Attempts:** %d (%d allowed; the later ones after a person took over)\n", n, allowed)
	}
	return b.String()
}

// writeAttempt writes one attempt of summary.md: its heading, its table of
// gates, the output of the ones that failed, and its warnings.
func writeAttempt(b *strings.Builder, a Attempt, out config.Output) {
	ev := a.Evaluation
	status := "Failed"
	if ev.Passed {
		status = "Passed"
	}
	fmt.Fprintf(b, "\n### Attempt %d - %s\n", a.Number, status)
	if t := timestamp(a.time()); t != "" {
		fmt.Fprintf(b, "*Timestamp: %s*\n", t)
	}
	b.WriteString("\n")
	writeResultsTable(b, ev.Results)
	for _, res := range ev.Results {
		if !res.Failed() || res.Enforcement() == config.Informational {
			continue
		}
		excerpt, _ := FailureExcerpt(res.Output, res.Marks, out.FeedbackLines, out.FeedbackBytes)
		fmt.Fprintf(b, "\n**Error Output (%s):** %s\n", res.Name(), res.Reason())
		if excerpt != "" {
			f := fence(excerpt)
			fmt.Fprintf(b, "%s\n%s\n%s\n", f, excerpt, f)
		}
	}
	for _, w := range ev.Warnings {
		fmt.Fprintf(b, "\n> ⚠️ %s\n", w)
	}
}

// writeResultsTable writes the table of an attempt's gates, with a column
// of exit codes when one failed.
func writeResultsTable(b *strings.Builder, results []Result) {
	exitCodes := false
	for _, res := range results {
		exitCodes = exitCodes || res.Failed()
	}
	if exitCodes {
		b.WriteString("| Gate | Status | Duration | Exit Code |\n|------|--------|----------|-----------|\n")
	} else {
		b.WriteString("| Gate | Status | Duration |\n|------|--------|----------|\n")
	}
	for _, res := range results {
		fmt.Fprintf(b, "| %s | %s | %.1fs |", cell(res.Name()), statusCell(&res), float64(secondsOf(res.Duration)))
		if exitCodes {
			code := ""
			if res.Failed() && res.ExitCode >= 0 {
				code = fmt.Sprint(res.ExitCode)
			}
			fmt.Fprintf(b, " %s |", code)
		}
		b.WriteString("\n")
	}
}

func statusCell(r *Result) string {
	var s string
	switch r.Outcome {
	case Pass:
		return "✅ Pass"
	case Fail:
		s = "❌ Fail"
	case TimedOut:
		s = "⏱️ Timeout"
	case Errored:
		s = "❌ Error"
	case Skipped:
		return "⏭️ Skipped"
	case AwaitingApproval:
		return "⏳ Awaiting approval"
	default:
		s = string(r.Outcome)
	}
	if e := r.Enforcement(); e != config.Blocking {
		s += " (" + string(e) + ")"
	}
	return s
}

// cell makes text safe in a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// File is a file of a run's directory: its name and content.
type File struct {
	Name string
	Data []byte
}

// WriteArtifacts writes ResultsFile, SummaryFile and the extra files in
// dir, making dir if need be: each atomically and synced, and the
// directory synced once for all.
func WriteArtifacts(dir string, r *Report, extra ...File) error {
	if err := makeDir(dir); err != nil {
		return fmt.Errorf("making run directory: %w", err)
	}
	data, err := r.JSON()
	if err != nil {
		return fmt.Errorf("encoding gate results: %w", err)
	}
	// Each file synced, and the directory once for all.
	files := append([]File{{ResultsFile, data}, {SummaryFile, []byte(r.Markdown())}}, extra...)
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.Name), f.Data); err != nil {
			return err
		}
	}
	fsx.SyncDir(dir) // not all systems allow it
	return nil
}

// writeFile replaces path with data atomically, never through a symbolic
// link, without the sync of its directory (fsx.WriteFileNoDirSync). Its
// error names the file.
func writeFile(path string, data []byte) error {
	if err := fsx.WriteFileNoDirSync(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// makeDir makes dir if it is missing; one that is there must be a
// directory, not a symbolic link to one.
func makeDir(dir string) error {
	err := fsx.CheckDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	return err
}
