package agentcli

import (
	"bytes"
	"encoding/json"
)

// Usage is what an agent's output says of one launch's use: its session,
// its model, its turns, tokens and cost.
type Usage struct {
	Session         string
	Model           string // the one model the launch used, when the agent names it
	Turns           int64
	InputTokens     int64
	OutputTokens    int64
	CacheReadTokens int64
	CostUSD         float64
}

// Tokens is every token the launch used: input, output and cache reads.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens + u.CacheReadTokens }

// Report is what an agent's output says of its launch: its session, its
// use (turns, tokens, cost) and its final answer.
type Report struct {
	Usage  Usage
	Result string // the agent's final message; "" when the output does not say
}

// ParseOutput reads an agent's output in the format of its profile
// (Profile.Usage). Whatever it cannot read is left out: a zero report for
// output in no known shape.
func ParseOutput(format string, out []byte) Report {
	switch format {
	case UsageClaudeJSON, UsageCursorJSON:
		return parseResultObject(out)
	case UsageCodexJSONL:
		return parseCodex(out)
	case UsageGeminiJSON:
		return parseGemini(out)
	case UsageOpencodeJSON:
		return parseOpencode(out)
	case UsageAiderText:
		return parseAider(out)
	}
	return Report{}
}

// RunningTotals reports whether an agent whose output is in format reports
// a resumed session's running totals, not the launch's own (Codex's
// threads).
func RunningTotals(format string) bool { return format == UsageCodexJSONL }

// CacheInInput reports whether an agent whose output is in format counts
// cached tokens within the input tokens (Codex and Gemini CLI), not apart.
func CacheInInput(format string) bool {
	return format == UsageCodexJSONL || format == UsageGeminiJSON
}

// jsonObjects returns the JSON objects that start at the beginning of a line
// of out, one per line (JSON lines) or spread over lines (pretty-printed).
func jsonObjects(out []byte) []map[string]any {
	var objs []map[string]any
	for off := 0; off < len(out); {
		line := out[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i+1]
		}
		if t := bytes.TrimLeft(line, " \t"); len(t) > 0 && t[0] == '{' {
			dec := json.NewDecoder(bytes.NewReader(out[off:]))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err == nil {
				objs = append(objs, obj)
				off += int(dec.InputOffset())
				continue
			}
		}
		off += len(line)
	}
	return objs
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func num(m map[string]any, keys ...string) float64 {
	for _, k := range keys {
		if n, ok := m[k].(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f
			}
		}
	}
	return 0
}

func obj(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// onlyKey returns the one key of m; "" when it has none or several.
func onlyKey(m map[string]any) string {
	if len(m) != 1 {
		return ""
	}
	for k := range m {
		return k
	}
	return ""
}
