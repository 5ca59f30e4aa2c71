package analytics

import (
	"fmt"
	"strconv"
	"strings"
)

// EventUsage is the history row that carries what one agent launch reported of
// its own use: detail holds the Usage as key=value pairs (FormatUsage), and the
// row's loop and attempt are the agent row's.
const EventUsage = "usage"

// Usage is what an agent reports of one launch: its session, its model, its
// turns, its tokens and its cost. A zero field was not reported.
type Usage struct {
	Session         string
	Model           string // the one model the launch used, when the agent names it
	Turns           int64
	InputTokens     int64
	OutputTokens    int64
	CacheReadTokens int64
	CostUSD         float64
	// Priced, when set, says that CostUSD is not the agent's: it is the
	// tokens priced with this agent.prices entry (a model, or "default").
	Priced string
}

// Tokens is every token the launch used: input, output and cache reads.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens + u.CacheReadTokens }

// Zero reports whether nothing was reported.
func (u Usage) Zero() bool { return u == Usage{} }

// FormatUsage writes u as the detail of a usage row: space-separated key=value
// pairs in a fixed order, the ones not reported left out:
//
//	session=3f2a… model=gpt-5 turns=4 input_tokens=1200 output_tokens=310 cost_usd=0.0123 priced=gpt-5
func FormatUsage(u Usage) string {
	var parts []string
	word := func(s string) string { return strings.Join(strings.Fields(s), "_") }
	if u.Session != "" {
		parts = append(parts, "session="+word(u.Session))
	}
	if u.Model != "" {
		parts = append(parts, "model="+word(u.Model))
	}
	for _, kv := range []struct {
		k string
		v int64
	}{{"turns", u.Turns}, {"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens}, {"cache_read_tokens", u.CacheReadTokens}} {
		if kv.v != 0 {
			parts = append(parts, kv.k+"="+strconv.FormatInt(kv.v, 10))
		}
	}
	if u.CostUSD != 0 {
		parts = append(parts, "cost_usd="+strconv.FormatFloat(u.CostUSD, 'f', -1, 64))
	}
	if u.Priced != "" {
		parts = append(parts, "priced="+word(u.Priced))
	}
	return strings.Join(parts, " ")
}

// ParseUsage reads a usage row's detail. Unknown keys are ignored, so that a
// later version may report more; a known key with a malformed value is an error.
func ParseUsage(detail string) (Usage, error) {
	var u Usage
	for _, f := range strings.Fields(detail) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "session":
			u.Session = v
		case "model":
			u.Model = v
		case "priced":
			u.Priced = v
		case "turns":
			u.Turns, err = strconv.ParseInt(v, 10, 64)
		case "input_tokens":
			u.InputTokens, err = strconv.ParseInt(v, 10, 64)
		case "output_tokens":
			u.OutputTokens, err = strconv.ParseInt(v, 10, 64)
		case "cache_read_tokens":
			u.CacheReadTokens, err = strconv.ParseInt(v, 10, 64)
		case "cost_usd":
			u.CostUSD, err = strconv.ParseFloat(v, 64)
		}
		if err != nil {
			return Usage{}, fmt.Errorf("usage %s: %q is not a number", k, v)
		}
	}
	return u, nil
}
