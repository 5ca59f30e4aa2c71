package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpWorkspace makes a workspace with two issues and the gates config.
func mcpWorkspace(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	ws, _ := claimWorkspace(t, dir, 2)
	if config != "" {
		if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// mcpServe starts orchestrate mcp as a process in the workspace ws, as a
// client starts it, and connects to it; stderr collects its logs.
func mcpServe(t *testing.T, ws string, env ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(orchestrateBin(t), "--dir", ws, "mcp")
	cmd.Env = append(os.Environ(), append([]string{"ORCHESTRATE_NO_BACKGROUND=1", "ORCHESTRATE_NOW=2024-12-13T10:00:00Z"}, env...)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// lockedBuffer is a buffer that a process's output is copied into while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpInProcess serves the workspace ws in this process, over the SDK's
// in-memory transport.
func mcpInProcess(t *testing.T, ws string) *mcp.ClientSession {
	t.Helper()
	t.Setenv("ORCHESTRATE_NO_BACKGROUND", "1")
	e := &env{ctx: context.Background(), stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, dir: ws}
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := newMCPServer(e).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); cancel() })
	return cs
}

// call calls a tool and decodes its structured result into out (if not
// nil); it fails the test on a protocol error, and on a tool error unless
// wantErr.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", name, args, toolText(res))
	}
	if out != nil {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, data)
		}
	}
	return res
}

// callErr calls a tool that must fail with a tool error whose text
// matches want.
func callErr(t *testing.T, cs *mcp.ClientSession, name string, args any, want string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: a protocol error, not a tool error: %v", name, args, err)
	}
	if !res.IsError || !strings.Contains(toolText(res), want) {
		t.Errorf("%s %v: isError %v, %q; want a tool error with %q", name, args, res.IsError, toolText(res), want)
	}
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func readQueue(t *testing.T, ws string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const mcpGatesConfig = `gates:
  - name: unit
    command: 'test -e fixed || { echo "calc_test.go:12: got 3, want 4"; exit 1; }'
    auto_retry: true
    max_retries: 3
  - name: build
    command: echo built
`

// TestMCPListTools checks the tools a client sees: each read tool
// read-only, with an output schema; each write tool not.
func TestMCPListTools(t *testing.T) {
	cs := mcpInProcess(t, mcpWorkspace(t, mcpGatesConfig))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		read := slices.Contains([]string{"status", "issue_show", "history_summary"}, tool.Name)
		if tool.Annotations == nil || tool.Annotations.ReadOnlyHint != read {
			t.Errorf("%s: readOnlyHint is not %v", tool.Name, read)
		}
		if tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: no output schema or description", tool.Name)
		}
	}
	want := []string{"approve", "claim", "claim_release", "claim_renew", "decide", "gates", "history_summary",
		"issue_add", "issue_show", "record_failure", "resolve", "status"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	schema, _ := json.Marshal(res.Tools[slices.Index(names, "status")].OutputSchema)
	for _, field := range []string{`"issues"`, `"claims"`, `"counts"`, `"session"`} {
		if !bytes.Contains(schema, []byte(field)) {
			t.Errorf("status's output schema lacks %s: %s", field, schema)
		}
	}
	prompts, err := cs.ListPrompts(context.Background(), nil)
	if err != nil || len(prompts.Prompts) == 0 {
		t.Fatalf("prompts: %v, %v", prompts, err)
	}
	got, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "feedback"})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("feedback prompt: %v, %v", got, err)
	}
	q, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "orchestrate://queue"})
	if err != nil || !strings.Contains(q.Contents[0].Text, "ISSUE-20241213-001") {
		t.Fatalf("the queue resource: %v, %v", q, err)
	}
}

// TestMCPTools calls each tool of orchestrate mcp, run as a client runs
// it, and finds what it did in the files.
func TestMCPTools(t *testing.T) {
	ws := mcpWorkspace(t, mcpGatesConfig)
	cs, stderr := mcpServe(t, ws)

	var st mcpStatus
	call(t, cs, "status", nil, &st)
	if len(st.Issues) != 2 || st.Counts["pending"] != 2 || st.Issues[0].Fields["Priority"] != "medium" {
		t.Fatalf("status: %+v", st)
	}

	// The gates, run without recording: no issue, no history row.
	before := readQueue(t, ws)
	var g mcpGates
	call(t, cs, "gates", map[string]any{}, &g)
	if g.Passed || g.Recorded || len(g.Results) != 2 || g.Results[0].Outcome != "fail" || !strings.Contains(g.Feedback, "got 3, want 4") {
		t.Fatalf("gates: %+v", g)
	}
	if readQueue(t, ws) != before {
		t.Errorf("gates with record false changed the queue")
	}
	// Recorded, as orchestrate gate does: the failure is an issue.
	call(t, cs, "gates", map[string]any{"record": true, "names": []string{"unit"}}, &g)
	if !g.Recorded || g.Results[0].Issue != "ISSUE-20241213-003" {
		t.Fatalf("gates recorded: %+v", g)
	}
	var is mcpIssue
	call(t, cs, "issue_show", map[string]any{"id": "ISSUE-20241213-003"}, &is)
	if is.Fields["Gate"] != "unit" || !strings.Contains(is.Sections["Failure Details"], "got 3, want 4") {
		t.Fatalf("issue_show: %+v", is)
	}

	mcpToolsWrite(t, cs, ws)

	var h mcpHistory
	call(t, cs, "history_summary", nil, &h)
	if h.Rows == 0 || h.IssuesFiled == 0 {
		t.Errorf("history_summary: %+v", h)
	}
	if s := stderr.String(); s != "" {
		t.Logf("stderr: %s", s)
	}
}

