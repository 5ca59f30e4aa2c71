package e2e

import (
	"strings"
	"testing"
)

// The scenarios with the real opencode (opencode run), against the
// scripted model's Chat Completions API.

// orchestrate run with what init --agent opencode writes: opencode runs the
// project's check, edits the file through its bash tool, the gates pass,
// the run exits 0, and history.csv has what opencode reported of its use.
func TestOpencodeRunWithInitDefaults(t *testing.T) {
	m := newModel(t, route{"FIXCALC", fixCalc})
	p := newAgentProject(t, m, opencodeCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "opencode")
	reqs := runFixCalc(t, p, m, "opencode")
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

	runResumes(t, p, m)
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
	m := newModel(t, route{"NEVER", neverFixes})
	p := newAgentProject(t, m, opencodeCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "opencode")
	p.config(opencodeSteps)
	runHalts(t, p, m)
}
