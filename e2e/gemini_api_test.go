package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The scripted model's Gemini API (POST /v1beta/models/M:generateContent
// and :streamGenerateContent?alt=sse), the wire Gemini CLI speaks: the
// request's contents become the scripts' conversation, and the script's
// turn goes back as one GenerateContentResponse (streamed as one event).
// The scripts' tools become Gemini CLI's own: write_file, and
// run_shell_command for Bash. A request that asks for JSON (the CLI's
// model router) gets an object that says the task is simple.

type geminiRequest struct {
	Contents []geminiContent `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType string `json:"responseMimeType"`
	} `json:"generationConfig"`
}

type geminiContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		FunctionCall *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

// geminiConv turns a Gemini request into the scripts' conversation: the
// CLI's session context before the prompt left out, function responses
// tool results.
func geminiConv(r *geminiRequest) *conv {
	c := &conv{Stream: true}
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			c.addTool(f.Name)
		}
	}
	b := &convBuilder{c: c}
	add, flush := b.add, b.flush
	started := false
	for _, ct := range r.Contents {
		for _, pt := range ct.Parts {
			switch {
			case pt.FunctionCall != nil:
				add("assistant", block{Type: "tool_use", Name: pt.FunctionCall.Name, Input: pt.FunctionCall.Args})
			case pt.FunctionResponse != nil:
				out, _ := json.Marshal(string(pt.FunctionResponse.Response))
				add("user", block{Type: "tool_result", Content: out})
			case ct.Role == "model" && !pt.Thought:
				add("assistant", block{Type: "text", Text: pt.Text})
			case ct.Role == "user":
				if !started && strings.HasPrefix(strings.TrimSpace(pt.Text), "<") {
					continue
				}
				started = true
				add("user", block{Type: "text", Text: pt.Text})
			}
		}
	}
	flush()
	return c
}

// geminiCall is a script's tool as Gemini CLI's.
func geminiCall(tl tool) (string, map[string]any) {
	switch tl.Name {
	case "Write":
		return "write_file", tl.Input
	case "Bash":
		return "run_shell_command", map[string]any{"command": tl.Input["command"]}
	}
	return tl.Name, tl.Input
}

func (m *model) serveGemini(w http.ResponseWriter, req *http.Request, body []byte) {
	if strings.HasSuffix(req.URL.Path, ":countTokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens": %d}`, usageIn)
		return
	}
	r := &geminiRequest{}
	if err := json.Unmarshal(body, r); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var parts []any
	if r.GenerationConfig.ResponseMimeType == "application/json" {
		parts = append(parts, map[string]any{"text": `{"complexity_reasoning": "a simple task", "complexity_score": 1, "reasoning": "the model is done", "next_speaker": "user"}`})
	} else {
		tn := m.next(geminiConv(r))
		if tn.Text != "" {
			parts = append(parts, map[string]any{"text": tn.Text})
		}
		for _, tl := range tn.Tools {
			name, args := geminiCall(tl)
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": name, "args": args}})
		}
	}
	resp := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": usageIn, "candidatesTokenCount": usageOut, "totalTokenCount": usageIn + usageOut, "cachedContentTokenCount": usageCached},
		"modelVersion":  "gemini-e2e",
	}
	b, _ := json.Marshal(resp)
	if strings.HasSuffix(req.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}
