package jsonsettings

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMergeMCPServer(t *testing.T) {
	server := json.RawMessage(`{"command":"orchestrate","args":["mcp"]}`)
	out, changed, err := MergeMCPServer([]byte(`{"theme": "dark", "mcpServers": {"other": {"command": "x"}}, "hooks": {}}`), "orchestrate", server)
	if err != nil || !changed {
		t.Fatalf("merge: %v, %v", changed, err)
	}
	s := string(out)
	if !HasMCPServer(out, "orchestrate") || !HasMCPServer(out, "other") ||
		strings.Index(s, `"theme"`) > strings.Index(s, `"mcpServers"`) || strings.Index(s, `"mcpServers"`) > strings.Index(s, `"hooks"`) {
		t.Errorf("merged:\n%s", out)
	}
	again, changed, err := MergeMCPServer(out, "orchestrate", json.RawMessage(`{"command":"y"}`))
	if err != nil || changed || string(again) != s {
		t.Errorf("a second merge changed the file: %v, %v\n%s", changed, err, again)
	}
	if _, _, err := MergeMCPServer([]byte(`{"mcpServers": []}`), "orchestrate", server); err == nil {
		t.Error("mcpServers that is not an object: no error")
	}
	if _, _, err := MergeMCPServer([]byte(`not json`), "orchestrate", server); err == nil {
		t.Error("a file that is not JSON: no error")
	}
	if out, _, _ := MergeMCPServer([]byte(`{}`), "orchestrate", server); !HasMCPServer(out, "orchestrate") || HasMCPServer([]byte(`{`), "orchestrate") {
		t.Errorf("from an empty object:\n%s", out)
	}
}
