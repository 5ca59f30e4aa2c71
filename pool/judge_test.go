package pool

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// gateIssues files an issue per gate, as the gate files its failure:
// source gate, the gate named; the summary names what to fix.
func gateIssues(t *testing.T, w loop.Workspace, gates ...string) {
	t.Helper()
	for _, g := range gates {
		if _, err := w.AddIssue(context.Background(), testNow, loop.NewIssue{
			Fields:   map[string]string{queue.FieldAutoRetry: "true", queue.FieldSource: "gate", loop.FieldGate: g},
			Sections: map[string]string{queue.SectionSummary: "Quality gate " + g + " failed: fix-" + g + "-now"},
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// judgedRepo makes the repository of agentsRepo whose gates a, b and c
// each fail until its file X.ok is there, noting where each ran in the
// file "ran"; the agent fixes what its prompt names, and more as told.
func judgedRepo(t *testing.T, trees, more string) loop.Workspace {
	t.Helper()
	return agentsRepo(t, func(w loop.Workspace) string {
		gates := "gates:\n"
		for _, g := range []string{"a", "b", "c"} {
			gates += "  - name: " + g + "\n    command: 'echo \"$PWD\" >> " + filepath.Join(w.Root(), "ran") + "; test -f " + g + ".ok || { echo " + g + " is broken; exit 1; }'\n"
		}
		return "agents:\n  worktrees: " + trees + "\n" +
			"agent:\n  command: '" + logLaunch(w) + `p=$(cat); printf "%s\n====\n" "$p" >> ` + filepath.Join(w.Root(), "prompts") +
			`; for g in a b c; do case "$p" in *fix-$g-now*) touch $g.ok;; esac; done; ` + more + `'` + "\n" + gates
	})
}

// Three gates fail on the branch, each the issue of one agent: each agent
// fixes its own alone, and its pass lands while the other two still fail
// on its tree. Each is launched once, merged in a commit of its own. The
// baseline costs one evaluation of the gates for the run, not one per
// agent, and is kept by tree: a later run on the same tree pays nothing.
func TestAgentsJudgedByTheirIssue(t *testing.T) {
	trees := t.TempDir()
	w := judgedRepo(t, trees, "true")
	gateIssues(t, w, "a", "b", "c")
	start := gitIn(t, w.Root(), "rev-parse", "main")
	res := runAgents(t, w, 3)
	if res.Outcome != loop.RunPassed || len(res.Merged) != 3 {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	for id, n := range launches(t, w) {
		if n != 1 {
			t.Errorf("%s launched %d times", id, n)
		}
	}
	log := gitIn(t, w.Root(), "log", "--format=%s", "--name-only", "main")
	for _, g := range []string{"a", "b", "c"} {
		if strings.Count(log, g+".ok") != 1 {
			t.Errorf("%s.ok is not in one commit of its own:\n%s", g, log)
		}
	}
	// A later run on the same tree reads the baseline kept.
	repo, err := worktree.Open(context.Background(), w.Root())
	if err != nil {
		t.Fatal(err)
	}
	repo.Base = trees
	if _, err := (&baselines{w: w, repo: repo, now: time.Now}).of(context.Background(), start); err != nil {
		t.Fatal(err)
	}
	ran, _ := os.ReadFile(filepath.Join(w.Root(), "ran"))
	base := 0
	for _, dir := range strings.Fields(string(ran)) {
		if dir == filepath.Join(trees, baselineTree) {
			base++
		}
	}
	if base != 3 {
		t.Errorf("the baseline ran %d gates; want 3, one evaluation for the run (gates ran in:\n%s)", base, ran)
	}
	// Each car's work is checked once at most, on the train, on the work
	// ahead of it, or covered by the check of the car behind it: not in
	// its worktree first, and again on the train.
	if work := len(strings.Fields(string(ran))) - base; work > 9 {
		t.Errorf("the gates ran %d times on the agents' work; want 9 at most, one evaluation for each of the 3 (gates ran in:\n%s)", work, ran)
	}
	kept, _ := filepath.Glob(filepath.Join(w.Path(loop.RunsDir), loop.BaselineDir, "*.json"))
	if len(kept) != 1 {
		t.Errorf("baselines kept: %v; want one", kept)
	}
	if out := gitIn(t, w.Root(), "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
}

// The baseline is taken beside the agents' work, not before it: an agent
// begins at once. Here the baseline's gate waits (up to 20 s) for an agent
// to have begun, which it never would if the agents waited for the
// baseline; and the attempt is still judged against it: its issue's gate
// fixed, the other one failing on both.
func TestAgentsWorkWhileTheBaselineIsTaken(t *testing.T) {
	trees := t.TempDir()
	var began, gaveUp string
	w := agentsRepo(t, func(w loop.Workspace) string {
		began, gaveUp = filepath.Join(w.Root(), "began"), filepath.Join(w.Root(), "gave-up")
		wait := `case "$PWD" in */` + baselineTree + `) i=0; while [ ! -e ` + began + ` ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; test -e ` + began + ` || touch ` + gaveUp + `;; esac; `
		return "agents:\n  worktrees: " + trees + "\n" +
			"agent:\n  command: '" + logLaunch(w) + "touch " + began + `; p=$(cat); for g in a b; do case "$p" in *fix-$g-now*) touch $g.ok;; esac; done'` + "\n" +
			"gates:\n  - name: a\n    command: '" + wait + "test -f a.ok'\n  - name: b\n    command: 'test -f b.ok'\n"
	})
	gateIssues(t, w, "a")
	res := runAgents(t, w, 1)
	if _, err := os.Stat(gaveUp); err == nil {
		t.Fatal("the baseline's gate waited 20 s for an agent to begin: the agent waited for the baseline")
	}
	if res.Outcome != loop.RunPassed || len(res.Merged) != 1 {
		t.Fatalf("RunAgents = %s %q, merged %v; want its issue merged, judged against the baseline (b fails on both)", res.Outcome, res.Reason, res.Merged)
	}
	if n := launches(t, w); len(n) != 1 {
		t.Errorf("launches: %v; want one", n)
	}
}

// A baseline still being taken when the agents are done is stopped, not
// waited for: here the only agent cannot run, and the baseline's gate,
// which would take 30 s, is cut (its end never comes); its worktree is
// removed.
func TestBaselineStoppedWhenTheAgentsAreDone(t *testing.T) {
	trees := t.TempDir()
	var ended string
	w := agentsRepo(t, func(w loop.Workspace) string {
		ended = filepath.Join(w.Root(), "ended")
		return "agents:\n  worktrees: " + trees + "\n" +
			"agent:\n  command: 'exit 127'\n" +
			"gates:\n  - name: a\n    command: 'sleep 30; touch " + ended + "'\n"
	})
	gateIssues(t, w, "a")
	if res, err := Run(context.Background(), w, Options{Agents: 1}); err == nil && res.Outcome != loop.RunError {
		t.Fatalf("RunAgents = %s %q; want an error, its agent unable to run", res.Outcome, res.Reason)
	}
	if _, err := os.Stat(ended); err == nil {
		t.Error("the baseline's gate ran to its end after the agents were done")
	}
	if out := gitIn(t, w.Root(), "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
}

// An agent that fixes its issue but breaks what passed on the baseline
// is sent back with that regression named, and never merged: the same
// regression three times halts its issue.
func TestAgentsRegressionSentBack(t *testing.T) {
	w := judgedRepo(t, t.TempDir(), "rm -f shared.txt")
	cfg, _ := os.ReadFile(w.Path(loop.ConfigFile))
	cfg = append(cfg, "  - name: kept\n    command: 'test -f shared.txt || { echo shared.txt is gone; exit 1; }'\n"...)
	os.WriteFile(w.Path(loop.ConfigFile), cfg, 0o644)
	gateIssues(t, w, "a")
	res := runAgents(t, w, 1)
	if len(res.Merged) != 0 || res.Outcome != loop.RunHalted {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	for id, n := range launches(t, w) {
		if n != 3 {
			t.Errorf("%s launched %d times; want 3", id, n)
		}
	}
	data, _ := os.ReadFile(filepath.Join(w.Root(), "prompts"))
	prompts := strings.Split(string(data), "\n====\n")
	if len(prompts) < 2 || !strings.Contains(prompts[1], "kept passed before your change and fails now") || !strings.Contains(prompts[1], "shared.txt is gone") {
		t.Fatalf("the second prompt does not name the regression:\n%s", prompts[min(1, len(prompts)-1)])
	}
	// The other gates fail on the baseline too, the other issues' work:
	// neither their output nor their names as failed reach this agent.
	for _, other := range []string{"b is broken", "c is broken", "❌ b\n", "❌ c\n", "failed b", "c, kept"} {
		if strings.Contains(prompts[1], other) {
			t.Errorf("the second prompt tells of another issue's failure, %q:\n%s", other, prompts[1])
		}
	}
	// Each of the three attempts is one judge row, a failure with its
	// regression counted.
	if j, err := analytics.CountJudgedFile(w.Path(loop.HistoryFile), ""); err != nil || j.Regressions != 3 || j.Fixed != 0 {
		t.Errorf("the history's judged attempts: %+v, %v; want 3 regressions, nothing fixed", j, err)
	}
}

// Three gates fail, filed by the gates themselves: three agents that
// never fix halt after two launches each, as the filing failure and two
// attempts where only its own gate still fails the same way are three
// identical failures: the other issues' failures count for nothing.
func TestAgentsNeverFixingHaltAfterTwoLaunches(t *testing.T) {
	w := judgedRepo(t, t.TempDir(), "true")
	gr, err := w.RunGates(context.Background(), time.Now, loop.GateOptions{})
	if err != nil || len(gr.Issues) != 3 {
		t.Fatalf("RunGates filed %v, %v", gr.Issues, err)
	}
	res := runAgents(t, w, 3)
	if len(res.Merged) != 0 || res.Outcome != loop.RunHalted {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	n := launches(t, w)
	if len(n) != 3 {
		t.Errorf("launches: %v; want three issues", n)
	}
	for id, k := range n {
		if k != 2 {
			t.Errorf("%s launched %d times; want 2", id, k)
		}
	}
}

// goRepo makes agentsRepo a Go module with three bugs in three files of
// one package, each failing a test of its own, and one gate: go test.
// The agent fixes the bug its prompt names ("fix-a-now" fixes a.go).
func goRepo(t *testing.T, summaries ...string) loop.Workspace {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	return agentsRepo(t, func(w loop.Workspace) string {
		root := w.Root()
		files := map[string]string{"go.mod": "module example.com/m\n\ngo 1.21\n"}
		for _, f := range []string{"a", "b", "c"} {
			up := strings.ToUpper(f)
			files[f+".go"] = "package m\n\n// " + up + " is one.\nfunc " + up + "() int { return 0 }\n"
			files[f+"_test.go"] = "package m\n\nimport \"testing\"\n\nfunc Test" + up + "(t *testing.T) {\n\tif got := " + up + "(); got != 1 {\n\t\tt.Errorf(\"" + up + "() = %d; want 1\", got)\n\t}\n}\n"
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return "agent:\n  command: '" + logLaunch(w) + `p=$(cat); printf "%s\n====\n" "$p" >> ` + filepath.Join(root, "prompts") +
			`; for f in a b c; do case "$p" in *fix-$f-now*) sed -i "s/return 0/return 1/" $f.go;; esac; done'` + "\n" +
			"gates:\n  - name: tests\n    command: go test ./...\n"
	}, summaries...)
}

// Three bugs in three files of one Go package, three issues filed by
// hand (no Tests), one gate for the whole suite: three agents merge three
// of three, each fix in a commit of its own, each agent launched once;
// each issue learns the test its fix turned green.
func TestAgentsOneSuiteThreeBugs(t *testing.T) {
	w := goRepo(t, "fix-a-now", "fix-b-now", "fix-c-now")
	res := runAgents(t, w, 3)
	if res.Outcome != loop.RunPassed || len(res.Merged) != 3 {
		data, _ := os.ReadFile(filepath.Join(w.Root(), "prompts"))
		t.Fatalf("RunAgents = %s %q, merged %v; prompts:\n%s", res.Outcome, res.Reason, res.Merged, data)
	}
	for id, n := range launches(t, w) {
		if n != 1 {
			t.Errorf("%s launched %d times", id, n)
		}
		is := loadIssue(t, w, id)
		tests := is.Tests()
		if len(tests) != 1 || tests[0].Gate != "tests" || !strings.HasPrefix(tests[0].ID, "example.com/m Test") {
			t.Errorf("%s learned the tests %v; want its own", id, tests)
		}
	}
	first := gitIn(t, w.Root(), "rev-list", "--max-parents=0", "main")
	log := gitIn(t, w.Root(), "log", "--format=%s", "--name-only", "main", "^"+first)
	if n := strings.Count(log, "ISSUE-"); n != 3 {
		t.Errorf("%d commits on main after the first; want 3:\n%s", n, log)
	}
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		if n := slices.Index(strings.Fields(log), f); n < 0 || slices.Index(strings.Fields(log)[n+1:], f) >= 0 {
			t.Errorf("%s is not fixed in one commit of its own:\n%s", f, log)
		}
	}
	// Three attempts landed, each fixing one test: one judge row each,
	// where it landed, not one more where its worktree passed.
	if j, err := analytics.CountJudgedFile(w.Path(loop.HistoryFile), ""); err != nil || j.Fixed != 3 || j.Regressions != 0 {
		t.Errorf("the history's judged attempts: %+v, %v; want 3 tests fixed, no regression", j, err)
	}
}

// On a red suite, an issue filed by hand that an agent's attempts turn
// nothing green for is not passed: its feedback says so and names the
// failures, and it halts on three identical ones; the other issue's agent
// fixes its own bug and is merged.
func TestAgentsNothingFixedIsNoPass(t *testing.T) {
	w := goRepo(t, "fix-a-now", "look at it")
	res := runAgents(t, w, 2)
	if len(res.Merged) != 1 || res.Outcome != loop.RunHalted {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	data, _ := os.ReadFile(filepath.Join(w.Root(), "prompts"))
	if !strings.Contains(string(data), "None of the failures there were before your change passes now") || !strings.Contains(string(data), "TestC") {
		t.Errorf("no prompt says that nothing was fixed, naming the failures:\n%s", data)
	}
}
