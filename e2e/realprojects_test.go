package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// go-humanize 1.0.1 with three bugs in three files, issues filed by hand
// (a summary, no tests), init's gates (go test ./..., go build ./...):
// run --agents 3 merges 3 of 3, each fix in a commit of its own, each
// agent launched once and told only of its own bug, nothing left behind;
// and the baseline (the gates on the tree the run started from) costs one
// run of go test, not one per agent.
func TestRealGoByHand(t *testing.T) {
	r := newRealRepo(t, goHumanize.upTo(3))
	base := r.countGoRuns()
	r.fileByHand()
	out, code := r.orchestrate("run", "--agents", "3")
	r.checkAllMerged(out, code)
	if n := base(); n != 1 {
		t.Errorf("go test ran %d times on the tree the run started from; want once (the baseline, shared by the 3 agents)", n)
	}
}

// The same, the issues filed by orchestrate gate: one issue per failing
// test.
func TestRealGoByGate(t *testing.T) {
	r := newRealRepo(t, goHumanize.upTo(3))
	r.fileByGate()
	r.checkAllMerged(r.orchestrate("run", "--agents", "3"))
}

// humanize 4.9.0 (Python) under pytest, three bugs in three files, issues
// filed by hand.
func TestRealPythonByHand(t *testing.T) {
	r := newPythonRepo(t)
	r.fileByHand()
	r.checkAllMerged(r.orchestrate("run", "--agents", "3"))
}

// humanize under pytest, the issues filed by orchestrate gate.
func TestRealPythonByGate(t *testing.T) {
	r := newPythonRepo(t)
	r.fileByGate()
	r.checkAllMerged(r.orchestrate("run", "--agents", "3"))
}

// ufo 1.6.3 (TypeScript) under vitest (npm test), three bugs in three
// files, issues filed by hand.
func TestRealJavaScriptByHand(t *testing.T) {
	r := newJavaScriptRepo(t)
	r.fileByHand()
	r.checkAllMerged(r.orchestrate("run", "--agents", "3"))
}

// ufo under vitest, the issues filed by orchestrate gate.
func TestRealJavaScriptByGate(t *testing.T) {
	r := newJavaScriptRepo(t)
	r.fileByGate()
	r.checkAllMerged(r.orchestrate("run", "--agents", "3"))
}

// fourGates are four gates of go-humanize, each failing on one of its four
// bugs.
const fourGates = `gates:
  - name: ordinals
    command: go test -run '^TestOrdinals$' .
  - name: commas
    command: go test -run '^TestCommas$' .
  - name: bytes
    command: go test -run '^TestBytes$' .
  - name: plural
    command: go test -run '^TestPluralWord$' ./english
`

// Four bugs, four gates, four issues filed by orchestrate gate (one per
// gate): 4 agents merge 4 of 4, each launched once, each told of its own
// gate's failure only.
func TestRealFourGates(t *testing.T) {
	r := newRealRepo(t, goHumanize)
	r.setGates(fourGates)
	r.fileByGate()
	r.checkAllMerged(r.orchestrate("run", "--agents", "4"))
}

// Four gates, four issues, four agents that never fix: each issue halts
// at three identical failures (the filing failure and two attempts), after
// two launches of its agent; nothing is merged.
func TestRealFourGatesNeverFixed(t *testing.T) {
	r := newRealRepo(t, goHumanize, "RP_MODE=never")
	r.setGates(fourGates)
	r.fileByGate()
	out, code := r.orchestrate("run", "--agents", "4")
	if code != 11 {
		t.Errorf("run --agents 4: exit %d; want 11 (a person is needed)\n%s", code, out)
	}
	prompts := r.prompts()
	if len(prompts) != 4 {
		t.Errorf("%d issues' agents launched; want 4", len(prompts))
	}
	for id, ps := range prompts {
		if len(ps) != 2 {
			t.Errorf("%s's agent was launched %d times; want 2 (the filing failure and two identical attempts halt it)", id, len(ps))
		}
	}
	q := r.readFile(".orchestrator/issue_queue.md")
	if n := strings.Count(q, "| Halted | true |"); n != 4 {
		t.Errorf("%d issues halted; want 4:\n%s", n, q)
	}
	if head := strings.TrimSpace(r.git("rev-parse", "main")); head != r.base {
		t.Errorf("main moved to %s; want nothing merged:\n%s", head, r.git("log", "--oneline", r.base+"..main"))
	}
}

