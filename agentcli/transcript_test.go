package agentcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastAssistantText(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := write("t.jsonl", strings.Join([]string{
		`{"type":"queue-operation","operation":"dequeue"}`,
		`{"type":"user","message":{"role":"user","content":"fix the tests"}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Looking."}]}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed Add: it subtracted."},{"type":"tool_use","name":"Edit","input":{}},{"type":"text","text":"Tests pass."}]}}`,
		`{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"a subagent's words"}]}}`,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}`,
		`not json`,
		``,
	}, "\n"))
	if got, want := LastAssistantText(full), "Fixed Add: it subtracted.\nTests pass."; got != want {
		t.Errorf("LastAssistantText = %q; want %q", got, want)
	}
	str := write("s.jsonl", `{"type":"assistant","message":{"content":"  Done.  "}}`+"\n")
	if got := LastAssistantText(str); got != "Done." {
		t.Errorf("string content: %q", got)
	}
	for _, p := range []string{"", filepath.Join(dir, "missing"), dir, write("n.jsonl", `{"type":"user","message":{"content":"x"}}`)} {
		if got := LastAssistantText(p); got != "" {
			t.Errorf("LastAssistantText(%q) = %q; want none", p, got)
		}
	}
	// A long transcript: only its end is read, its first line cut.
	long := write("l.jsonl", strings.Repeat(`{"type":"user","message":{"content":"`+strings.Repeat("x", 1000)+`"}}`+"\n", 3000)+
		`{"type":"assistant","message":{"content":[{"type":"text","text":"the end"}]}}`+"\n")
	if got := LastAssistantText(long); got != "the end" {
		t.Errorf("long transcript: %q", got)
	}
}
