package jsonsettings

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MergeMCPServer adds the MCP server name to a client's settings file:
// mcpServers.NAME is server (Claude Code's .mcp.json, Gemini CLI's
// settings.json, Cursor's mcp.json). Every other key and server stays, in
// its order; a server of that name already there is left as it is, and
// changed is false.
func MergeMCPServer(data []byte, name string, server json.RawMessage) (out []byte, changed bool, err error) {
	top, err := objectMembers(data)
	if err != nil {
		return nil, false, err
	}
	at := memberIndex(top, "mcpServers")
	var servers []member
	if at >= 0 {
		if servers, err = objectMembers(top[at].value); err != nil {
			return nil, false, fmt.Errorf("mcpServers: %v", err)
		}
	}
	if memberIndex(servers, name) >= 0 {
		return data, false, nil
	}
	servers = append(servers, member{name, server})
	top = setMember(top, at, "mcpServers", encodeObject(servers))
	var b bytes.Buffer
	if err := json.Indent(&b, encodeObject(top), "", "  "); err != nil {
		return nil, false, err
	}
	b.WriteByte('\n')
	return b.Bytes(), true, nil
}

// HasMCPServer reports whether a client's settings file names the MCP
// server name in mcpServers; false for a file that is not a JSON object.
func HasMCPServer(data []byte, name string) bool {
	top, err := objectMembers(data)
	if err != nil {
		return false
	}
	at := memberIndex(top, "mcpServers")
	if at < 0 {
		return false
	}
	servers, err := objectMembers(top[at].value)
	return err == nil && memberIndex(servers, name) >= 0
}
