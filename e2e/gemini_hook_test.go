package e2e

import (
	"regexp"
	"testing"
)

// geminiEdits runs Gemini CLI headless in the project as a person would,
// with the prompt on stdin and edits allowed, the hooks init --agent
// gemini wrote in .gemini/settings.json in force.
func (p *project) geminiEdits(prompt string) (string, int) {
	p.t.Helper()
	return p.exec(p.Dir, prompt, "gemini", "--output-format", "json", "--approval-mode", "auto_edit")
}

// Gemini CLI's AfterAgent hook that init --agent gemini writes: gemini
// says it is done, the gate fails, the hook sends it back with the
// feedback, it fixes the file, the issue is resolved.
func TestGeminiAfterAgentHookFixes(t *testing.T) {
	m := newModel(t, route{"HOOKFIX", fixInSteps})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")

	out, code := p.geminiEdits("HOOKFIX: make check.sh pass")
	if code != 0 {
		t.Fatalf("gemini: exit %d\n%s\n%s", code, out, m.dump(1500))
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q; want the fix the feedback led to\n%s", got, m.dump(1500))
	}
	if n := len(hookFeedback(m, "HOOKFIX")); n != 1 {
		t.Errorf("the model got the hook's feedback %d times; want 1", n)
	}
	q := p.read(".orchestrator/issue_queue.md")
	if !regexp.MustCompile(`(?i)\|\s*status\s*\|\s*resolved\s*\|`).MatchString(q) {
		t.Errorf("the hook's issue is not resolved:\n%s", q)
	}
}

// The AfterAgent hook when gemini never fixes it: blocked twice, then the
// third identical failure halts the issue and the hook lets gemini stop.
func TestGeminiAfterAgentHookHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", func(c *conv) turn {
		if c.answered() {
			return say("Done.")
		}
		return turn{Tools: []tool{write("state.txt", "fixed=1\n")}}
	}})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")

	out, code := p.geminiEdits("NEVER: make check.sh pass")
	if code != 0 {
		t.Fatalf("gemini: exit %d\n%s", code, out)
	}
	if n := len(hookFeedback(m, "NEVER")); n != 2 {
		t.Errorf("the model got the hook's feedback %d times; want 2, then the halt let it stop\n%s", n, m.dump(1500))
	}
	q := p.read(".orchestrator/issue_queue.md")
	if !regexp.MustCompile(`(?i)\|\s*status\s*\|\s*stuck\s*\|`).MatchString(q) || !regexp.MustCompile(`(?i)\|\s*halted\s*\|\s*true\s*\|`).MatchString(q) {
		t.Errorf("the issue is not halted:\n%s", q)
	}
}

// gemini never fixes it, under orchestrate run: the same failure three
// times halts the issue and the run stops for a person (exit 11).
func TestGeminiRunHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", func(c *conv) turn {
		if c.answered() {
			return say("Done.")
		}
		return turn{Tools: []tool{write("state.txt", "fixed=1\n")}}
	}})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("retry:\n  strategy: same\nagent:\n  profile: gemini\ngates:\n  - name: check\n    command: sh check.sh\n")

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
