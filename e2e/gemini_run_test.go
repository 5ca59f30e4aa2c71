package e2e

import "testing"

// orchestrate run with Gemini CLI and what init --agent gemini writes, in a
// folder the person trusted: gemini writes the fix (write_file, which
// auto_edit allows), the check fails once, the second loop resumes gemini's
// own session, the check passes; each launch's usage row holds what it
// used.
func TestGeminiRunResumeAndUsage(t *testing.T) {
	m := newModel(t, route{"STEPS", fixInSteps})
	p := newAgentProject(t, m, geminiCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	p.config(geminiSteps)

	runResumes(t, p, m)
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
	m := newModel(t, route{"FIXCALC", fixCalc})
	p := newAgentProject(t, m, geminiCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "gemini")
	runFixCalc(t, p, m, "gemini")
}
