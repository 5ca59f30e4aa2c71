package loop

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/results"
)

// Where a test stands in the last gate results (TestState.State).
const (
	TestPasses = "passes"
	TestFails  = "fails"
	// TestNotRun: its gate did not run, was skipped, failed before its
	// tests ran, or ran and did not list it.
	TestNotRun = "not run"
	// TestUnknown: its gate failed and its results were not read as tests.
	TestUnknown = "unknown"
)

// TestState is where one of an issue's tests stands in the last gate
// results kept.
type TestState struct {
	Unit  results.Unit `json:"-"`
	Test  string       `json:"test"`  // Unit as the Tests field writes it
	State string       `json:"state"` // TestPasses, TestFails, TestNotRun, TestUnknown
}

// LastResults returns the last evaluation of the gates kept in runs/: the
// last attempt of the newest runs/*/gate-results.json, and that file's
// path; nil and "" when there is none that reads.
func (w Workspace) LastResults() (*gate.Evaluation, string) {
	paths, _ := filepath.Glob(filepath.Join(w.Path(RunsDir), "*", gate.ResultsFile))
	type kept struct {
		path string
		mod  int64
	}
	var all []kept
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			all = append(all, kept{p, fi.ModTime().UnixNano()})
		}
	}
	// Newest first; of two written at once, the later name.
	slices.SortFunc(all, func(a, b kept) int {
		if a.mod != b.mod {
			return cmp.Compare(b.mod, a.mod)
		}
		return cmp.Compare(b.path, a.path)
	})
	for _, k := range all {
		attempts, err := gate.ReadAttempts(k.path)
		if err != nil || len(attempts) == 0 || attempts[len(attempts)-1].Evaluation == nil {
			continue
		}
		return attempts[len(attempts)-1].Evaluation, k.path
	}
	return nil, ""
}

// TestStates says where each of units stands in ev: it passes when its
// gate passed, or when its gate failed with results that list it passing,
// or that list only failures and not it; it fails when they list it
// failing (a whole gate: when the gate failed).
func TestStates(ev *gate.Evaluation, units []results.Unit) []TestState {
	out := make([]TestState, len(units))
	for i, u := range units {
		out[i] = TestState{Unit: u, Test: u.String(), State: TestNotRun}
		if ev == nil {
			continue
		}
		for j := range ev.Results {
			if r := &ev.Results[j]; r.Name() == u.Gate {
				out[i].State = testState(r, u)
				break
			}
		}
	}
	return out
}

// testState is where unit u stands in its gate's result r.
func testState(r *gate.Result, u results.Unit) string {
	switch {
	case r.Passed():
		return TestPasses
	case !r.Failed():
		return TestNotRun // skipped, or awaiting a person
	case u.ID == "":
		return TestFails
	case r.Tests == nil:
		return TestUnknown
	case r.Tests.Whole:
		return TestNotRun
	}
	for _, f := range r.Tests.Failed {
		if f.Unit == u {
			return TestFails
		}
	}
	if r.Tests.Passed == nil || slices.Contains(r.Tests.Passed, u.ID) {
		return TestPasses
	}
	return TestNotRun
}
