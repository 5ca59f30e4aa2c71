package e2e

import (
	"strings"
	"testing"
)

// The real Gemini CLI calls the gates tool of the MCP server init
// --agent gemini --mcp registers in .gemini/settings.json, mid-turn, fixes
// its work from the structured result, checks again, and stops: its
// AfterAgent hook lets it go at once, without running the gates a second
// time on the tree they just passed on.

// geminiMCPPolicy is the person's policy (~/.gemini/policies/) that lets
// Gemini CLI call the server's tools without asking: the rule its "allow
// all tools of this server" answer makes. A headless run cannot ask, and
// does not offer the model a tool that would.
const geminiMCPPolicy = `[[rule]]
toolName = "mcp_orchestrate_*"
decision = "allow"
priority = 100
`

func TestGeminiMCPGatesMidTurn(t *testing.T) {
	// Unchanged since the passing check: the stop runs no gate.
	t.Run("unchanged", func(t *testing.T) { geminiMCPMidTurn(t, "MCPMIDTURN", 2) })
	// Changed since: the stop runs the gates.
	t.Run("changed", func(t *testing.T) { geminiMCPMidTurn(t, "MCPMIDTURN EDITAFTER", 3) })
}

// geminiMCPMidTurn runs the scenario with Gemini CLI, whose prompt starts
// with prompt, and wants the gate run runs times in all.
func geminiMCPMidTurn(t *testing.T, prompt string, runs int) {
	m := newModel(t, route{"MCPMIDTURN", checksMidTurn})
	p := newAgentProject(t, m, geminiCLI, midTurnProject)
	p.mustOrchestrate("init", "--agent", "gemini", "--mcp")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	p.writeHome(".gemini/policies/orchestrate.toml", geminiMCPPolicy)

	out, code := p.geminiEdits(prompt + ": make check.sh pass; check with the gates tool")
	checkMidTurn(t, p, m, "gemini", out, code, runs)
	// The tool by the name Gemini CLI gives it: mcp_SERVER_TOOL.
	called := false
	for _, c := range m.requests("MCPMIDTURN") {
		called = called || strings.Contains(c.all(), "tool_use mcp_orchestrate_gates ")
	}
	if !called {
		t.Errorf("the model never called mcp_orchestrate_gates")
	}
}