// mcpToolsWrite is the rest of TestMCPTools: the tools that change issues.
func mcpToolsWrite(t *testing.T, cs *mcp.ClientSession, ws string) {
	var added struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	call(t, cs, "issue_add", map[string]any{"summary": "The parser drops tabs", "priority": "high",
		"fields": map[string]string{"Auto-Retry": "true"}}, &added)
	if added.ID != "ISSUE-20241213-004" || !strings.Contains(readQueue(t, ws), "The parser drops tabs") {
		t.Fatalf("issue_add: %+v", added)
	}

	var c mcpClaimed
	call(t, cs, "claim", map[string]any{"as": "agent-1"}, &c)
	if !c.Claimed || (c.ID != "ISSUE-20241213-004" && c.ID != "ISSUE-20241213-003") || c.Epoch != 1 || !strings.HasPrefix(c.Holder, "agent-1@") {
		t.Fatalf("claim_next: %+v", c)
	}
	call(t, cs, "claim_renew", map[string]any{"id": c.ID, "epoch": 1, "as": "agent-1", "lease": "20m"}, &c)
	var rec struct {
		Signature string `json:"signature"`
		Count     int    `json:"signature_repeat_count"`
	}
	call(t, cs, "record_failure", map[string]any{"id": c.ID, "output": "parse_test.go:9: tab lost \x1b[31mred\x00\n", "exit_code": 1, "epoch": 1}, &rec)
	if rec.Count != 1 || !strings.Contains(readQueue(t, ws), "parse_test.go:9: tab lost") || strings.ContainsAny(readQueue(t, ws), "\x1b\x00") {
		t.Fatalf("record_failure: %+v", rec)
	}
	// Taken over by another: the first holder's epoch is refused, and
	// changes nothing.
	call(t, cs, "claim", map[string]any{"id": c.ID, "as": "agent-2", "force": true}, &c)
	if c.Epoch != 2 || !strings.HasPrefix(c.Holder, "agent-2@") {
		t.Fatalf("claim with force: %+v", c)
	}
	before := readQueue(t, ws)
	callErr(t, cs, "record_failure", map[string]any{"id": c.ID, "output": "x", "epoch": 1}, "agent-2@")
	callErr(t, cs, "resolve", map[string]any{"id": c.ID, "epoch": 1}, "agent-2@")
	callErr(t, cs, "decide", map[string]any{"action": "skip", "id": c.ID, "epoch": 1}, "agent-2@")
	if readQueue(t, ws) != before {
		t.Errorf("a fenced call changed the queue")
	}
	var res mcpResolved
	call(t, cs, "resolve", map[string]any{"id": c.ID, "epoch": 2}, &res)
	call(t, cs, "claim_release", map[string]any{"id": c.ID, "epoch": 2}, &c)
	if c.Claimed || !strings.Contains(readQueue(t, ws), "| Status | resolved |") {
		t.Fatalf("resolve and release: %+v\n%s", c, readQueue(t, ws))
	}

	var d mcpDecided
	call(t, cs, "decide", map[string]any{"action": "skip", "id": "ISSUE-20241213-001"}, &d)
	call(t, cs, "decide", map[string]any{"action": "retry", "id": "ISSUE-20241213-002"}, &d)
	call(t, cs, "decide", map[string]any{"action": "abort"}, &d)
	if d.Aborted {
		t.Errorf("abort with no run in progress: %+v", d)
	}
	call(t, cs, "issue_add", map[string]any{"summary": "Approve the migration", "type": "approval", "fields": map[string]string{"Gate": "signoff"}}, &added)
	var dec struct {
		Approved bool   `json:"approved"`
		Status   string `json:"status"`
	}
	call(t, cs, "approve", map[string]any{"id": added.ID, "comment": "Checked by hand."}, &dec)
	if !dec.Approved || dec.Status != "resolved" {
		t.Fatalf("approve: %+v", dec)
	}
	q := readQueue(t, ws)
	for _, want := range []string{"| Status | skipped |", "Checked by hand.", "| Approved | true |"} {
		if !strings.Contains(q, want) {
			t.Errorf("the queue lacks %q:\n%s", want, q)
		}
	}
	hist, _ := os.ReadFile(filepath.Join(ws, "history.csv"))
	for _, want := range []string{",skip,ISSUE-20241213-001", ",retry,ISSUE-20241213-002", ",resolve," + c.ID, ",approval,"} {
		if !strings.Contains(string(hist), want) {
			t.Errorf("history.csv lacks %q:\n%s", want, hist)
		}
	}
}

