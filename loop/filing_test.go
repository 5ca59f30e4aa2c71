package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/results"
)

const filingConfig = "gates:\n  - name: tests\n    command: go test ./...\n"

// failedUnit is a failed go test of the gate tests.
func failedUnit(name string) results.Failed {
	return results.Failed{
		Unit:  results.Unit{Gate: "tests", ID: "example.com/m " + name},
		Block: fmt.Sprintf("--- FAIL: %s (0.00s)\n    x_test.go:9: %s: got 1, want 2", name, name),
	}
}

// unitsResult is a failed result of the gate tests whose tests are failed.
func unitsResult(t *testing.T, cfg *config.Config, failed ...results.Failed) *gate.Result {
	t.Helper()
	r := &gate.Result{Gate: cfg.Gates[0], Outcome: gate.Fail, ExitCode: 1, Output: "FAIL\n",
		Tests: &results.Report{Gate: "tests", Runner: "go", Failed: failed}}
	return r
}

// fileResult records one failed result as an evaluation would, and returns
// the gate run it noted it in.
func fileResult(t *testing.T, w Workspace, r *gate.Result, tag map[string]string) *GateRun {
	t.Helper()
	cfg, err := w.Config()
	if err != nil {
		t.Fatal(err)
	}
	s := &gateStep{w: w, tx: direct{w}, now: func() time.Time { return ruleNow }, cfg: cfg,
		opt: GateOptions{Tag: tag}, run: "run-1", sigs: map[string]string{},
		gr: &GateRun{Issues: map[string]Added{}, Waiting: map[string]IssueRef{}}}
	var e analytics.Event
	if err := s.recordFailure(context.Background(), r, &e); err != nil {
		t.Fatal(err)
	}
	return s.gr
}

func loadAll(t *testing.T, w Workspace) []*queue.Issue {
	t.Helper()
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Problems) > 0 {
		t.Fatalf("problems: %v", q.Problems)
	}
	return q.Issues
}

// A failing suite files one issue per failing test, each holding its test,
// its own block as its failure and results.Sign's signature of it; the
// same failures again are recorded against them, never filed again.
func TestFileOneIssuePerTest(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, filingConfig, "")
	cfg, _ := w.Config()
	failed := []results.Failed{failedUnit("TestA"), failedUnit("TestB"), failedUnit("TestC")}
	gr := fileResult(t, w, unitsResult(t, cfg, failed...), nil)
	issues := loadAll(t, w)
	if len(issues) != 3 || len(gr.IssuesOf("tests")) != 3 || gr.Issues["tests"].ID != issues[0].ID {
		t.Fatalf("filed %d issues, noted %v; want 3", len(issues), gr.IssuesOf("tests"))
	}
	for i, is := range issues {
		f := failed[i]
		if got := is.Tests(); !slices.Equal(got, []results.Unit{f.Unit}) {
			t.Errorf("%s: Tests = %q; want %q", is.ID, got, f.Unit)
		}
		sig, _ := results.Sign([]results.Failed{f}, w.SignatureOptions())
		if got, _ := is.Get(queue.FieldFailureSignature); got != sig {
			t.Errorf("%s: Failure-Signature %s; want results.Sign's %s", is.ID, got, sig)
		}
		if got, want := summaryOf(is), "Quality gate tests failed: "+f.ID; got != want {
			t.Errorf("%s: Summary %q; want %q", is.ID, got, want)
		}
		details := is.Section(queue.SectionFailureDetails).Body()
		if !strings.Contains(details, f.Block) || strings.Contains(details, failed[(i+1)%3].ID) {
			t.Errorf("%s: Failure Details hold more or less than its own block:\n%s", is.ID, details)
		}
	}
	gr = fileResult(t, w, unitsResult(t, cfg, failed...), nil)
	again := loadAll(t, w)
	if len(again) != 3 {
		t.Fatalf("the same failures filed %d issues more", len(again)-3)
	}
	for i, is := range again {
		if n := is.Int(queue.FieldSignatureRepeatCount, 0); n != 2 {
			t.Errorf("%s: Signature-Repeat-Count %d; want 2 (recorded again)", is.ID, n)
		}
		if a := gr.Filed["tests"][i]; a.ID != is.ID || !a.Deduplicated {
			t.Errorf("second evaluation noted %+v for %s", a, is.ID)
		}
	}
}

