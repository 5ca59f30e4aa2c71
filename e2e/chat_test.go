package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The scripted model's OpenAI Chat Completions API (POST
// /v1/chat/completions), the wire opencode speaks to a provider of the
// @ai-sdk/openai-compatible kind: the request's messages become the
// scripts' conversation, and the script's turn goes back as streamed
// chunks (the text, then the tool calls, a finish reason, and a last
// chunk with the usage, as stream_options.include_usage asks). The
// scripts' tools (Write, Bash) become opencode's bash.

// chatRequest is a Chat Completions request as opencode sends it.
type chatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, or parts
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// chatConv turns a Chat Completions request into the scripts'
// conversation: the system prompt left out, tool results user messages.
func chatConv(r *chatRequest) *conv {
	c := &conv{Model: r.Model, Stream: r.Stream}
	for _, t := range r.Tools {
		c.addTool(t.Function.Name)
	}
	b := &convBuilder{c: c}
	add, flush := b.add, b.flush
	for _, m := range r.Messages {
		text := respItem{Content: m.Content}.text()
		switch m.Role {
		case "user":
			add("user", block{Type: "text", Text: text})
		case "assistant":
			if text != "" {
				add("assistant", block{Type: "text", Text: text})
			}
			for _, tc := range m.ToolCalls {
				add("assistant", block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)})
			}
		case "tool":
			out, _ := json.Marshal(text)
			add("user", block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: out})
		}
	}
	flush()
	return c
}

// opencodeCall is a script's tool as opencode's bash: a command, or a file
// written by printf (its write tool refuses to overwrite a file it has not
// read first).
func opencodeCall(tl tool) (string, map[string]any) {
	name, args := codexCall(tl)
	if name == "exec_command" {
		return "bash", map[string]any{"command": args["cmd"], "description": "run a command"}
	}
	return name, args
}

func (m *model) serveChat(w http.ResponseWriter, body []byte) {
	r := &chatRequest{}
	if err := json.Unmarshal(body, r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := chatConv(r)
	tn := m.next(c)
	m.mu.Lock()
	m.ids++
	id := m.ids
	m.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(choices []any, usage map[string]any) {
		data := map[string]any{"id": fmt.Sprintf("chatcmpl-%03d", id), "object": "chat.completion.chunk", "created": 1, "model": r.Model, "choices": choices}
		if usage != nil {
			data["usage"] = usage
		}
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	if tn.Text != "" {
		chunk(delta(map[string]any{"content": tn.Text}, nil), nil)
	}
	for i, tl := range tn.Tools {
		name, args := opencodeCall(tl)
		a, _ := json.Marshal(args)
		chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": fmt.Sprintf("call_%03d_%d", id, i), "type": "function",
			"function": map[string]any{"name": name, "arguments": string(a)}}}}, nil), nil)
	}
	finish := "stop"
	if len(tn.Tools) > 0 {
		finish = "tool_calls"
	}
	chunk(delta(map[string]any{}, finish), nil)
	chunk([]any{}, map[string]any{"prompt_tokens": usageIn, "completion_tokens": usageOut, "total_tokens": usageIn + usageOut,
		"prompt_tokens_details": map[string]any{"cached_tokens": usageCached}})
	fmt.Fprint(w, "data: [DONE]\n\n")
}
