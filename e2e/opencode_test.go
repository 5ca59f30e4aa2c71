package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/analytics"
)

// The scenarios with the real opencode (opencode run), against the
// scripted model's Chat Completions API.

// orchestrate run with what init --agent opencode writes: opencode runs the
// project's check, edits the file through its bash tool, the gates pass,
// the run exits 0, and history.csv has what opencode reported of its use.
func TestOpencodeRunWithInitDefaults(t *testing.T) {
	m := newModel(t, route{"FIXCALC", func(c *conv) turn {
		switch c.calls() {
		case 0:
			return turn{Text: "Let me run the tests first.", Tools: []tool{bash("go test ./...")}}
		case 1:
			return turn{Text: "Add subtracts; it should add.", Tools: []tool{write("calc.go", calcFixed)}}
		}
		return say("Add adds now.")
	}})
	p := newAgentProject(t, m, opencodeCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "opencode")

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
		t.Errorf("opencode's go test ./... never ran; the last request:\n%s", tail(reqs[len(reqs)-1].all(), 3000))
	}
	us := p.usage()
	if len(us) != 1 {
		t.Fatalf("usage rows = %+v; want 1", us)
	}
	// opencode counts input tokens without the cached ones.
	u, n := us[0], int64(len(reqs))
	if !strings.HasPrefix(u.Session, "ses_") || u.Turns != n || u.InputTokens != n*(usageIn-usageCached) || u.OutputTokens != n*usageOut || u.CacheReadTokens != n*usageCached {
		t.Errorf("usage = %+v; want the session, %d steps, %d input, %d output and %d cached tokens", u, n, n*(usageIn-usageCached), n*usageOut, n*usageCached)
	}
}

// The opencode profile's gates and retries, with init's commands.
const opencodeSteps = "retry:\n  strategy: same\nagent:\n  profile: opencode\ngates:\n  - name: check\n    command: sh check.sh\n"

// The second loop resumes opencode's own session (opencode run --session
// ID): the model sees the first launch's conversation and the gate's
// feedback; each launch's usage row holds what that launch used.
func TestOpencodeResumeAndUsagePerLaunch(t *testing.T) {
	m := newModel(t, route{"STEPS", fixInSteps})
	p := newAgentProject(t, m, opencodeCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "opencode")
	p.config(opencodeSteps)

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
	for i, u := range us {
		if u.Turns != 2 || u.InputTokens != 2*(usageIn-usageCached) || u.OutputTokens != 2*usageOut || u.CacheReadTokens != 2*usageCached {
			t.Errorf("launch %d: usage %+v; want what its 2 steps used: %d input, %d output, %d cached tokens",
				i+1, u, 2*(usageIn-usageCached), 2*usageOut, 2*usageCached)
		}
	}
}

// opencode never fixes it: the same failure three times halts the issue
// and the run stops for a person (exit 11).
func TestOpencodeHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", func(c *conv) turn {
		if c.answered() {
			return say("Done.")
		}
		return turn{Tools: []tool{write("state.txt", "fixed=1\n")}}
	}})
	p := newAgentProject(t, m, opencodeCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "opencode")
	p.config(opencodeSteps)

	out, code := p.orchestrate("run", "--task", "NEVER: make check.sh pass")
	if code != 11 {
		t.Fatalf("orchestrate run: exit %d; want 11\n%s\n%s", code, out, m.dump(1500))
	}
	q := p.read(".orchestrator/issue_queue.md")
	if !regexp.MustCompile(`(?i)\|\s*halted\s*\|\s*true\s*\|`).MatchString(q) {
		t.Errorf("the issue is not halted:\n%s", q)
	}
	if n := len(p.usage()); n != 3 {
		t.Errorf("%d usage rows; want 3, one per launch", n)
	}
}
