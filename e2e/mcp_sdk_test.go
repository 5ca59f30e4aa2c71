package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mcpSDKDir is the node_modules directory that holds the official
// TypeScript MCP SDK (npm @modelcontextprotocol/sdk):
// $ORCHESTRATE_MCP_SDK, or the copy .ci/run installs in .cache/mcp-sdk/;
// "" when it is not there, or node is not on PATH.
func mcpSDKDir() string {
	modules := os.Getenv("ORCHESTRATE_MCP_SDK")
	if modules == "" {
		modules = filepath.Join("..", ".cache", "mcp-sdk", "node_modules")
	}
	modules, err := filepath.Abs(modules)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return ""
	}
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	return modules
}

// mcpSDK skips the test without the SDK, unless
// ORCHESTRATE_REQUIRE_MCP_SDK=1 (CI) makes that a failure.
func mcpSDK(t *testing.T) (node, modules string) {
	t.Helper()
	modules = mcpSDKDir()
	if modules == "" {
		if os.Getenv("ORCHESTRATE_REQUIRE_MCP_SDK") == "1" {
			t.Fatal("ORCHESTRATE_REQUIRE_MCP_SDK=1 but node or the TypeScript MCP SDK is missing (npm install --prefix .cache/mcp-sdk @modelcontextprotocol/sdk, or set ORCHESTRATE_MCP_SDK to its node_modules)")
		}
		t.Skip("node or the TypeScript MCP SDK is missing (npm install --prefix .cache/mcp-sdk @modelcontextprotocol/sdk, or set ORCHESTRATE_MCP_SDK to its node_modules); set ORCHESTRATE_REQUIRE_MCP_SDK=1 to fail instead")
	}
	node, _ = exec.LookPath("node")
	return node, modules
}

// mcpCall is one line of the client's report.
type mcpCall struct {
	Tool       string          `json:"tool"`
	Args       map[string]any  `json:"args"`
	IsError    bool            `json:"isError"`
	Structured json.RawMessage `json:"structured"`
	Text       string          `json:"text"`
}

// TestTypeScriptClient drives orchestrate mcp with the official MCP
// client of another language, the TypeScript SDK: it lists the tools,
// calls each one in a scratch repository, and finds the results in the
// files; bad arguments are tool errors.
func TestTypeScriptClient(t *testing.T) {
	node, modules := mcpSDK(t)
	repo := t.TempDir()
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("git", "init", "-q")
	run(orchestrateBin, "init")
	config := "gates:\n  - name: unit\n    command: 'test -e fixed || { echo \"calc_test.go:12: got 3, want 4\"; exit 1; }'\n    auto_retry: true\n"
	if err := os.WriteFile(filepath.Join(repo, ".orchestrator", "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "mcp-client.mjs"))
	// The script is copied beside the SDK, where node resolves its imports.
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(filepath.Dir(modules), "orchestrate-mcp-client-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	local := f.Name()
	defer os.Remove(local)
	if _, err := f.Write(data); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, local, orchestrateBin, repo)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, out)
	}
	calls := map[string][]mcpCall{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c mcpCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		calls[c.Tool] = append(calls[c.Tool], c)
	}
	checkTSTools(t, calls)
	checkTSFiles(t, repo, calls)
}

// checkTSTools checks the tools the client listed, and that each call
// but the bad ones succeeded.
func checkTSTools(t *testing.T, calls map[string][]mcpCall) {
	t.Helper()
	var tools []struct {
		Name     string `json:"name"`
		ReadOnly bool   `json:"readOnly"`
		Output   bool   `json:"output"`
	}
	if len(calls["tools/list"]) != 1 || json.Unmarshal(calls["tools/list"][0].Structured, &tools) != nil || len(tools) != 12 {
		t.Fatalf("tools/list: %+v", calls["tools/list"])
	}
	for _, tool := range tools {
		read := tool.Name == "status" || tool.Name == "issue_show" || tool.Name == "history_summary"
		if tool.ReadOnly != read || !tool.Output {
			t.Errorf("tool %+v: readOnlyHint should be %v, with an output schema", tool, read)
		}
		if len(calls[tool.Name]) == 0 {
			t.Errorf("the client did not call %s", tool.Name)
		}
	}
	bad := map[string]int{"issue_show": 2, "issue_add": 1, "claim_renew": 1, "decide": 1, "gates": 1}
	for name, cs := range calls {
		for i, c := range cs {
			wantErr := name != "tools/list" && i >= len(cs)-bad[name]
			if c.IsError != wantErr {
				t.Errorf("%s %v: isError %v, want %v: %s", name, c.Args, c.IsError, wantErr, c.Text)
			}
		}
	}
}

// checkTSFiles finds what the calls did in the queue and the history.
func checkTSFiles(t *testing.T, repo string, calls map[string][]mcpCall) {
	t.Helper()
	q, _ := os.ReadFile(filepath.Join(repo, ".orchestrator", "issue_queue.md"))
	h, _ := os.ReadFile(filepath.Join(repo, ".orchestrator", "history.csv"))
	for _, want := range []string{"Parser drops tabs", "parse_test.go:9: tab lost", "| Status | resolved |", "| Status | skipped |",
		"Looks right.", "| Approved | true |", "Quality gate unit failed"} {
		if !strings.Contains(string(q), want) {
			t.Errorf("issue_queue.md lacks %q:\n%s", want, q)
		}
	}
	if strings.ContainsRune(string(q), '\a') {
		t.Error("a control byte reached the queue")
	}
	for _, want := range []string{",issue_add,", ",claim,", ",record,", ",resolve,", ",skip,", ",approval,", ",gate,"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("history.csv lacks %q:\n%s", want, h)
		}
	}
	var g struct {
		Passed   bool `json:"passed"`
		Recorded bool `json:"recorded"`
		Results  []struct {
			Name, Outcome string
		} `json:"results"`
	}
	if gs := calls["gates"]; len(gs) < 2 || json.Unmarshal(gs[0].Structured, &g) != nil || g.Passed || g.Recorded || len(g.Results) != 1 || g.Results[0].Outcome != "fail" {
		t.Errorf("gates: %+v", calls["gates"])
	}
}