// A test that an open issue holds is recorded against it: a person's issue
// that lists it in Tests, or an issue the gate filed before issues listed
// their tests, which holds every test of its gate, recorded as one failure.
func TestFileHeldTests(t *testing.T) {
	t.Parallel()
	person := issueText("ISSUE-20241213-001", "Status", "pending", "Auto-Retry", "true", "Tests", "tests: example.com/m TestB")
	old := issueText("ISSUE-20241213-002", "Status", "pending", "Auto-Retry", "true", "Gate", "tests")
	a, b, c := failedUnit("TestA"), failedUnit("TestB"), failedUnit("TestC")

	w := ruleWorkspace(t, filingConfig, "# Queue\n\n"+person)
	cfg, _ := w.Config()
	fileResult(t, w, unitsResult(t, cfg, a, b, c), nil)
	issues := loadAll(t, w)
	if len(issues) != 3 {
		t.Fatalf("%d issues; want the person's and two filed", len(issues))
	}
	if sig, _ := results.Sign([]results.Failed{b}, w.SignatureOptions()); !strings.Contains(issues[0].Section(queue.SectionFailureDetails).Body(), b.Block) ||
		issues[0].Int(queue.FieldSignatureRepeatCount, 0) != 1 || fieldOf(issues[0], queue.FieldFailureSignature) != sig {
		t.Errorf("TestB was not recorded against the person's issue")
	}
	for _, is := range issues[1:] {
		if slices.Contains(is.Tests(), b.Unit) {
			t.Errorf("%s holds TestB again", is.ID)
		}
	}

	w = ruleWorkspace(t, filingConfig, "# Queue\n\n"+old)
	fileResult(t, w, unitsResult(t, cfg, a, b, c), nil)
	issues = loadAll(t, w)
	if len(issues) != 1 {
		t.Fatalf("%d issues; want the gate's old issue alone", len(issues))
	}
	sig, _ := results.Sign([]results.Failed{a, b, c}, w.SignatureOptions())
	if got := fieldOf(issues[0], queue.FieldFailureSignature); got != sig || issues[0].Int(queue.FieldSignatureRepeatCount, 0) != 1 {
		t.Errorf("the old issue's failure %s; want the three tests' %s, recorded once", got, sig)
	}
}

func fieldOf(is *queue.Issue, name string) string {
	v, _ := is.Get(name)
	return v
}

// Past MaxFiledPerGate failing tests, the last issue holds the rest, says
// so in its Summary and lists them in its Tests.
func TestFileCap(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, filingConfig, "")
	cfg, _ := w.Config()
	var failed []results.Failed
	for i := range MaxFiledPerGate + 3 {
		failed = append(failed, failedUnit(fmt.Sprintf("Test%02d", i)))
	}
	fileResult(t, w, unitsResult(t, cfg, failed...), nil)
	issues := loadAll(t, w)
	if len(issues) != MaxFiledPerGate {
		t.Fatalf("%d issues; want %d", len(issues), MaxFiledPerGate)
	}
	last := issues[len(issues)-1]
	if got, want := last.Tests(), unitsOf(failed[MaxFiledPerGate-1:]); !slices.Equal(got, want) {
		t.Errorf("the last issue's Tests = %q; want %q", got, want)
	}
	if got, want := summaryOf(last), "Quality gate tests failed: example.com/m Test09 and 3 more"; got != want {
		t.Errorf("the last issue's Summary %q; want %q", got, want)
	}
	// Exactly the cap: one issue each.
	w = ruleWorkspace(t, filingConfig, "")
	fileResult(t, w, unitsResult(t, cfg, failed[:MaxFiledPerGate]...), nil)
	for _, is := range loadAll(t, w) {
		if len(is.Tests()) != 1 {
			t.Errorf("%s holds %q; want one test", is.ID, is.Tests())
		}
	}
}

// A test whose failure is that of an issue waiting for a person is neither
// filed nor recorded; when every failing test waits, the gate does.
func TestFileWaitingTest(t *testing.T) {
	t.Parallel()
	a, b := failedUnit("TestA"), failedUnit("TestB")
	w := ruleWorkspace(t, filingConfig, "")
	sig, _ := results.Sign([]results.Failed{a}, w.SignatureOptions())
	halted := issueText("ISSUE-20241213-001", "Status", "stuck", "Auto-Retry", "true", "Halted", "true",
		"Failure-Signature", sig, "Tests", "tests: example.com/m TestA")
	w = ruleWorkspace(t, filingConfig, "# Queue\n\n"+halted)
	cfg, _ := w.Config()
	gr := fileResult(t, w, unitsResult(t, cfg, a, b), nil)
	issues := loadAll(t, w)
	if len(issues) != 2 || !slices.Equal(issues[1].Tests(), []results.Unit{b.Unit}) || len(gr.Waiting) != 0 {
		t.Fatalf("want TestB filed alone beside the halted issue; got %d issues, waiting %v", len(issues), gr.Waiting)
	}
	if issues[0].Int(queue.FieldSignatureRepeatCount, 0) != 0 {
		t.Errorf("the halted issue's evidence changed")
	}
	gr = fileResult(t, w, unitsResult(t, cfg, a), nil)
	if gr.Waiting["tests"].ID != "ISSUE-20241213-001" || len(gr.IssuesOf("tests")) != 0 {
		t.Errorf("TestA alone: waiting %v, filed %v; want the halted issue waiting", gr.Waiting, gr.IssuesOf("tests"))
	}
}

