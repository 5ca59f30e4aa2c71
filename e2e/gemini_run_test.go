package e2e

import (
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/analytics"
)

// orchestrate run with Gemini CLI and what init --agent gemini writes, in a
// folder the person trusted: gemini writes the fix (write_file, which
// auto_edit allows), the check fails once, the second loop resumes gemini's
// own session, the check passes; each launch's usage row holds what it
// used.
func TestGeminiRunResumeAndUsage(t *testing.T) {
	m := newModel(t, route{"STEPS", fixInSteps})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("retry:\n  strategy: same\nagent:\n  profile: gemini\ngates:\n  - name: check\n    command: sh check.sh\n")

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
	us := p.usage()
	if len(us) != 2 || us[0].Session == "" || us[1].Session != us[0].Session {
		t.Fatalf("usage rows = %+v; want two, of one session", us)
	}
	// Each launch: two requests of the agent, and one of Gemini CLI's
	// model router (a generateContent that classifies the prompt), which
	// it counts too.
	for i, u := range us {
		if u.Turns != 3 || u.InputTokens != 3*usageIn || u.OutputTokens != 3*usageOut || u.CacheReadTokens != 3*usageCached {
			t.Errorf("launch %d: usage %+v; want what its 3 requests used: %d input, %d output, %d cached tokens", i+1, u, 3*usageIn, 3*usageOut, 3*usageCached)
		}
	}
}

// orchestrate run with what init --agent gemini writes: gemini runs the
// project's check (headless, Gemini CLI offers its shell tool only for what
// --allowed-tools allows: the profile allows the gates' commands) and
// fixes the file, the gates pass.
func TestGeminiRunWithInitDefaults(t *testing.T) {
	m := newModel(t, route{"FIXCALC", func(c *conv) turn {
		switch c.calls() {
		case 0:
			return turn{Text: "Let me run the tests first.", Tools: []tool{bash("go test ./...")}}
		case 1:
			return turn{Text: "Add subtracts; it should add.", Tools: []tool{write("calc.go", calcFixed)}}
		}
		return say("Add adds now.")
	}})
	p := newAgentProject(t, m, geminiCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "gemini")

	out, code := p.orchestrate("run", "--task", "FIXCALC: make the tests pass")
	if code != 0 {
		t.Fatalf("orchestrate run: exit %d\n%s\n%s", code, out, m.dump(3000))
	}
	if got := p.read("calc.go"); got != calcFixed {
		t.Errorf("calc.go after the run:\n%s", got)
	}
	reqs := m.requests("FIXCALC")
	var ranTests bool
	for _, c := range reqs {
		if strings.Contains(c.last(), "Add(2, 3) = -1, want 5") {
			ranTests = true
		}
	}
	if !ranTests {
		t.Errorf("gemini's go test ./... never ran; the last request:\n%s", tail(reqs[len(reqs)-1].all(), 3000))
	}
}
