package loop

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/results"
)

// judgeWorkspace makes a workspace with config and an issue per Tests
// field, returning their IDs.
func judgeWorkspace(t *testing.T, cfg string, tests ...string) (Workspace, []string) {
	t.Helper()
	root := t.TempDir()
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ts := range tests {
		a, err := w.AddIssue(context.Background(), time.Now(), NewIssue{
			Fields:   map[string]string{queue.FieldAutoRetry: "true", queue.FieldTests: ts},
			Sections: map[string]string{queue.SectionSummary: "fix " + ts},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	return w, ids
}

// A claimed issue's failure is results.Text of its own failing units and
// its regressions, signed as results.Sign signs them: the same units
// failing the same way sign the same wherever the others' failures are.
func TestVerdictFailureSignsOwnUnits(t *testing.T) {
	t.Parallel()
	w, ids := judgeWorkspace(t, "gates:\n  - name: tests\n    command: 'true'\n", "tests: p TestA")
	failed := func(id string) results.Failed {
		return results.Failed{Unit: results.Unit{Gate: "tests", ID: id}, Block: "--- FAIL: " + id + "\n    x_test.go:3: wrong\n"}
	}
	report := func(ids ...string) *results.Report {
		r := &results.Report{Gate: "tests", Runner: "go"}
		for _, id := range ids {
			r.Failed = append(r.Failed, failed(id))
		}
		return r
	}
	evalOf := func(r *results.Report) *GateRun {
		res := gate.Result{Gate: config.Gate{Name: "tests", Command: "go test ./..."}, Outcome: gate.Fail, ExitCode: 1, Output: "whatever", Tests: r}
		return &GateRun{Evaluation: &gate.Evaluation{Results: []gate.Result{res}}, Issues: map[string]Added{}}
	}
	base := []results.Report{*report("p TestA", "p TestB")}
	var sigs []string
	for _, now := range []*results.Report{report("p TestA", "p TestB"), report("p TestB", "p TestA"), report("p TestA")} {
		gr := evalOf(now)
		gr.Reports = reportsOf(gr.Evaluation)
		if err := w.JudgeClaimed(gr, ids[0], base); err != nil {
			t.Fatal(err)
		}
		f, whole := verdictFailure(gr, w.SignatureOptions())
		if whole != nil {
			t.Fatalf("verdictFailure fell back to the whole gate %v", whole)
		}
		want, _ := results.Sign([]results.Failed{failed("p TestA")}, w.SignatureOptions())
		sig, _ := w.Signature(f)
		if sig != want || string(f.Output) != results.Text([]results.Failed{failed("p TestA")}) {
			t.Errorf("the failure signs %s as\n%s; want %s", sig, f.Output, want)
		}
		sigs = append(sigs, sig)
		if fb := judgedEvaluation(gr).Failures(); len(fb) != 1 || strings.Contains(fb[0].Output, "TestB") {
			t.Errorf("the feedback's failures: %+v; want TestA's alone", fb)
		}
	}
	if len(slices.Compact(slices.Clone(sigs))) != 1 {
		t.Errorf("signatures %v; want one", sigs)
	}
}

// With the open issues (run without --agents), each issue whose tests
// pass resolves after the evaluation that shows it, while the others,
// still failing, go on; a failure another open issue holds is not a
// regression.
func TestRunResolvesEachIssueByItsTests(t *testing.T) {
	t.Parallel()
	cfg := "agent:\n  command: 'if [ -f a.ok ]; then touch b.ok; else touch a.ok; fi'\n" +
		"gates:\n  - name: a\n    command: 'test -f a.ok'\n  - name: b\n    command: 'test -f b.ok'\n"
	w, ids := judgeWorkspace(t, cfg, "a", "b")
	resolvedIn := map[string]int{}
	res, err := w.Run(context.Background(), RunOptions{Step: func(s Step) {
		if s.Kind == StepGates && s.Gates != nil {
			for _, id := range s.Gates.Resolved {
				resolvedIn[id] = s.Loop
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != RunPassed || res.Loops != 2 {
		t.Fatalf("Run = %s %q after %d loops; want passed after 2", res.Outcome, res.Reason, res.Loops)
	}
	if resolvedIn[ids[0]] != 1 || resolvedIn[ids[1]] != 2 {
		t.Errorf("resolved in loops %v; want %s in 1, %s in 2", resolvedIn, ids[0], ids[1])
	}
}

// A gate that timed out (or could not run) is judged as a whole failure,
// whatever its output listed before it was cut: the tests it never
// reached are not seen, so an attempt whose own test passed before the
// suite hung is no pass, and a baseline that timed out does not say that
// its unlisted tests passed.
func TestReportsOfCutGateIsWhole(t *testing.T) {
	t.Parallel()
	partial := &results.Report{Gate: "tests", Runner: "go", Passed: []string{"p TestA"},
		Failed: []results.Failed{{Unit: results.Unit{Gate: "tests", ID: "p TestB"}, Block: "--- FAIL: TestB\n"}}}
	for _, outcome := range []gate.Outcome{gate.TimedOut, gate.Errored} {
		res := gate.Result{Gate: config.Gate{Name: "tests", Command: "go test -v ./..."}, Outcome: outcome, ExitCode: -1,
			Err: "timed out after 5m0s", Output: "=== RUN TestA\n--- PASS: TestA\n--- FAIL: TestB\n=== RUN TestC\n", Tests: partial}
		reports := reportsOf(&gate.Evaluation{Results: []gate.Result{res}})
		if len(reports) != 1 || !reports[0].Whole || len(reports[0].Failed) != 1 || reports[0].Failed[0].ID != "" {
			t.Fatalf("%s: reportsOf = %+v; want the gate as one whole failure", outcome, reports)
		}
		base := []results.Report{{Gate: "tests", Runner: "go", Failed: []results.Failed{{Unit: results.Unit{Gate: "tests", ID: "p TestA"}}}}}
		if v := results.Judge([]results.Unit{{Gate: "tests", ID: "p TestA"}}, reports, base); v.Pass {
			t.Errorf("%s: an attempt whose gate was cut short passes: %+v", outcome, v)
		}
	}
}
