package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The scripted model's OpenAI Responses API (POST /v1/responses), the wire
// Codex CLI speaks: the request's input items become the same conversation
// the Messages API's scripts read, and the script's turn goes back as the
// server-sent events Codex consumes (codex-rs's Responses SSE parser:
// response.created, response.output_item.added and .done, the text's
// deltas, response.completed with the usage). The scripts' tools (Write,
// Bash) become Codex's own: exec_command, the shell tool it offers a model
// it has no metadata for.

// respRequest is a Responses API request as Codex sends it.
type respRequest struct {
	Model  string     `json:"model"`
	Stream bool       `json:"stream"`
	Input  []respItem `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// respItem is one input item: a message, a function call the model made
// earlier, or that call's output.
type respItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
}

// text is the text of a message item's content (a string, or parts).
func (it respItem) text() string {
	var s string
	if json.Unmarshal(it.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(it.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// harnessContext reports whether a message is the CLI's own context
// (instructions, environment, AGENTS.md) rather than the person's prompt.
func harnessContext(it respItem) bool {
	t := strings.TrimSpace(it.text())
	return it.Role == "developer" || it.Role == "system" || strings.HasPrefix(t, "<") || strings.HasPrefix(t, "# AGENTS.md")
}

// respConv turns a Responses request into the scripts' conversation: the
// harness's context before the prompt left out, the model's items one
// assistant message, the tools' outputs and later messages user ones.
func respConv(r *respRequest) *conv {
	c := &conv{Model: r.Model, Stream: r.Stream}
	for _, t := range r.Tools {
		c.addTool(t.Name)
	}
	b := &convBuilder{c: c}
	add, flush := b.add, b.flush
	started := false
	for _, it := range r.Input {
		switch {
		case it.Type == "message" && it.Role == "assistant":
			add("assistant", block{Type: "text", Text: it.text()})
		case it.Type == "message":
			if !started && harnessContext(it) {
				continue
			}
			started = true
			add("user", block{Type: "text", Text: it.text()})
		case it.Type == "function_call":
			add("assistant", block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: json.RawMessage(it.Arguments)})
		case it.Type == "function_call_output":
			out, _ := json.Marshal(outputText(it.Output))
			add("user", block{Type: "tool_result", ToolUseID: it.CallID, Content: out})
		}
	}
	flush()
	return c
}

// outputText is a function call's output: a string, or content parts.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return respItem{Content: raw}.text()
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// codexCall is a script's tool as Codex's exec_command: a command, or a
// file written by printf.
func codexCall(tl tool) (string, map[string]any) {
	switch tl.Name {
	case "Write":
		path, _ := tl.Input["file_path"].(string)
		content, _ := tl.Input["content"].(string)
		return "exec_command", map[string]any{"cmd": "printf '%s' " + shQuote(content) + " > " + shQuote(path)}
	case "Bash":
		return "exec_command", map[string]any{"cmd": tl.Input["command"]}
	}
	return tl.Name, tl.Input
}

// The usage each Responses answer reports; cached tokens are part of the
// input tokens, as the API counts them.
const usageCached = 10

func (m *model) serveResponses(w http.ResponseWriter, req *http.Request, body []byte) {
	r := &respRequest{}
	if err := json.Unmarshal(body, r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := respConv(r)
	c.Thread = req.Header.Get("Thread-Id")
	tn := m.next(c)
	m.mu.Lock()
	m.ids++
	id := m.ids
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	respID := fmt.Sprintf("resp_%03d", id)
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress"}})
	var items []map[string]any
	if tn.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_%03d", id), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": tn.Text, "annotations": []any{}}}})
	}
	for i, tl := range tn.Tools {
		name, args := codexCall(tl)
		a, _ := json.Marshal(args)
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%03d_%d", id, i), "call_id": fmt.Sprintf("call_%03d_%d", id, i),
			"name": name, "arguments": string(a), "status": "completed"})
	}
	for i, it := range items {
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		added["status"] = "in_progress"
		if it["type"] == "message" {
			added["content"] = []any{}
		}
		event(map[string]any{"type": "response.output_item.added", "output_index": i, "item": added})
		if it["type"] == "message" {
			event(map[string]any{"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0, "delta": tn.Text})
		}
		event(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID, "status": "completed", "output": items,
		"usage": map[string]any{"input_tokens": usageIn, "input_tokens_details": map[string]any{"cached_tokens": usageCached},
			"output_tokens": usageOut, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": usageIn + usageOut}}})
}