// TestMCPBadInput checks that bad arguments are tool errors, that the
// server goes on, and that none of them changes the queue.
func TestMCPBadInput(t *testing.T) {
	ws := mcpWorkspace(t, mcpGatesConfig)
	cs := mcpInProcess(t, ws)
	before := readQueue(t, ws)
	for _, c := range []struct {
		tool string
		args any
		want string
	}{
		{"issue_show", map[string]any{"id": "ISSUE-20241213-999"}, "ISSUE-20241213-999"},
		{"issue_show", map[string]any{}, "missing properties"},
		{"issue_show", map[string]any{"id": ""}, "id is empty"},
		{"issue_show", map[string]any{"id": 3}, "validating"},
		{"issue_show", map[string]any{"id": "ISSUE\x1b[31m"}, "control character"},
		{"issue_add", map[string]any{"summary": " "}, "summary is empty"},
		{"issue_add", map[string]any{"summary": "red \x1b[31mtext"}, "control byte"},
		{"issue_add", map[string]any{"summary": "nul \x00"}, "NUL"},
		{"issue_add", map[string]any{"summary": "x", "fields": map[string]string{"Status": "done"}}, "unknown status"},
		{"issue_add", map[string]any{"summary": "x", "fields": map[string]string{"Retry-Count": "many"}}, "Retry-Count"},
		{"issue_add", map[string]any{"summary": "x", "fields": map[string]string{"Priorty": "low"}}, "did you mean Priority"},
		{"issue_add", map[string]any{"summary": "x", "fields": map[string]string{"A\nB": "1"}}, "field name"},
		{"issue_add", map[string]any{"summary": "x", "extra": 1}, "validating"},
		{"gates", map[string]any{"names": []string{"nosuch"}}, "nosuch"},
		{"gates", map[string]any{"record": "yes"}, "validating"},
		{"claim", map[string]any{"as": "a b"}, "want a name"},
		{"claim", map[string]any{"lease": "forever"}, "lease"},
		{"claim", map[string]any{"lease": "-1m"}, "lease"},
		{"claim", map[string]any{"force": true}, "give its id"},
		{"claim", map[string]any{"id": "ISSUE-20241213-999"}, "ISSUE-20241213-999"},
		{"claim_renew", map[string]any{"id": "ISSUE-20241213-001"}, "missing properties"},
		{"claim_renew", map[string]any{"id": "ISSUE-20241213-001", "epoch": 0}, "epoch 0"},
		{"claim_renew", map[string]any{"id": "ISSUE-20241213-001", "epoch": 1}, "ISSUE-20241213-001"},
		{"claim_release", map[string]any{"id": "ISSUE-20241213-001", "epoch": -1}, "epoch"},
		{"record_failure", map[string]any{"id": "ISSUE-20241213-999", "output": "x"}, "ISSUE-20241213-999"},
		{"record_failure", map[string]any{"id": "ISSUE-20241213-001", "output": "x", "gate": "a\tb"}, "gate"},
		{"record_failure", map[string]any{"id": "ISSUE-20241213-001", "output": "x", "epoch": -2}, "epoch"},
		{"resolve", map[string]any{"id": "ISSUE-20241213-999"}, "ISSUE-20241213-999"},
		{"decide", map[string]any{"action": "later", "id": "ISSUE-20241213-001"}, "want retry, skip or abort"},
		{"decide", map[string]any{"action": "retry"}, "id is empty"},
		{"decide", map[string]any{"action": "abort", "id": "ISSUE-20241213-001"}, "takes no id"},
		{"approve", map[string]any{"id": "ISSUE-20241213-001"}, "not an approval request"},
		{"approve", map[string]any{"id": "ISSUE-20241213-001", "reject": true}, "needs a comment"},
		{"approve", map[string]any{"id": "ISSUE-20241213-001", "comment": "\x07"}, "control byte"},
	} {
		callErr(t, cs, c.tool, c.args, c.want)
	}
	if readQueue(t, ws) != before {
		t.Errorf("a bad call changed the queue:\n%s", readQueue(t, ws))
	}
	// The server still answers.
	var st mcpStatus
	call(t, cs, "status", nil, &st)
	if len(st.Issues) != 2 {
		t.Errorf("status after the bad calls: %+v", st)
	}
}