// A gate whose results could not be split (a build failure) files one
// issue for the gate, which lists the gate as its test and holds its next
// whole failure; a per-test issue does not hold it.
func TestFileWholeGate(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, filingConfig, "# Queue\n\n"+
		issueText("ISSUE-20241213-001", "Status", "pending", "Auto-Retry", "true", "Gate", "tests", "Tests", "tests: example.com/m TestA"))
	cfg, _ := w.Config()
	r := &gate.Result{Gate: cfg.Gates[0], Outcome: gate.Fail, ExitCode: 1, Output: "x.go:3: undefined: y\nFAIL [build failed]\n",
		Tests: &results.Report{Gate: "tests", Runner: "go", Whole: true, Failed: []results.Failed{{Unit: results.Unit{Gate: "tests"}, Block: "x.go:3: undefined: y"}}}}
	gr := fileResult(t, w, r, nil)
	issues := loadAll(t, w)
	if len(issues) != 2 || !slices.Equal(issues[1].Tests(), []results.Unit{{Gate: "tests"}}) || gr.Issues["tests"].ID != issues[1].ID {
		t.Fatalf("want one new issue for the gate as a whole; got %d issues", len(issues))
	}
	fileResult(t, w, r, nil)
	if issues = loadAll(t, w); len(issues) != 2 || issues[1].Int(queue.FieldSignatureRepeatCount, 0) != 2 {
		t.Errorf("the same build failure again was not recorded against the gate's issue")
	}
}

// The Stop hook files a failing suite's tests one issue each, for its
// session, and retries them all; a person's issue that lists one of the
// tests gets its failure and is retried too.
func TestStopHookFilesEachTest(t *testing.T) {
	t.Parallel()
	const suite = "--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2\n--- FAIL: TestB (0.00s)\n    b_test.go:9: got 3, want 4\nFAIL\nFAIL\texample.com/m\t0.003s\n"
	w := ruleWorkspace(t, "gates:\n  - name: tests\n    command: 'cat out.txt; exit 1'\n",
		"# Queue\n\n"+issueText("ISSUE-20241213-001", "Status", "pending", "Auto-Retry", "true", "Tests", "tests: example.com/m TestB"))
	if err := os.WriteFile(filepath.Join(filepath.Dir(w.Dir), "out.txt"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.StopHook(context.Background(), func() time.Time { return ruleNow }, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var retried []string
	for _, r := range res.Retried {
		retried = append(retried, r.ID)
	}
	slices.Sort(retried)
	if res.Outcome != HookBlocked || !slices.Equal(retried, []string{"ISSUE-20241213-001", "ISSUE-20241213-002"}) {
		t.Fatalf("hook: %s, retried %v; want blocked, the person's issue and TestA's (filed %+v)", res.Outcome, retried, res.Gates.Filed)
	}
	filed := loadIssue(t, w, "ISSUE-20241213-002")
	if s, _ := filed.Get(FieldSession); s != "s1" || !slices.Equal(filed.Tests(), []results.Unit{{Gate: "tests", ID: "example.com/m TestA"}}) {
		t.Errorf("the filed issue: Session %q, Tests %q; want s1, TestA", s, filed.Tests())
	}
	if d := loadIssue(t, w, "ISSUE-20241213-001").Section(queue.SectionFailureDetails); d == nil || !strings.Contains(d.Body(), "got 3, want 4") || strings.Contains(d.Body(), "TestA") {
		t.Errorf("the person's issue does not hold TestB's failure alone")
	}
}

// An old issue that holds its gate whole (filed before issues held their
// tests) holds the failures of its own tags only: a session's failure is
// never recorded against the one orchestrate gate filed, nor against
// another session's; it files its own.
func TestFileHeldWholeBySameTagsOnly(t *testing.T) {
	t.Parallel()
	a, b := failedUnit("TestA"), failedUnit("TestB")
	for _, tc := range []struct {
		name, old string
		tag       map[string]string
		held      bool
	}{
		{"gate's issue, gate's failure", issueText("ISSUE-20241213-002", "Status", "pending", "Gate", "tests"), nil, true},
		{"gate's issue, a session's failure", issueText("ISSUE-20241213-002", "Status", "pending", "Gate", "tests"), map[string]string{FieldSession: "s1"}, false},
		{"a session's issue, its failure", issueText("ISSUE-20241213-002", "Status", "pending", "Gate", "tests", FieldSession, "s1"), map[string]string{FieldSession: "s1"}, true},
		{"a session's issue, another's failure", issueText("ISSUE-20241213-002", "Status", "pending", "Gate", "tests", FieldSession, "s1"), map[string]string{FieldSession: "s2"}, false},
	} {
		w := ruleWorkspace(t, filingConfig, "# Queue\n\n"+tc.old)
		cfg, _ := w.Config()
		fileResult(t, w, unitsResult(t, cfg, a, b), tc.tag)
		issues := loadAll(t, w)
		recorded := issues[0].Int(queue.FieldSignatureRepeatCount, 0) == 1
		if tc.held && (len(issues) != 1 || !recorded) {
			t.Errorf("%s: %d issues, recorded against the old one %v; want it to hold the failure", tc.name, len(issues), recorded)
		}
		if !tc.held && (len(issues) != 3 || recorded) {
			t.Errorf("%s: %d issues, recorded against the old one %v; want two filed of its own and the old one untouched", tc.name, len(issues), recorded)
		}
	}
}
