package config

import (
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// Each profile's command lines, as its CLI's documentation gives them: the
// headless start, the resume of exactly the pinned session, the read-only
// reviewer, and how the session is pinned.
func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		profile, command, resume, review, session, usage string
	}{
		{agentcli.Claude,
			`claude -p --session-id "$ORCHESTRATE_SESSION_ID" --output-format json --permission-mode acceptEdits --allowedTools "Bash(go test *)" "Bash(make *)"`,
			`claude -p --resume "$ORCHESTRATE_SESSION_ID" --output-format json --permission-mode acceptEdits --allowedTools "Bash(go test *)" "Bash(make *)"`,
			`claude -p --no-session-persistence --tools Read,Grep,Glob -- "$ORCHESTRATE_REVIEW_PROMPT"`, agentcli.SessionChosen, agentcli.UsageClaudeJSON},
		{agentcli.Codex, `codex exec --json --sandbox workspace-write --add-dir "$(go env GOCACHE)" -`,
			`codex exec --json --sandbox workspace-write --add-dir "$(go env GOCACHE)" resume "$ORCHESTRATE_SESSION_ID" -`,
			`codex exec --sandbox read-only "$ORCHESTRATE_REVIEW_PROMPT"`, agentcli.SessionReported, agentcli.UsageCodexJSONL},
		{agentcli.Gemini, `gemini --output-format json --approval-mode auto_edit --allowed-tools "run_shell_command(go test)" "run_shell_command(make)"`,
			`gemini --output-format json --approval-mode auto_edit --resume "$ORCHESTRATE_SESSION_ID" --allowed-tools "run_shell_command(go test)" "run_shell_command(make)"`,
			`gemini --approval-mode plan -p "$ORCHESTRATE_REVIEW_PROMPT"`, agentcli.SessionReported, agentcli.UsageGeminiJSON},
		{agentcli.Aider, `aider --yes-always --no-auto-commits --no-pretty --message-file "$ORCHESTRATE_PROMPT_FILE"`, ``,
			`aider --chat-mode ask --no-auto-commits --no-pretty --yes-always --message "$ORCHESTRATE_REVIEW_PROMPT"`, "", agentcli.UsageAiderText},
		{agentcli.Opencode, `opencode run --format json "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
			`opencode run --format json --session "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
			`OPENCODE_CONFIG_CONTENT='{"agent":{"plan":{"permission":{"edit":"deny","bash":"deny","task":"deny","webfetch":"deny"}}}}' opencode run --agent plan "$ORCHESTRATE_REVIEW_PROMPT"`, agentcli.SessionReported, agentcli.UsageOpencodeJSON},
		{agentcli.Cursor, `cursor-agent -p --output-format json --trust --force "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
			`cursor-agent -p --output-format json --trust --force --resume "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
			`cursor-agent -p --trust "$ORCHESTRATE_REVIEW_PROMPT"`, agentcli.SessionReported, agentcli.UsageCursorJSON},
	} {
		yaml := "agent:\n  profile: " + tc.profile + "\ngates:\n  - name: t\n    command: go test ./...\n  - name: m\n    command: make\n"
		cfg, problems := parse("config.yaml", []byte(yaml))
		if len(problems) > 0 {
			t.Errorf("%s: %v", tc.profile, problems)
			continue
		}
		a := cfg.Agent
		if a.Command != tc.command || a.ResumeCommand != tc.resume || a.ReviewCommand != tc.review || a.Session != tc.session || a.Usage != tc.usage {
			t.Errorf("%s: agent = %+v\nwant command %s\nresume %s\nreview %s, session %q, usage %q", tc.profile, a, tc.command, tc.resume, tc.review, tc.session, tc.usage)
		}
		// Never "the most recent" session.
		for _, c := range []string{a.Command, a.ResumeCommand, a.ReviewCommand} {
			if strings.Contains(c, "--continue") || strings.Contains(c, "--last") || strings.Contains(c, "latest") {
				t.Errorf("%s: %q resumes the most recent session", tc.profile, c)
			}
		}
		// Reviewers get nothing that edits.
		for _, w := range []string{"acceptEdits", "workspace-write", "auto_edit", "--force", "--yes-always --no-auto-commits --no-pretty --message-file"} {
			if strings.Contains(a.ReviewCommand, w) {
				t.Errorf("%s: the reviewer %q can edit (%s)", tc.profile, a.ReviewCommand, w)
			}
		}
	}
}

// The agent section's rules: a command of one's own is a custom agent, with
// no other agent's resume; a profile named with a command keeps the
// profile's session and usage; problems name their key and line.
func TestAgentSection(t *testing.T) {
	for _, tc := range []struct {
		yaml    string
		profile string
		resume  string
		usage   string
		problem string
	}{
		{"agent:\n  command: my-agent\n", agentcli.Custom, "", "", ""},
		{"agent:\n  command: my-agent\n  resume_command: my-agent --again\n", agentcli.Custom, "my-agent --again", "", ""},
		{"agent:\n  profile: claude\n  command: claude -p --output-format json\n", agentcli.Claude, "", agentcli.UsageClaudeJSON, ""},
		{"agent:\n  profile: codex\n", agentcli.Codex, `codex exec --json --sandbox workspace-write resume "$ORCHESTRATE_SESSION_ID" -`, agentcli.UsageCodexJSONL, ""},
		{"agent:\n  profile: custom\n", agentcli.Custom, "", "", "config.yaml: agent.command: the custom profile needs a command (or choose a profile: claude, codex, gemini, aider, opencode, cursor)"},
		{"agent:\n  profile: custom\n  command: x\n", agentcli.Custom, "", "", ""},
		{"agent:\n  profile: chatgpt\n", "", "", "", "config.yaml:2: agent.profile"},
		{"retry:\n  strategy: same\nagent:\n  command: my-agent\n", agentcli.Custom, "", "",
			"config.yaml:2: retry.strategy: same resumes the agent, but agent.resume_command is not set: agent.command is set without one (a resume command belongs to its agent)"},
		{"retry:\n  strategy: same\nagent:\n  profile: aider\n", agentcli.Aider, "", agentcli.UsageAiderText,
			"config.yaml:2: retry.strategy: same resumes the agent, but agent.resume_command is not set: the aider profile cannot resume a session"},
		{"retry:\n  strategy: fresh\nagent:\n  command: my-agent\n", agentcli.Custom, "", "", ""},
	} {
		cfg, problems := parse("config.yaml", []byte(tc.yaml))
		got := ""
		if len(problems) > 0 {
			got = problems[0].String()
		}
		if tc.problem == "" && got != "" || !strings.HasPrefix(got, tc.problem) {
			t.Errorf("%q: problem %q; want %q", tc.yaml, got, tc.problem)
			continue
		}
		if tc.problem != "" && tc.profile == "" {
			continue
		}
		if cfg.Agent.Profile != tc.profile || cfg.Agent.ResumeCommand != tc.resume || cfg.Agent.Usage != tc.usage {
			t.Errorf("%q: agent = %+v; want profile %s, resume %q, usage %q", tc.yaml, cfg.Agent, tc.profile, tc.resume, tc.usage)
		}
	}
}
