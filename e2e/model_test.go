package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The scripted model: a stand-in for the Anthropic Messages API that answers
// each request from a script, as the real API would (server-sent events when
// the request streams, one JSON message when not). A script is a function of
// the conversation so far: it reads what the CLI sent (the prompt, the tool
// results, the Stop hook's feedback) and says what the model does next: some
// text, tool calls (Write, Edit, Bash), or both.

// conv is one request: a conversation as the CLI sent it.
type conv struct {
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []message `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
	System json.RawMessage `json:"system"`
	// Thread is the CLI's own name for the conversation, where its
	// requests say it (Codex's Thread-Id header).
	Thread string `json:"-"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, or blocks
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

func (m message) blocks() []block {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// text is the text of a message: its text blocks and the text of its tool
// results, one per line.
func (m message) text() string {
	var b strings.Builder
	for _, bl := range m.blocks() {
		switch bl.Type {
		case "text":
			b.WriteString(bl.Text + "\n")
		case "tool_result":
			b.WriteString(resultText(bl) + "\n")
		}
	}
	return b.String()
}

func resultText(bl block) string {
	var s string
	if json.Unmarshal(bl.Content, &s) == nil {
		return s
	}
	var bs []block
	_ = json.Unmarshal(bl.Content, &bs)
	var parts []string
	for _, x := range bs {
		parts = append(parts, x.Text)
	}
	return strings.Join(parts, "\n")
}

// agentic reports whether the request offers tools: the agent's own turns, not
// a side request (a title, a summary).
func (c *conv) agentic() bool { return len(c.Tools) > 0 }

// first is the text of the first user message: the prompt.
func (c *conv) first() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.text()
		}
	}
	return ""
}

// last is the text of the last message, the user's: a prompt, tool results,
// or the Stop hook's feedback.
func (c *conv) last() string {
	if len(c.Messages) == 0 {
		return ""
	}
	return c.Messages[len(c.Messages)-1].text()
}

// all is the text of the whole conversation.
func (c *conv) all() string {
	var b strings.Builder
	for _, m := range c.Messages {
		b.WriteString(m.Role + ": " + m.text())
		for _, bl := range m.blocks() {
			if bl.Type == "tool_use" {
				fmt.Fprintf(&b, "tool_use %s %s\n", bl.Name, bl.Input)
			}
		}
	}
	return b.String()
}

// answered reports whether the last message holds tool results: the model's
// tools ran, and it is to say what it did.
func (c *conv) answered() bool {
	if len(c.Messages) == 0 {
		return false
	}
	for _, bl := range c.Messages[len(c.Messages)-1].blocks() {
		if bl.Type == "tool_result" {
			return true
		}
	}
	return false
}

// turns counts the model's answers so far in the conversation.
func (c *conv) turns() int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// calls counts the model's tool calls so far in the conversation.
func (c *conv) calls() int {
	n := 0
	for _, m := range c.Messages {
		for _, bl := range m.blocks() {
			if bl.Type == "tool_use" {
				n++
			}
		}
	}
	return n
}

// addTool notes a tool the CLI offers the model.
func (c *conv) addTool(name string) {
	c.Tools = append(c.Tools, struct {
		Name string `json:"name"`
	}{name})
}

// convBuilder puts another API's request into a conversation: each run of
// blocks of one role is one message.
type convBuilder struct {
	c      *conv
	role   string
	blocks []block
}

func (b *convBuilder) add(role string, bl block) {
	if role != b.role {
		b.flush()
		b.role = role
	}
	b.blocks = append(b.blocks, bl)
}

func (b *convBuilder) flush() {
	if len(b.blocks) > 0 {
		content, _ := json.Marshal(b.blocks)
		b.c.Messages = append(b.c.Messages, message{Role: b.role, Content: content})
	}
	b.blocks = nil
}

// turn is what the model does: say something, call tools.
type turn struct {
	Text  string
	Tools []tool
}

type tool struct {
	Name  string
	Input map[string]any
}

func write(path, content string) tool {
	return tool{"Write", map[string]any{"file_path": path, "content": content}}
}

func bash(command string) tool {
	return tool{"Bash", map[string]any{"command": command, "description": "run " + command}}
}

func say(text string) turn { return turn{Text: text} }

