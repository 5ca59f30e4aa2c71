package loop

import (
	"regexp"
	"testing"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
)

// Each agent's output, in the shape its documentation gives, and what is read
// of it.
func TestParseAgentOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, format, out string
		want              AgentReport
	}{
		{"claude", agentcli.UsageClaudeJSON,
			"warning on stderr\n" + `{"type":"result","subtype":"success","is_error":false,"duration_ms":787,"num_turns":3,"result":"done","session_id":"feb563ed-72dc-42c5-b05f-423370d52c8c","total_cost_usd":0.0024,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":12,"output_tokens":60}}` + "\n",
			AgentReport{Result: "done", Usage: analytics.Usage{Session: "feb563ed-72dc-42c5-b05f-423370d52c8c", Turns: 3, InputTokens: 300, OutputTokens: 60, CacheReadTokens: 12, CostUSD: 0.0024}}},
		{"claude, its model named", agentcli.UsageClaudeJSON,
			`{"type":"result","num_turns":1,"result":"ok","session_id":"s","usage":{"input_tokens":3,"output_tokens":4},"modelUsage":{"claude-sonnet-4-5":{"inputTokens":3,"outputTokens":4}}}` + "\n",
			AgentReport{Result: "ok", Usage: analytics.Usage{Session: "s", Model: "claude-sonnet-4-5", Turns: 1, InputTokens: 3, OutputTokens: 4}}},
		{"claude, two models", agentcli.UsageClaudeJSON,
			`{"type":"result","num_turns":1,"result":"ok","session_id":"s","modelUsage":{"a":{},"b":{}}}` + "\n",
			AgentReport{Result: "ok", Usage: analytics.Usage{Session: "s", Turns: 1}}},
		{"claude, no result object", agentcli.UsageClaudeJSON, "plain text answer\n{not json\n", AgentReport{}},
		{"claude, an object that is not the result", agentcli.UsageClaudeJSON, `{"type":"system","session_id":"x"}` + "\n", AgentReport{}},
		{"cursor", agentcli.UsageCursorJSON,
			`{"type":"result","subtype":"success","is_error":false,"duration_ms":1234,"duration_api_ms":1234,"result":"ok","session_id":"c-1","request_id":"r"}` + "\n",
			AgentReport{Result: "ok", Usage: analytics.Usage{Session: "c-1"}}},
		{"codex", agentcli.UsageCodexJSONL,
			`{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"Fixed it."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
`,
			AgentReport{Result: "Fixed it.", Usage: analytics.Usage{Session: "0199a213-81c0-7800-8aa1-bbab2a035a53", Turns: 1, InputTokens: 24763, OutputTokens: 122, CacheReadTokens: 24448}}},
		{"gemini, pretty-printed", agentcli.UsageGeminiJSON,
			`{
  "session_id": "g-1",
  "response": "Paris.",
  "stats": {
    "models": {
      "gemini-2.5-pro": {
        "api": {"totalRequests": 2, "totalErrors": 0},
        "tokens": {"prompt": 120, "candidates": 8, "total": 140, "cached": 10}
      }
    }
  }
}
`,
			AgentReport{Result: "Paris.", Usage: analytics.Usage{Session: "g-1", Model: "gemini-2.5-pro", Turns: 2, InputTokens: 120, OutputTokens: 8, CacheReadTokens: 10}}},
		{"opencode", agentcli.UsageOpencodeJSON,
			`{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Done."}}
{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","cost":0.01,"tokens":{"input":50,"output":5,"cache":{"read":7,"write":0}}}}
`,
			AgentReport{Result: "Done.", Usage: analytics.Usage{Session: "ses_1", Turns: 1, InputTokens: 50, OutputTokens: 5, CacheReadTokens: 7, CostUSD: 0.01}}},
		{"aider", agentcli.UsageAiderText,
			"Applied edit to calc.go\nTokens: 12k sent, 133 received. Cost: $0.04 message, $0.04 session.\nTokens: 1.5k sent, 1.2k cache hit, 20 received. Cost: $0.01 message, $0.05 session.\n",
			AgentReport{Usage: analytics.Usage{Turns: 2, InputTokens: 13500, OutputTokens: 153, CacheReadTokens: 1200, CostUSD: 0.05}}},
		{"no format", "", `{"type":"result","num_turns":3}`, AgentReport{}},
	} {
		if got := ParseAgentOutput(tc.format, []byte(tc.out)); got != tc.want {
			t.Errorf("%s: ParseAgentOutput = %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

func TestNewSessionID(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		id, err := newSessionID()
		if err != nil || !re.MatchString(id) || seen[id] {
			t.Fatalf("newSessionID() = %q, %v: want a new version 4 UUID", id, err)
		}
		seen[id] = true
	}
}

// FuzzParseAgentOutput: any output, in any format, gives a report without
// panicking, and one whose counts are never negative.
func FuzzParseAgentOutput(f *testing.F) {
	f.Add(`{"type":"result","num_turns":3,"usage":{"input_tokens":1}}`)
	f.Add("{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.completed\",\"usage\":{}}")
	f.Add("Tokens: 1k sent, 2 received. Cost: $0.01 message, $0.02 session.")
	f.Add("{\n \"response\": \"x\",\n \"stats\": {\"models\": {\"m\": {\"tokens\": {\"prompt\": 1}}}}\n}")
	f.Fuzz(func(t *testing.T, out string) {
		for _, format := range []string{agentcli.UsageClaudeJSON, agentcli.UsageCodexJSONL, agentcli.UsageGeminiJSON,
			agentcli.UsageOpencodeJSON, agentcli.UsageCursorJSON, agentcli.UsageAiderText} {
			r := ParseAgentOutput(format, []byte(out))
			if r.Usage.Turns < 0 && format == agentcli.UsageAiderText {
				t.Errorf("%s: negative turns", format)
			}
		}
	})
}

// TestPriced: the tokens of an agent that reports no cost are priced with
// agent.prices, the model's entry or the default, cached tokens apart from
// the input where the agent counts them within it; a reported cost stands.
func TestPriced(t *testing.T) {
	t.Parallel()
	prices := map[string]config.Price{
		"default": {Input: 1, Output: 10, CacheRead: 0.1},
		"gpt-5":   {Input: 2, Output: 20, CacheRead: 0.2},
	}
	for _, tc := range []struct {
		name, format string
		prices       map[string]config.Price
		in, want     analytics.Usage
	}{
		{"the model's entry, cache within input", agentcli.UsageCodexJSONL, prices,
			analytics.Usage{Model: "gpt-5", InputTokens: 1_000_000, CacheReadTokens: 400_000, OutputTokens: 10_000},
			analytics.Usage{Model: "gpt-5", InputTokens: 1_000_000, CacheReadTokens: 400_000, OutputTokens: 10_000, CostUSD: 1.2 + 0.08 + 0.2, Priced: "gpt-5"}},
		{"no model: the default", agentcli.UsageGeminiJSON, prices,
			analytics.Usage{InputTokens: 1000, CacheReadTokens: 1000, OutputTokens: 100},
			analytics.Usage{InputTokens: 1000, CacheReadTokens: 1000, OutputTokens: 100, CostUSD: 0.0011, Priced: "default"}},
		{"cache apart from input", agentcli.UsageClaudeJSON, prices,
			analytics.Usage{Model: "claude-x", InputTokens: 1000, CacheReadTokens: 1000, OutputTokens: 100},
			analytics.Usage{Model: "claude-x", InputTokens: 1000, CacheReadTokens: 1000, OutputTokens: 100, CostUSD: 0.0021, Priced: "default"}},
		{"a reported cost stands", agentcli.UsageClaudeJSON, prices,
			analytics.Usage{InputTokens: 1000, CostUSD: 0.5},
			analytics.Usage{InputTokens: 1000, CostUSD: 0.5}},
		{"no tokens, no cost", agentcli.UsageCodexJSONL, prices,
			analytics.Usage{Session: "s", Turns: 1},
			analytics.Usage{Session: "s", Turns: 1}},
		{"no prices", agentcli.UsageCodexJSONL, nil,
			analytics.Usage{InputTokens: 1000},
			analytics.Usage{InputTokens: 1000}},
	} {
		a := &config.Agent{Usage: tc.format, Prices: tc.prices}
		if got := priced(a, tc.in); got != tc.want {
			t.Errorf("%s: priced = %+v; want %+v", tc.name, got, tc.want)
		}
	}
}
