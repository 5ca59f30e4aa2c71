package loop

import (
	"strings"
	"testing"
)

// seedTriggered is seed 004's AUTO-RETRY TRIGGERED message, as the seed
// writes it (UTF-8): its rules are 63 "═" wide.
const seedTriggered = `═══════════════════════════════════════════════════════════════
🔄 AUTO-RETRY TRIGGERED
═══════════════════════════════════════════════════════════════

Critical issue detected: Server fails to start (TypeError in src/index.ts:42)

Attempt: 1 of 10
Action: Running improvement loop to fix issue
`

// TestBannerIsTheSeeds: the banners are the seed's, rule for rule.
func TestBannerIsTheSeeds(t *testing.T) {
	t.Parallel()
	got := TriggeredMessage(CheckResult{
		Retried:          []IssueRef{{ID: "ISSUE-20241213-001", Summary: "Server fails to start (TypeError in src/index.ts:42)", RetryCount: 1, MaxRetries: 10, Priority: "critical"}},
		TotalAutoRetries: 1, GlobalCap: 15,
	})
	want := strings.Replace(seedTriggered, "src/index.ts:42)", "src/index.ts:42) (ISSUE-20241213-001)", 1)
	if !strings.HasPrefix(got, want) {
		t.Errorf("TRIGGERED =\n%s\nwant it to begin with the seed's\n%s", got, want)
	}
	rules := 0
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "═") {
			rules++
			if n := len([]rune(l)); n != 63 || strings.Trim(l, "═") != "" {
				t.Errorf("rule %q: %d runes; want 63 ═", l, n)
			}
		}
	}
	if rules != 3 {
		t.Errorf("%d rules; want 3", rules)
	}
}