// script decides the model's next turn from the conversation.
type script func(c *conv) turn

// route sends the conversations whose prompt contains match to a script.
type route struct {
	match string
	do    script
}

// model is the scripted Messages API server.
type model struct {
	t      *testing.T
	URL    string
	mu     sync.Mutex
	routes []route
	seen   []*conv  // every agentic request, in order
	raw    []string // every request: method, path, body
	ids    int
	// refuse, when not 0, is the HTTP status every agentic request gets,
	// with the API's error body for it (429: a rate limit).
	refuse int
}

// dump is the requests the model got, each cut to n bytes, for a failing
// test's log.
func (m *model) dump(n int) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for i, r := range m.raw {
		if len(r) > n {
			r = r[:n] + "…"
		}
		fmt.Fprintf(&b, "request %d: %s\n", i+1, r)
	}
	return b.String()
}

// newModel starts the server on 127.0.0.1; it stops with the test.
func newModel(t *testing.T, routes ...route) *model {
	t.Helper()
	m := &model{t: t, routes: routes}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(m.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	m.URL = "http://" + ln.Addr().String()
	return m
}

// requests returns the agentic requests whose prompt contains match.
func (m *model) requests(match string) []*conv {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*conv
	for _, c := range m.seen {
		if strings.Contains(c.first(), match) {
			out = append(out, c)
		}
	}
	return out
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.raw = append(m.raw, r.Method+" "+r.URL.Path+" "+string(body))
	m.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens": 100}`)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		m.serveChat(w, body)
		return
	case r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/models/") && strings.Contains(r.URL.Path, ":"):
		m.serveGemini(w, r, body)
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		m.serveResponses(w, r, body)
		return
	default:
		// Anything else the CLI asks for does not exist here.
		http.NotFound(w, r)
		return
	}
	c := &conv{}
	if err := json.Unmarshal(body, c); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if m.refuse != 0 && c.agentic() {
		m.mu.Lock()
		m.seen = append(m.seen, c)
		m.mu.Unlock()
		m.refuseWith(w)
		return
	}
	m.answer(w, c, m.next(c))
}

// next is the model's turn in a conversation: its route's, for an agentic
// request, which the model keeps.
func (m *model) next(c *conv) turn {
	if !c.agentic() {
		return say("ok")
	}
	m.mu.Lock()
	m.seen = append(m.seen, c)
	m.mu.Unlock()
	prompt := c.first()
	for _, rt := range m.routes {
		if strings.Contains(prompt, rt.match) {
			return rt.do(c)
		}
	}
	return say("I have nothing to do.")
}

// refuseWith answers as the API does when it refuses a request: the
// status, and the error body of its kind.
func (m *model) refuseWith(w http.ResponseWriter) {
	kind, msg := "api_error", "Internal server error"
	switch m.refuse {
	case http.StatusTooManyRequests:
		kind, msg = "rate_limit_error", "This request would exceed the rate limit for your organization of 50 requests per minute."
	case 529:
		kind, msg = "overloaded_error", "Overloaded"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "0")
	w.WriteHeader(m.refuse)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, kind, msg)
}

// Every answer reports the same usage, which the tests find again in
// history.csv.
const (
	usageIn  = 100
	usageOut = 20
)

func (m *model) answer(w http.ResponseWriter, c *conv, tn turn) {
	m.mu.Lock()
	m.ids++
	id := m.ids
	m.mu.Unlock()
	var content []map[string]any
	if tn.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": tn.Text})
	}
	for i, tl := range tn.Tools {
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%03d_%d", id, i), "name": tl.Name, "input": tl.Input})
	}
	stop := "end_turn"
	if len(tn.Tools) > 0 {
		stop = "tool_use"
	}
	msg := map[string]any{
		"id": fmt.Sprintf("msg_%03d", id), "type": "message", "role": "assistant", "model": c.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": usageIn, "output_tokens": usageOut},
	}
	if !c.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(msg)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	event := func(name string, data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	start := map[string]any{}
	for k, v := range msg {
		start[k] = v
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": usageIn, "output_tokens": 1}
	event("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range content {
		switch b["type"] {
		case "text":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		case "tool_use":
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": usageOut}})
	event("message_stop", map[string]any{"type": "message_stop"})
}
