package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
)

// mcpServerName is the name the MCP server has in a client's settings.
const mcpServerName = "orchestrate"

// mcpServerSpec is the server's entry in a client's mcpServers.
var mcpServerSpec = json.RawMessage(`{"command":"orchestrate","args":["mcp"]}`)

// mcpProjectFiles are the project settings files that hold a client's MCP
// servers (mcpServers), by agent: init --agent NAME --mcp registers the
// server there. Codex keeps its servers in TOML (codex mcp add).
var mcpProjectFiles = map[string]string{
	agentcli.Claude: ".mcp.json",
	agentcli.Gemini: ".gemini/settings.json",
	agentcli.Cursor: ".cursor/mcp.json",
}

// codexMCPAdd is how Codex is given the server.
const codexMCPAdd = "codex mcp add orchestrate -- orchestrate mcp"

// registerMCP registers the MCP server for each agent that keeps its
// servers in a project file, merged with what is there (every other key
// and server kept; a server of that name left as it is). With check, it
// only finds what is wrong with the files, and writes nothing.
func registerMCP(repo string, agents []string, check bool) (written, kept, notes []string, err error) {
	for _, agent := range agents {
		rel, ok := mcpProjectFiles[agent]
		if !ok {
			if agent == agentcli.Codex {
				notes = append(notes, "codex: give it the MCP server with "+codexMCPAdd)
			}
			continue
		}
		path := filepath.Join(repo, filepath.FromSlash(rel))
		old, exists, err := fsx.ReadFile(path)
		if err != nil {
			return nil, nil, nil, err
		}
		if !exists {
			old = []byte("{}")
		}
		data, changed, err := jsonsettings.MergeMCPServer(old, mcpServerName, mcpServerSpec)
		switch {
		case err != nil:
			return nil, nil, nil, fmt.Errorf("%s: %v; fix it, or add the MCP server by hand (see docs/mcp.md)", path, err)
		case check:
		case !changed:
			kept = append(kept, path)
		default:
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, nil, nil, err
			}
			if err := fsx.WriteFile(path, data, 0o644); err != nil {
				return nil, nil, nil, err
			}
			written = append(written, path)
		}
	}
	return written, kept, notes, nil
}

// mcpClientFiles are the files where each client may hold the server: the
// repository's and the user's settings, and the extension Gemini CLI
// installs; Codex's config.toml is read as text.
func (d *doctor) mcpClientFiles() map[string][]string {
	files := map[string][]string{}
	for agent, rel := range mcpProjectFiles {
		files[agent] = append(files[agent], filepath.Join(d.repo, filepath.FromSlash(rel)))
	}
	if d.home != "" {
		files[agentcli.Claude] = append(files[agentcli.Claude], filepath.Join(d.home, ".claude.json"))
		files[agentcli.Gemini] = append(files[agentcli.Gemini], filepath.Join(d.home, ".gemini", "settings.json"),
			filepath.Join(d.home, ".gemini", "extensions", "orchestrate", "gemini-extension.json"))
		files[agentcli.Cursor] = append(files[agentcli.Cursor], filepath.Join(d.home, ".cursor", "mcp.json"))
	}
	codexHome := os.Getenv("CODEX_HOME")
	if codexHome == "" && d.home != "" {
		codexHome = filepath.Join(d.home, ".codex")
	}
	files[agentcli.Codex] = []string{filepath.Join(d.repo, ".codex", "config.toml")}
	if codexHome != "" {
		files[agentcli.Codex] = append(files[agentcli.Codex], filepath.Join(codexHome, "config.toml"))
	}
	return files
}

// codexMCPTable is Codex's table of the server in config.toml.
var codexMCPTable = regexp.MustCompile(`(?m)^\s*\[mcp_servers\.("?)orchestrate("?)\]`)

// mcp says, for each client, whether it has the MCP server and where:
// the Claude Code plugin ships it.
func (d *doctor) mcp() {
	files := d.mcpClientFiles()
	for _, agent := range []string{agentcli.Claude, agentcli.Codex, agentcli.Gemini, agentcli.Cursor} {
		where := ""
		if agent == agentcli.Claude && d.plugged {
			where = "the Claude Code plugin"
		}
		for _, f := range files[agent] {
			data, ok, err := fsx.ReadFile(f)
			if where != "" || err != nil || !ok {
				continue
			}
			if agent == agentcli.Codex && codexMCPTable.Match(data) || agent != agentcli.Codex && jsonsettings.HasMCPServer(data, mcpServerName) {
				where = f
			}
		}
		if where != "" {
			d.add("mcp", "ok", agent+" has the MCP server orchestrate mcp, from "+where, "")
			continue
		}
		fix := "orchestrate init --agent " + agent + " --mcp"
		if agent == agentcli.Codex {
			fix = codexMCPAdd
		}
		d.add("mcp", "note", agent+" does not have the MCP server orchestrate mcp", fix)
	}
}

// checkInitMCP checks init --mcp before anything is written: it needs an
// agent, and each client's file must be one it can merge with.
func checkInitMCP(repo string, agents []string, withMCP bool) error {
	if !withMCP {
		return nil
	}
	if len(agents) == 0 {
		return usageError("init", "init --mcp registers the MCP server for an agent: give --agent NAME")
	}
	_, _, _, err := registerMCP(repo, agents, true)
	return err
}
