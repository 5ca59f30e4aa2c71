package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real Gemini CLI calls the gates tool of the MCP server (the one init
// --agent gemini --mcp registers in .gemini/settings.json, or the one its
// extension ships), mid-turn, fixes its work from the structured result,
// checks again, and stops: its AfterAgent hook lets it go at once, without
// running the gates a second time on the tree they just passed on.

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
	for _, from := range []string{"settings", "extension"} {
		extension := from == "extension"
		// Unchanged since the passing check: the stop runs no gate.
		t.Run(from+"/unchanged", func(t *testing.T) { geminiMCPMidTurn(t, "MCPMIDTURN", 2, extension) })
		// Changed since: the stop runs the gates (and so the hook is
		// there to run them).
		t.Run(from+"/changed", func(t *testing.T) { geminiMCPMidTurn(t, "MCPMIDTURN EDITAFTER", 3, extension) })
	}
}

// geminiMCPMidTurn runs the scenario with Gemini CLI, whose prompt starts
// with prompt, and wants the gate run runs times in all. The server and
// the hooks are the repository's settings' (init --agent gemini --mcp),
// or with extension the installed extension's.
func geminiMCPMidTurn(t *testing.T, prompt string, runs int, extension bool) {
	m := newModel(t, route{"MCPMIDTURN", checksMidTurn})
	p := newAgentProject(t, m, geminiCLI, midTurnProject)
	if extension {
		p.installGeminiExtension()
		p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")
		if _, err := os.Stat(p.path(".gemini")); err == nil {
			t.Fatalf("orchestrate init wrote .gemini/; the extension's server and hooks are the only ones wanted here")
		}
	} else {
		p.mustOrchestrate("init", "--agent", "gemini", "--mcp")
		p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	}
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

// installGeminiExtension installs the Gemini CLI extension of the
// repository's work tree in the project's home, as a person does (who
// answers yes to its question).
func (p *project) installGeminiExtension() {
	p.t.Helper()
	src := filepath.Join(pluginSource(p.t), "gemini-extension")
	out, code := p.exec(p.Dir, "y\n", "gemini", "extensions", "install", src, "--consent")
	if code != 0 || !strings.Contains(out, `Extension "orchestrate" installed successfully and enabled.`) {
		p.t.Fatalf("gemini extensions install: exit %d\n%s", code, out)
	}
}
