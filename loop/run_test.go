package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/config"
)

// Which agent each loop gets, for each strategy, when every loop fails.
func TestFresh(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strategy string
		after    int
		resume   string
		session  string // the session each agent reported or was given
		want     string // f: fresh, s: same agent resumed, loops 1 to 7
	}{
		{config.StrategyAuto, 2, "resume", "s1", "fsfsfsf"},
		{config.StrategyAuto, 3, "resume", "s1", "fssfssf"},
		{config.StrategyAuto, 1, "resume", "s1", "fffffff"},
		{config.StrategySame, 2, "resume", "s1", "fssssss"},
		{config.StrategyFresh, 2, "resume", "s1", "fffffff"},
		{config.StrategySame, 2, "", "s1", "fffffff"},
		// No session to continue: never "the most recent" one.
		{config.StrategySame, 2, "resume", "", "fffffff"},
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
			r.launched++
			r.session = tc.session
			r.sameFailures++ // the loop failed
		}
		if got != tc.want {
			t.Errorf("strategy %s, fresh_after_failures %d, resume %q: agents %s; want %s", tc.strategy, tc.after, tc.resume, got, tc.want)
		}
	}
}

func TestTitleOf(t *testing.T) {
	t.Parallel()
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

// The decision point before each agent launch: a sentinel or an abort that
// comes after the check (here, from the Step callback, which runs between
// the check and the next launch) stops the run before the agent starts.
func TestRunStopsBeforeLaunch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, outcome, reason string
	}{
		{SentinelFile, RunNothing, "auto-retry was disabled before loop 2: "},
		{AbortFile, RunAborted, "aborted by orchestrate abort before loop 2"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			root := t.TempDir()
			w := Workspace{Dir: filepath.Join(root, DefaultDir)}
			if err := os.MkdirAll(w.Dir, 0o755); err != nil {
				t.Fatal(err)
			}
			config := "agent:\n  command: echo ran >> launches\n  resume_command: echo ran >> launches\n" +
				"gates:\n  - name: never\n    command: 'echo \"got $(wc -l < launches) launches\"; exit 1'\n"
			if err := os.WriteFile(w.Path(ConfigFile), []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := w.Run(context.Background(), RunOptions{Task: "x", Step: func(s Step) {
				if s.Kind == StepCheck {
					if err := os.WriteFile(w.Path(tc.file), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.outcome || !strings.HasPrefix(res.Reason, tc.reason) || res.Loops != 1 {
				t.Errorf("Run = %s %q after %d loops; want %s %q after 1", res.Outcome, res.Reason, res.Loops, tc.outcome, tc.reason)
			}
			if data, _ := os.ReadFile(filepath.Join(root, "launches")); string(data) != "ran\n" {
				t.Errorf("the agent ran %q; want once", data)
			}
		})
	}
}

// An agent that could not work at all (here: the API's rate limit, before
// any model turn) stops the run at once, quoting it: no gate runs, no
// issue is filed, nothing is counted. One that worked and then failed the
// same way is an attempt like any other.
func TestRunAgentCouldNotStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, agent string
		stops       bool
	}{
		{"no-turn", `echo '{"type":"result","is_error":true,"num_turns":0,"result":"API Error: 429 rate_limit_error"}'; exit 1`, true},
		{"after-turns", `echo '{"type":"result","is_error":true,"num_turns":3,"usage":{"input_tokens":10,"output_tokens":5},"result":"API Error: 429 rate_limit_error"}'; exit 1`, false},
		// Claude Code's own words for a request the API refused: one
		// turn counted, no token used, the status of the refusal.
		{"refused-turn", `echo '{"type":"result","is_error":true,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"api_error_status":429,"terminal_reason":"api_error","result":"API Error: Request rejected (429) · This request would exceed the rate limit for your organization of 50 requests per minute."}'; exit 1`, true},
		// Tokens used, no turn reported: it worked all the same.
		{"tokens-no-turn", `echo '{"type":"result","is_error":true,"num_turns":0,"usage":{"input_tokens":1200,"output_tokens":310},"result":"API Error: 429 rate_limit_error"}'; exit 1`, false},
		// One turn, no tokens reported: it worked all the same.
		{"one-turn", `echo '{"type":"result","is_error":true,"num_turns":1,"result":"API Error: 429 rate_limit_error"}'; exit 1`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			w := Workspace{Dir: filepath.Join(root, DefaultDir)}
			os.MkdirAll(w.Dir, 0o755)
			cfg := "agent:\n  profile: claude\n  command: |\n    echo run >> launches; " + tc.agent + "\nretry:\n  max_retries: 2\n" +
				"gates:\n  - name: check\n    command: 'echo not yet; exit 1'\n"
			if err := os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := w.Run(context.Background(), RunOptions{Task: "x"})
			launches, _ := os.ReadFile(filepath.Join(root, "launches"))
			q, _ := os.ReadFile(w.Path(QueueFile))
			if tc.stops {
				if err == nil || !strings.Contains(err.Error(), "the agent could not work: the model API refused it") || !strings.Contains(err.Error(), "nothing was counted") ||
					tc.name == "refused-turn" && !strings.Contains(err.Error(), `(exit 1: "API Error: Request rejected (429) · This request`) {
					t.Fatalf("Run: %v", err)
				}
				if string(launches) != "run\n" || res.Outcome != RunError || strings.Contains(string(q), "## ISSUE-") {
					t.Errorf("launched %q, outcome %s, queue:\n%s", launches, res.Outcome, q)
				}
				return
			}
			if err != nil || strings.Count(string(launches), "run") < 2 {
				t.Errorf("Run: %v, launched %q: an agent that worked is retried as usual", err, launches)
			}
		})
	}
}

// Codex reports a resumed thread's running totals: each launch's usage row
// holds what that launch used (200/40/20 each time here), not the total
// again.
func TestRunCodexUsagePerLaunch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	os.MkdirAll(w.Dir, 0o755)
	agent := `n=$(( $(cat n 2>/dev/null || echo 0) + 1 )); echo $n > n; ` +
		`echo '{"type":"thread.started","thread_id":"t-1"}'; ` +
		`echo "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":$((200*n)),\"cached_input_tokens\":$((20*n)),\"output_tokens\":$((40*n))}}"`
	if err := os.WriteFile(filepath.Join(root, "agent.sh"), []byte(agent+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "retry:\n  strategy: same\nagent:\n  profile: codex\n  command: sh agent.sh\n  resume_command: sh agent.sh\n" +
		"gates:\n  - name: third\n    command: 'test \"$(cat n)\" -ge 3'\n"
	if err := os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.Run(context.Background(), RunOptions{Task: "x"})
	if err != nil || res.Outcome != RunPassed || len(res.Agents) != 3 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	for i, a := range res.Agents {
		if u := a.Usage; u == nil || u.InputTokens != 200 || u.OutputTokens != 40 || u.CacheReadTokens != 20 || u.Session != "t-1" {
			t.Errorf("launch %d: usage %+v; want 200/40/20 of thread t-1", i+1, u)
		}
	}
}

// A start failure quotes the agent's line whole up to 200 characters, and
// cuts a longer one to 199 and "…".
func TestQuoteLineCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{strings.Repeat("é", 200), strings.Repeat("é", 200)},
		{strings.Repeat("é", 201), strings.Repeat("é", 199) + "…"},
		{"a\x1b[31mred\x1b[0m", "ared"},
	} {
		if got := quoteLine(tc.in); got != tc.want {
			t.Errorf("quoteLine(%d runes) = %d runes %q", len([]rune(tc.in)), len([]rune(got)), got)
		}
	}
}
