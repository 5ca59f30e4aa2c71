package loop

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// AgentReport is what an agent's output says of its launch: its session, its
// use (turns, tokens, cost) and its final answer.
type AgentReport struct {
	Usage  analytics.Usage
	Result string // the agent's final message; "" when the output does not say
}

// ParseAgentOutput reads an agent's output in the format of its profile
// (config.Usage*). Whatever it cannot read is left out: a zero report for
// output in no known shape.
func ParseAgentOutput(format string, out []byte) AgentReport {
	switch format {
	case config.UsageClaudeJSON, config.UsageCursorJSON:
		return parseResultObject(out)
	case config.UsageCodexJSONL:
		return parseCodex(out)
	case config.UsageGeminiJSON:
		return parseGemini(out)
	case config.UsageOpencodeJSON:
		return parseOpencode(out)
	case config.UsageAiderText:
		return parseAider(out)
	}
	return AgentReport{}
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

// parseResultObject reads Claude Code's (and Cursor's) result object:
// {"type": "result", "session_id", "num_turns", "usage": {…}, "total_cost_usd", "result"}.
func parseResultObject(out []byte) AgentReport {
	var r AgentReport
	for _, o := range jsonObjects(out) {
		if str(o, "type") != "result" {
			continue
		}
		u := obj(o, "usage")
		r = AgentReport{Result: str(o, "result"), Usage: analytics.Usage{
			Session:         str(o, "session_id"),
			Turns:           int64(num(o, "num_turns")),
			InputTokens:     int64(num(u, "input_tokens", "inputTokens")),
			OutputTokens:    int64(num(u, "output_tokens", "outputTokens")),
			CacheReadTokens: int64(num(u, "cache_read_input_tokens", "cacheReadTokens")),
			CostUSD:         num(o, "total_cost_usd"),
			Model:           onlyKey(obj(o, "modelUsage")),
		}}
		// A request the API refused (a rate limit, an overload) is
		// counted in num_turns all the same: Claude Code says
		// "num_turns":1 with api_error_status 429 and no token used. No
		// model turn answered.
		if _, refused := o["api_error_status"]; refused && r.Usage.Tokens() == 0 && num(u, "cache_creation_input_tokens") == 0 {
			r.Usage.Turns = 0
		}
	}
	return r
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

// parseCodex reads codex exec --json's events: thread.started has the
// thread (the session to resume), each turn.completed the turn's usage.
func parseCodex(out []byte) AgentReport {
	var r AgentReport
	for _, o := range jsonObjects(out) {
		switch str(o, "type") {
		case "thread.started":
			r.Usage.Session = str(o, "thread_id")
		case "turn.completed":
			u := obj(o, "usage")
			r.Usage.Turns++
			r.Usage.InputTokens += int64(num(u, "input_tokens"))
			r.Usage.OutputTokens += int64(num(u, "output_tokens"))
			r.Usage.CacheReadTokens += int64(num(u, "cached_input_tokens"))
		case "item.completed":
			if it := obj(o, "item"); str(it, "type") == "agent_message" {
				r.Result = str(it, "text")
			}
		}
	}
	return r
}

// parseGemini reads Gemini CLI's --output-format json object: session_id,
// response, and stats, whose models each count their tokens.
func parseGemini(out []byte) AgentReport {
	var r AgentReport
	for _, o := range jsonObjects(out) {
		if _, ok := o["response"]; !ok && str(o, "session_id") == "" {
			continue
		}
		r = AgentReport{Result: str(o, "response")}
		r.Usage.Session = str(o, "session_id", "sessionId")
		stats := obj(o, "stats")
		r.Usage.InputTokens = int64(num(stats, "inputTokens", "input_tokens"))
		r.Usage.OutputTokens = int64(num(stats, "outputTokens", "output_tokens"))
		r.Usage.Model = onlyKey(obj(stats, "models"))
		for _, m := range obj(stats, "models") {
			mo, _ := m.(map[string]any)
			t := obj(mo, "tokens")
			r.Usage.InputTokens += int64(num(t, "prompt", "input"))
			r.Usage.OutputTokens += int64(num(t, "candidates", "output"))
			r.Usage.CacheReadTokens += int64(num(t, "cached"))
			r.Usage.Turns += int64(num(obj(mo, "api"), "totalRequests"))
		}
	}
	return r
}

// parseOpencode reads opencode run --format json's events: each carries the
// sessionID; a step_finish part has the step's tokens and cost; text parts
// the answer.
func parseOpencode(out []byte) AgentReport {
	var r AgentReport
	for _, o := range jsonObjects(out) {
		part := obj(o, "part")
		if s := str(o, "sessionID"); s != "" {
			r.Usage.Session = s
		} else if s := str(part, "sessionID"); s != "" {
			r.Usage.Session = s
		}
		switch str(o, "type") {
		case "step_finish":
			t := obj(part, "tokens")
			r.Usage.Turns++
			r.Usage.InputTokens += int64(num(t, "input"))
			r.Usage.OutputTokens += int64(num(t, "output"))
			r.Usage.CacheReadTokens += int64(num(obj(t, "cache"), "read"))
			r.Usage.CostUSD += num(part, "cost")
		case "text":
			if s := str(part, "text"); s != "" {
				r.Result = s
			}
		}
	}
	return r
}

// aiderTokens is aider's report after each message: "Tokens: 12k sent, 133
// received. Cost: $0.04 message, $0.10 session." (with cache counts between
// when there are some).
var aiderTokens = regexp.MustCompile(`Tokens: ([0-9.]+k?) sent, (?:[0-9.]+k? cache write, )?(?:([0-9.]+k?) cache hit, )?([0-9.]+k?) received\.(?: Cost: \$([0-9.]+) message, \$([0-9.]+) session\.)?`)

func parseAider(out []byte) AgentReport {
	var r AgentReport
	for _, m := range aiderTokens.FindAllSubmatch(out, -1) {
		r.Usage.Turns++
		r.Usage.InputTokens += aiderCount(string(m[1]))
		r.Usage.CacheReadTokens += aiderCount(string(m[2]))
		r.Usage.OutputTokens += aiderCount(string(m[3]))
		if len(m[5]) > 0 {
			// The session's cost so far: the last one says it all.
			r.Usage.CostUSD, _ = strconv.ParseFloat(string(m[5]), 64)
		}
	}
	return r
}

// aiderCount reads "12k", "1.5k" or "133".
func aiderCount(s string) int64 {
	if s == "" {
		return 0
	}
	mult := 1.0
	if k, ok := strings.CutSuffix(s, "k"); ok {
		s, mult = k, 1000
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return int64(f*mult + 0.5)
}

// maxAgentOutput bounds what is read of an agent's log for its report.
const maxAgentOutput = 32 << 20

// agentOutput is an agent's whole output, from its log, or the head and tail
// kept in memory when there is no log.
func agentOutput(logPath, kept string) []byte {
	if logPath != "" {
		if data, _, err := fsx.ReadFileMax(logPath, maxAgentOutput); err == nil {
			return data
		}
	}
	return []byte(kept)
}

// newSessionID returns a random (version 4) UUID, as Claude Code's
// --session-id wants.
func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
