package loop

import (
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
)

// Which agent each loop gets, for each strategy, when every loop fails.
func TestFresh(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		after    int
		resume   string
		want     string // f: fresh, s: same agent resumed, loops 1 to 7
	}{
		{config.StrategyAuto, 2, "resume", "fsfsfsf"},
		{config.StrategyAuto, 3, "resume", "fssfssf"},
		{config.StrategyAuto, 1, "resume", "fffffff"},
		{config.StrategySame, 2, "resume", "fssssss"},
		{config.StrategyFresh, 2, "resume", "fffffff"},
		{config.StrategySame, 2, "", "fffffff"},
	} {
		cfg := config.Default()
		cfg.Retry.Strategy, cfg.Retry.FreshAfterFailures, cfg.Agent.ResumeCommand = tc.strategy, tc.after, tc.resume
		r := &runner{cfg: cfg}
		got := ""
		for n := 1; n <= len(tc.want); n++ {
			if r.fresh(n) {
				got += "f"
				r.sameFailures = 0
			} else {
				got += "s"
			}
			r.sameFailures++ // the loop failed
		}
		if got != tc.want {
			t.Errorf("strategy %s, fresh_after_failures %d, resume %q: agents %s; want %s", tc.strategy, tc.after, tc.resume, got, tc.want)
		}
	}
}

func TestTitleOf(t *testing.T) {
	for _, tc := range []struct {
		task   string
		issues []PromptIssue
		want   string
	}{
		{"Add a --verbose flag", nil, "Add a --verbose flag"},
		{"# Verbose mode\n\nAdd a flag. And docs.", nil, "Verbose mode"},
		{"Add a flag. Then document\nit.\n\nMore.", nil, "Add a flag."},
		{"Fix calc.sh so that\nits tests pass", nil, "Fix calc.sh so that its tests pass"},
		{strings.Repeat("y", 200), nil, strings.Repeat("y", 99) + "…"},
		{"", nil, "make the quality gates pass"},
		{"", []PromptIssue{{ID: "ISSUE-20241213-001"}}, "fix ISSUE-20241213-001"},
		{"", []PromptIssue{{}, {}}, "fix the 2 open issues"},
	} {
		if got := titleOf(tc.task, tc.issues); got != tc.want {
			t.Errorf("titleOf(%.30q) = %q; want %q", tc.task, got, tc.want)
		}
	}
}