// TestMCPNoWorkspace: a server started where there is no workspace
// answers each tool with a tool error that says so.
func TestMCPNoWorkspace(t *testing.T) {
	cs := mcpInProcess(t, filepath.Join(t.TempDir(), ".orchestrator"))
	callErr(t, cs, "status", nil, "orchestrate init")
	callErr(t, cs, "gates", nil, "orchestrate init")
}

// TestMCPCancelKillsGates cancels a gates call while its gate runs: the
// gate's whole process group is killed, as orchestrate gate's is at
// Ctrl-C, and the server goes on.
func TestMCPCancelKillsGates(t *testing.T) {
	t.Parallel()
	ws := mcpWorkspace(t, "")
	pidFile := filepath.Join(t.TempDir(), "pid")
	config := "gates:\n  - name: slow\n    command: 'sleep 300 & echo $$ > " + pidFile + "; wait'\n"
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, _ := mcpServe(t, ws)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gates", Arguments: map[string]any{}})
		done <- err
	}()
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the gate did not start")
		}
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); syscall.Kill(-pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("the gate's process group %d still runs after the call was cancelled", pid)
		}
	}
	var st mcpStatus
	call(t, cs, "status", nil, &st)
}

// TestMCPGatesSpareTheStop: an agent that ran every gate mid-turn through
// the server, and passed, stops at once on the same tree: its Stop hook
// does not run the gates again; once the tree changes, it does.
func TestMCPGatesSpareTheStop(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	gitRun(t, root, "init", "-q")
	runs := filepath.Join(t.TempDir(), "runs")
	ws, _ := claimWorkspace(t, root, 0)
	config := "gates:\n  - name: unit\n    command: 'echo run >> " + runs + "; if grep -q fail code.go; then echo want 4; exit 1; fi'\n"
	for name, data := range map[string]string{".orchestrator/config.yaml": config, "code.go": "package code\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, root, "add", ".")
	gitRun(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
	hook := func(input string) string {
		cmd := exec.Command(orchestrateBin(t), "hook", "--agent", "claude", strings.Fields(input)[0])
		cmd.Dir, cmd.Stdin = root, strings.NewReader(strings.SplitN(input, " ", 2)[1])
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NO_BACKGROUND=1", "CLAUDE_PROJECT_DIR="+root)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hook %s: %v\n%s", input, err, out)
		}
		return string(out)
	}
	gateRuns := func() int {
		data, _ := os.ReadFile(runs)
		return strings.Count(string(data), "run\n")
	}
	hook(`session-start {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}`)
	// The agent works: a change, checked mid-turn, then a fix, checked.
	cs, _ := mcpServe(t, ws)
	os.WriteFile(filepath.Join(root, "code.go"), []byte("package code // fail\n"), 0o644)
	var g mcpGates
	call(t, cs, "gates", map[string]any{}, &g)
	if g.Passed {
		t.Fatalf("gates on a failing change: %+v", g)
	}
	os.WriteFile(filepath.Join(root, "code.go"), []byte("package code // fixed\n"), 0o644)
	call(t, cs, "gates", map[string]any{}, &g)
	if !g.Passed || gateRuns() != 2 {
		t.Fatalf("gates on the fix: %+v, %d runs", g, gateRuns())
	}
	// Its stop passes at once: the gates do not run again.
	if out := hook(`stop {"session_id": "s1", "hook_event_name": "Stop"}`); out != "" || gateRuns() != 2 {
		t.Errorf("the stop after a passing check: %q, %d gate runs, want none more", out, gateRuns())
	}
	// A change since: the stop runs the gates.
	os.WriteFile(filepath.Join(root, "code.go"), []byte("package code // fixed again\n"), 0o644)
	hook(`stop {"session_id": "s1", "hook_event_name": "Stop"}`)
	if gateRuns() != 3 {
		t.Errorf("the stop after a change: %d gate runs, want 3", gateRuns())
	}
	// Only a check of every gate counts: one of some does not.
	os.WriteFile(filepath.Join(root, "code.go"), []byte("package code // once more\n"), 0o644)
	call(t, cs, "gates", map[string]any{"names": []string{"unit"}}, &g)
	hook(`stop {"session_id": "s1", "hook_event_name": "Stop"}`)
	if gateRuns() != 5 {
		t.Errorf("the stop after a check of named gates: %d gate runs, want 5", gateRuns())
	}
}
