package gate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/orchestrate-dev/orchestrate/findings"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/results"

	"github.com/orchestrate-dev/orchestrate/config"
)

// maxResults is the most of a gate-results.json that ReadAttempts reads.
const maxResults = 64 << 20

// ReadAttempts reads back the attempts a gate-results.json at path keeps,
// so that a driver that evaluates once per process (orchestrate gate, the
// Stop hook) adds its attempt to the fix cycle instead of starting the
// files again. Each Evaluation holds what the file has of it: every gate's
// name, outcome, enforcement, exit code, duration, output, log, findings,
// approval and test-level results (their units and signatures, not their
// failure blocks).
func ReadAttempts(path string) ([]Attempt, error) {
	data, exists, err := fsx.ReadFileMax(path, maxResults)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	var in jsonResults
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	dir := filepath.Dir(path)
	var out []Attempt
	for _, ja := range in.QualityGates.Attempts {
		a := Attempt{Number: ja.Attempt, AgentFixes: ja.AgentFixes}
		if ja.Timestamp != "" {
			t, err := time.Parse(time.RFC3339, ja.Timestamp)
			if err != nil {
				return nil, fmt.Errorf("%s: attempt %d: timestamp: %v", path, ja.Attempt, err)
			}
			a.Timestamp = t
		}
		ev := &Evaluation{Passed: ja.Passed, Warnings: ja.Warnings, Started: a.Timestamp,
			Duration: durationOf(ja.DurationSeconds)}
		for _, jr := range ja.Results {
			r := Result{
				Gate:    config.Gate{Name: jr.Name, Enforcement: config.Enforcement(jr.Enforcement)},
				Outcome: jr.Outcome, ExitCode: jr.ExitCode, Err: jr.Error,
				Duration: durationOf(jr.DurationSeconds), Output: jr.Output,
				OutputBytes: jr.OutputBytes, Omitted: jr.OmittedBytes,
			}
			if jr.Outcome == Skipped || jr.Outcome == AwaitingApproval {
				r.ExitCode = -1
			}
			if jr.Log != "" {
				r.LogPath = filepath.Join(dir, jr.Log)
			}
			if jr.FailOn != "" || len(jr.Findings) > 0 {
				r.Gate.Type = config.TypeReview
				fail, _ := findings.ParsePriority(jr.FailOn)
				r.Review = &Review{FailOn: fail, Findings: jr.Findings}
			}
			if ap := jr.Approval; ap != nil {
				r.Gate.Type = config.TypeHuman
				r.Approval = &Approval{State: ap.State, Ref: ap.Issue, Comment: ap.Comment, Note: ap.Note}
			}
			r.Tests = reportOf(jr.Name, jr.Tests)
			ev.Results = append(ev.Results, r)
		}
		a.Evaluation = ev
		out = append(out, a)
	}
	return out, nil
}

// reportOf returns the test-level results gate-results.json keeps of a
// gate; nil for none.
func reportOf(gate string, t *jsonTests) *results.Report {
	if t == nil {
		return nil
	}
	rep := &results.Report{Gate: gate, Runner: t.Runner, Whole: t.Whole, More: t.More, Passed: t.Passed}
	for _, f := range t.Failed {
		rep.Failed = append(rep.Failed, results.Failed{Unit: results.Unit{Gate: gate, ID: f.ID}, Signature: f.Signature})
	}
	return rep
}

func durationOf(s seconds) time.Duration {
	return time.Duration(float64(s) * float64(time.Second))
}