// Three bugs filed by hand; the agent of the ordinals fixes its bug and
// breaks TestSI, which passed before, every time: it is sent back with
// TestSI named as a regression and never merged, while the two others
// merge.
func TestRealRegressionSentBack(t *testing.T) {
	r := newRealRepo(t, goHumanize.upTo(3), "RP_BREAK_WITH=TestOrdinals")
	r.env = append(r.env, "RP_BREAK="+r.patch("si"))
	r.fileByHand()
	out, code := r.orchestrate("run", "--agents", "3")
	if !strings.Contains(out, "Merged into main: 2 of 3") {
		t.Errorf("run --agents 3: exit %d; want 2 of 3 merged:\n%s", code, out)
	}
	for _, b := range r.rp.bugs {
		if got, want := r.fixedOnMain(b), b.test != "TestOrdinals"; got != want {
			t.Errorf("%s fixed on main: %v; want %v", b.test, got, want)
		}
	}
	if !r.fixedOnMain(bug{patch: "si", test: "TestSI"}) {
		t.Errorf("si.go changed on main: the attempt that broke TestSI was merged")
	}
	var sentBack bool
	for id, ps := range r.prompts() {
		if len(ps) == 0 || !strings.Contains(ps[0], "TestOrdinals") {
			for _, p := range ps {
				if strings.Contains(p, "TestSI") {
					t.Errorf("%s's agent, which broke nothing, was told of TestSI:\n%s", id, p)
				}
			}
			continue
		}
		if len(ps) < 2 {
			t.Errorf("%s's agent, which broke TestSI, was launched %d times; want it sent back", id, len(ps))
			continue
		}
		sentBack = strings.Contains(ps[1], "TestSI") && strings.Contains(ps[1], "passed before")
		if !sentBack {
			t.Errorf("%s's agent was sent back without TestSI named as a test that passed before:\n%s", id, ps[1])
		}
	}
	if !sentBack {
		t.Errorf("no agent was sent back with the regression")
	}
}

// fileByGate runs orchestrate gate on the buggy tree, which fails and
// files one issue per failing test (per gate for gates of one test), and
// checks that it filed as many as there are bugs.
func (r *realRepo) fileByGate() {
	r.t.Helper()
	out, code := r.orchestrate("gate")
	if code == 0 {
		r.t.Fatalf("orchestrate gate passed on %d bugs:\n%s", len(r.rp.bugs), out)
	}
	if n := r.openIssues(); n != len(r.rp.bugs) {
		r.t.Errorf("orchestrate gate filed %d issues for %d failing tests; want one per test:\n%s", n, len(r.rp.bugs), r.readFile(".orchestrator/issue_queue.md"))
	}
}

// countGoRuns puts a go on PATH that notes each go test it runs with the
// tree it runs on, and returns a function that counts those on the tree
// of the bugs (the tree the run starts from).
func (r *realRepo) countGoRuns() func() int {
	r.t.Helper()
	realGo, err := exec.LookPath("go")
	if err != nil {
		r.t.Fatal(err)
	}
	var files []string
	for _, b := range r.rp.bugs {
		files = append(files, shQuote(b.file))
	}
	sum := "cat " + strings.Join(files, " ") + " | cksum"
	log := filepath.Join(r.root, "go-runs")
	r.writeFile(filepath.Join(r.root, "bin", "go"),
		fmt.Sprintf("#!/bin/sh\n[ \"$1\" != test ] || echo \"$(%s)\" >> %s\nexec %s \"$@\"\n", sum, shQuote(log), shQuote(realGo)))
	if err := os.Chmod(filepath.Join(r.root, "bin", "go"), 0o755); err != nil {
		r.t.Fatal(err)
	}
	base, _ := r.run("sh", "-c", sum)
	return func() int {
		data, _ := os.ReadFile(log)
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" && line == strings.TrimSpace(base) {
				n++
			}
		}
		return n
	}
}

// newPythonRepo is humanize with its three bugs, pytest on PATH.
func newPythonRepo(t *testing.T) *realRepo {
	t.Helper()
	pytest := pytestRunner.need(t, func(p string) error {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "test_runner.py"), []byte("import freezegun\n\ndef test_runner():\n    pass\n"), 0o644); err != nil {
			return err
		}
		cmd := exec.Command(p, "-q", "-p", "no:cacheprovider", "test_runner.py")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
	r := newRealRepo(t, pyHumanize)
	if err := os.Symlink(pytest, filepath.Join(r.root, "bin", "pytest")); err != nil {
		t.Fatal(err)
	}
	return r
}

// newJavaScriptRepo is ufo with its three bugs, vitest in a node_modules
// above the repository and its worktrees (node and npm look up the
// directories), npm on PATH.
func newJavaScriptRepo(t *testing.T) *realRepo {
	t.Helper()
	modules := vitestRunner.need(t, func(p string) error {
		out, err := exec.Command(filepath.Join(p, ".bin", "vitest"), "--version").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
	r := newRealRepo(t, ufo)
	if err := os.Symlink(modules, filepath.Join(r.root, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return r
}
