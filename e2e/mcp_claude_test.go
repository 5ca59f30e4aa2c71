package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// The real Claude Code calls the gates tool of the MCP server its plugin
// ships, mid-turn, fixes its work from the structured result, checks
// again, and stops: its Stop hook lets it go at once, without running the
// gates a second time on the tree they just passed on.

// mcpGatesTool is the name the client gives the server's gates tool, as
// the request's tools list it (Claude Code's mcp__plugin_orchestrate_orchestrate__gates,
// Gemini CLI's mcp_orchestrate_gates); "" when it lists none.
func mcpGatesTool(c *conv) string {
	for _, t := range c.Tools {
		if strings.HasPrefix(t.Name, "mcp_") && strings.Contains(t.Name, "orchestrate") && strings.HasSuffix(t.Name, "_gates") {
			return t.Name
		}
	}
	return ""
}

// gatesPassed matches a passing gates result in a tool result's text, as
// the client passes it on: the JSON itself, or quoted in a JSON string.
var gatesPassed = regexp.MustCompile(`\\?"passed\\?":\s*true`)

// checksMidTurn writes a wrong fix, checks it with the gates tool, writes
// the fix the result asks for, checks again, and says it is done; in a
// conversation that says EDITAFTER, it changes a file after the passing
// check first.
func checksMidTurn(c *conv) turn {
	gates := mcpGatesTool(c)
	if gates == "" {
		return say("NO GATES TOOL")
	}
	check := turn{Tools: []tool{{gates, map[string]any{}}}}
	switch last := c.last(); {
	case strings.Contains(c.all(), "EDITED-AFTER-CHECK"):
		return say("Noted: done.")
	case !c.answered():
		return turn{Tools: []tool{write("state.txt", "fixed=1\n")}}
	case gatesPassed.MatchString(last) && strings.Contains(c.first(), "EDITAFTER"):
		return turn{Tools: []tool{write("notes.txt", "EDITED-AFTER-CHECK\n")}}
	case gatesPassed.MatchString(last):
		return say("The gates pass: done.")
	case strings.Contains(last, "want fixed=2"):
		return turn{Tools: []tool{write("state.txt", "fixed=2\n")}}
	case c.calls() > 6:
		return say("GIVING UP")
	default:
		return check
	}
}

func TestPluginMCPGatesMidTurn(t *testing.T) {
	// Unchanged since the passing check: the stop runs no gate.
	t.Run("unchanged", func(t *testing.T) { mcpMidTurn(t, "MCPMIDTURN", 2) })
	// Changed since: the stop runs the gates.
	t.Run("changed", func(t *testing.T) { mcpMidTurn(t, "MCPMIDTURN EDITAFTER", 3) })
}

// midTurnProject is the scenario's repository: the file to fix, and the
// gate, which notes each of its runs where the tree is not looked at (the
// workspace).
var midTurnProject = map[string]string{
	"state.txt": "fixed=0\n",
	"check.sh":  "#!/bin/sh\necho run >> .orchestrator/gate-runs\ngrep -qx fixed=2 state.txt || { echo \"state.txt: $(cat state.txt), want fixed=2\"; exit 1; }\n",
}

// mcpMidTurn runs the scenario whose prompt starts with prompt, and wants
// the gate run runs times in all.
func mcpMidTurn(t *testing.T, prompt string, runs int) {
	m := newModel(t, route{"MCPMIDTURN", checksMidTurn})
	p := newProject(t, m, midTurnProject)
	p.installPlugin()
	p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")
	// The server's tools offered with the others, not found by a search.
	p.env = append(p.env, "ENABLE_TOOL_SEARCH=false")

	out, code := p.claudeEdits(".", prompt+": make check.sh pass; check with the gates tool", "mcp__plugin_orchestrate_orchestrate")
	checkMidTurn(t, p, m, "claude", out, code, runs)
}

// checkMidTurn checks what the agent's run (its output and exit code) did:
// the fix the failing check led to, the gate run runs times in all, and
// no feedback from the stop.
func checkMidTurn(t *testing.T, p *project, m *model, agent, out string, code, runs int) {
	t.Helper()
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s", agent, code, out)
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q; want the fix the gates tool's result led to\n%s", got, out)
	}
	var tools []string
	var sawFailure bool
	for _, c := range m.requests("MCPMIDTURN") {
		for _, tl := range c.Tools {
			tools = append(tools, tl.Name)
		}
		sawFailure = sawFailure || strings.Contains(c.all(), "want fixed=2")
	}
	if !sawFailure {
		t.Errorf("the model never got the gates tool's failing result; the tools it was offered: %v\n%s", tools, out)
	}
	// Two checks mid-turn; the stop ran the gate only on a changed tree,
	// and sent nothing back.
	if got := strings.Count(p.read(".orchestrator/gate-runs"), "run\n"); got != runs {
		t.Errorf("the gate ran %d times; want %d (two checks mid-turn, and one at the stop only if the tree changed since)", got, runs)
	}
	if n := len(hookFeedback(m, "MCPMIDTURN")); n != 0 {
		t.Errorf("the stop hook sent feedback %d times; want none", n)
	}
	if t.Failed() {
		for _, c := range m.requests("MCPMIDTURN") {
			t.Logf("a request:\n%s", c.all())
		}
	}
}
