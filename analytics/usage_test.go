package analytics

import "testing"

func TestUsageRoundTrip(t *testing.T) {
	for _, u := range []Usage{
		{},
		{Session: "3f2a-77", Turns: 4, InputTokens: 1200, OutputTokens: 310, CostUSD: 0.0123},
		{CacheReadTokens: 9, CostUSD: 1.5},
		{Session: "s", Model: "gpt-5", InputTokens: 1000000, CostUSD: 2, Priced: "gpt-5"},
	} {
		got, err := ParseUsage(FormatUsage(u))
		if err != nil || got != u {
			t.Errorf("ParseUsage(FormatUsage(%+v)) = %+v, %v", u, got, err)
		}
	}
	if _, err := ParseUsage("turns=x"); err == nil {
		t.Error("turns=x: no error")
	}
	if u, err := ParseUsage("later=1 turns=2"); err != nil || u.Turns != 2 {
		t.Errorf("unknown key: %+v, %v", u, err)
	}
	if got := FormatUsage(Usage{Session: "a b", Turns: 1}); got != "session=a_b turns=1" {
		t.Errorf("FormatUsage = %q", got)
	}
	if got := FormatUsage(Usage{Model: "gemini 2.5", OutputTokens: 10, CostUSD: 0.0001, Priced: "default"}); got != "model=gemini_2.5 output_tokens=10 cost_usd=0.0001 priced=default" {
		t.Errorf("FormatUsage = %q", got)
	}
}
