package orchestrate_test

import (
	"slices"
	"testing"
)

// The Claude Code plugin and the Gemini CLI extension ship the MCP
// server: orchestrate mcp, found on PATH as their hooks find orchestrate.
func TestManifestsShipMCPServer(t *testing.T) {
	for _, file := range []string{".claude-plugin/plugin.json", "gemini-extension/gemini-extension.json"} {
		var m struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		readJSON(t, file, &m)
		s, ok := m.MCPServers["orchestrate"]
		if !ok || s.Command != "orchestrate" || !slices.Equal(s.Args, []string{"mcp"}) {
			t.Errorf("%s: mcpServers.orchestrate is %+v; want orchestrate mcp", file, m.MCPServers)
		}
	}
}
