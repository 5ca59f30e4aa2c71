package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// The API refuses every request with its rate limit (429), as it does to
// an organization over its limit. Claude Code retries as it is set to
// (CLAUDE_CODE_MAX_RETRIES, here once), then gives up; orchestrate run
// tells that apart from an agent whose work fails the gates: it stops at
// once with exit 1 and one line that quotes the agent and says what to do,
// and counts nothing (no issue, no gate run, no retry of the task).
func TestRunStopsAtTheAPIRateLimit(t *testing.T) {
	m := newModel(t)
	m.refuse = http.StatusTooManyRequests
	p := newProject(t, m, calcProject)
	p.env = append(p.env, "CLAUDE_CODE_MAX_RETRIES=1")
	p.mustOrchestrate("init")

	out, code := p.orchestrate("run", "--task", "FIXCALC: make the tests pass")
	if code != 1 {
		t.Fatalf("orchestrate run: exit %d, want 1\n%s", code, out)
	}
	var errLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "orchestrate: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "rate limit") || !strings.Contains(errLines[0], `"API Error: Request rejected (429)`) ||
		!strings.Contains(errLines[0], "nothing was counted") {
		t.Errorf("the run's error, in one line that quotes the agent's 429 and says what to do:\n%s", out)
	}
	if n := len(m.requests("FIXCALC")); n < 1 || n > 2 {
		t.Errorf("%d requests reached the API; want the launch and its one retry", n)
	}
	if q := p.read(".orchestrator/issue_queue.md"); strings.Contains(q, "## ISSUE-") {
		t.Errorf("an issue was filed:\n%s", q)
	}
	events := map[string]int{}
	for _, l := range strings.Split(p.read(".orchestrator/history.csv"), "\n")[1:] {
		if f := strings.Split(l, ","); len(f) > 3 {
			events[f[3]]++
		}
	}
	if events["agent"] != 1 || events["gate"] != 0 || events["record"] != 0 || events["issue_add"] != 0 {
		t.Errorf("history: %v; want one agent launch, and no gate, record or issue row", events)
	}
}
