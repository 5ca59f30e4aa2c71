package e2e

import "testing"

// geminiEdits runs Gemini CLI headless in the project as a person would,
// with the prompt on stdin and edits allowed, the hooks init --agent
// gemini wrote in .gemini/settings.json in force.
func (p *project) geminiEdits(prompt string) (string, int) {
	p.t.Helper()
	return p.exec(p.Dir, prompt, "gemini", "--output-format", "json", "--approval-mode", "auto_edit")
}

// The gemini profile's gates and retries, with init's commands.
const geminiSteps = "retry:\n  strategy: same\nagent:\n  profile: gemini\ngates:\n  - name: check\n    command: sh check.sh\n"

// Gemini CLI's AfterAgent hook that init --agent gemini writes: gemini
// says it is done, the gate fails, the hook sends it back with the
// feedback, it fixes the file, the issue is resolved.
func TestGeminiAfterAgentHookFixes(t *testing.T) {
	m := newModel(t, route{"HOOKFIX", fixInSteps})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	out, code := p.geminiEdits("HOOKFIX: make check.sh pass")
	hookFixes(t, p, m, out, code)
}

// The AfterAgent hook when gemini never fixes it: blocked twice, then the
// third identical failure halts the issue and the hook lets gemini stop.
func TestGeminiAfterAgentHookHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", neverFixes})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	out, code := p.geminiEdits("NEVER: make check.sh pass")
	hookHalts(t, p, m, out, code)
}

// gemini never fixes it, under orchestrate run: the same failure three
// times halts the issue and the run stops for a person (exit 11).
func TestGeminiRunHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", neverFixes})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config(geminiSteps)
	runHalts(t, p, m)
}
