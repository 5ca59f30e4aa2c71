package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/analytics"
)

// The scenarios every agent CLI goes through, each with its own launch:
// the scripted model's part, and what the test checks after.

// fixCalc is an agent that runs the project's tests, then fixes calc.go.
func fixCalc(c *conv) turn {
	switch c.calls() {
	case 0:
		return turn{Text: "Let me run the tests first.", Tools: []tool{bash("go test ./...")}}
	case 1:
		return turn{Text: "Add subtracts; it should add.", Tools: []tool{write("calc.go", calcFixed)}}
	}
	return say("Add adds now.")
}

// neverFixes is an agent that writes the same wrong state.txt every time.
func neverFixes(c *conv) turn {
	if c.answered() {
		return say("Done.")
	}
	return turn{Tools: []tool{write("state.txt", "fixed=1\n")}}
}

// runFixCalc runs orchestrate run on the calc project with what init wrote
// for the agent: the run exits 0, calc.go is fixed, and the agent's own go
// test ran (the defaults let it run the gates' commands). It returns the
// agent's requests.
func runFixCalc(t *testing.T, p *project, m *model, agent string) []*conv {
	t.Helper()
	out, code := p.orchestrate("run", "--task", "FIXCALC: make the tests pass")
	if code != 0 {
		t.Fatalf("orchestrate run: exit %d\n%s\n%s", code, out, m.dump(3000))
	}
	if got := p.read("calc.go"); got != calcFixed {
		t.Errorf("calc.go after the run:\n%s", got)
	}
	reqs := m.requests("FIXCALC")
	if len(reqs) == 0 {
		t.Fatalf("%s sent no request\n%s", agent, m.dump(3000))
	}
	for _, c := range reqs {
		if strings.Contains(c.last(), "requires approval") || strings.Contains(c.last(), "haven't granted") {
			t.Errorf("a tool call was refused: %s", c.last())
		}
		if strings.Contains(c.last(), "Add(2, 3) = -1, want 5") {
			return reqs
		}
	}
	t.Errorf("%s's go test ./... never ran; the last request:\n%s", agent, tail(reqs[len(reqs)-1].all(), 3000))
	return reqs
}

// wantHalted checks that the queue's issue is halted, and, when stuck, that
// it waits for a person.
func wantHalted(t *testing.T, p *project, stuck bool) {
	t.Helper()
	q := p.read(".orchestrator/issue_queue.md")
	if !regexp.MustCompile(`(?i)\|\s*halted\s*\|\s*true\s*\|`).MatchString(q) ||
		stuck && !regexp.MustCompile(`(?i)\|\s*status\s*\|\s*stuck\s*\|`).MatchString(q) {
		t.Errorf("the issue is not halted:\n%s", q)
	}
}

// wantResolved checks that the queue's issue is resolved.
func wantResolved(t *testing.T, p *project) {
	t.Helper()
	if q := p.read(".orchestrator/issue_queue.md"); !regexp.MustCompile(`(?i)\|\s*status\s*\|\s*resolved\s*\|`).MatchString(q) {
		t.Errorf("the issue is not resolved:\n%s", q)
	}
}

// runHalts runs orchestrate run with an agent that never fixes it: the same
// failure three times halts the issue and the run stops for a person (exit
// 11), with one usage row per launch.
func runHalts(t *testing.T, p *project, m *model) {
	t.Helper()
	out, code := p.orchestrate("run", "--task", "NEVER: make check.sh pass")
	if code != 11 {
		t.Fatalf("orchestrate run: exit %d; want 11\n%s\n%s", code, out, m.dump(1500))
	}
	wantHalted(t, p, false)
	if n := len(p.usage()); n != 3 {
		t.Errorf("%d usage rows; want 3, one per launch", n)
	}
}

// hookFixes checks a Stop hook's loop after the agent's session (stepsProject,
// fixInSteps): it was sent back once with the feedback, fixed the file, and
// the issue is resolved.
func hookFixes(t *testing.T, p *project, m *model, out string, code int) {
	t.Helper()
	if code != 0 {
		t.Fatalf("the agent: exit %d\n%s\n%s", code, out, m.dump(1500))
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q; want the fix the feedback led to", got)
	}
	if n := len(hookFeedback(m, "HOOKFIX")); n != 1 {
		t.Errorf("the model got the hook's feedback %d times; want 1", n)
	}
	wantResolved(t, p)
}

// hookHalts checks a Stop hook's loop after an agent that never fixes it:
// blocked twice, then the third identical failure halts the issue and the
// hook lets the agent stop.
func hookHalts(t *testing.T, p *project, m *model, out string, code int) {
	t.Helper()
	if code != 0 {
		t.Fatalf("the agent: exit %d\n%s", code, out)
	}
	if n := len(hookFeedback(m, "NEVER")); n != 2 {
		t.Errorf("the model got the hook's feedback %d times; want 2, then the halt let it stop\n%s", n, m.dump(1500))
	}
	wantHalted(t, p, true)
}

// runResumes runs orchestrate run with an agent that fixes it in two steps
// (stepsProject, fixInSteps): the first loop's agent is fresh, the second
// resumes it, and the resumed session holds the first launch and the
// gate's feedback. It returns the agent's requests (two a launch).
func runResumes(t *testing.T, p *project, m *model) []*conv {
	t.Helper()
	out, code := p.orchestrate("run", "--task", "STEPS: make check.sh pass")
	if code != 0 {
		t.Fatalf("orchestrate run: exit %d\n%s\n%s", code, out, m.dump(2000))
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q", got)
	}
	var agents []string
	for _, row := range p.history() {
		if row["event"] == analytics.EventAgent {
			agents = append(agents, strings.SplitN(row["detail"], ":", 2)[0])
		}
	}
	if strings.Join(agents, ",") != "fresh,resumed" {
		t.Errorf("agents = %q; want fresh, then resumed", agents)
	}
	reqs := m.requests("STEPS")
	if len(reqs) != 4 {
		t.Fatalf("%d requests; want 4\n%s", len(reqs), m.dump(1500))
	}
	if last := reqs[3]; !strings.Contains(last.all(), "fixed=1") || !strings.Contains(last.all(), "fixed=1, want fixed=2") {
		t.Errorf("the resumed session does not hold the first launch and the feedback:\n%s", tail(last.all(), 3000))
	}
	return reqs
}
