package agentcli

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// Gemini is Gemini CLI's profile, and the agent of its hooks.
const Gemini = "gemini"

// UsageGeminiJSON is Gemini CLI's --output-format json: session_id, stats.
const UsageGeminiJSON = "gemini-json"

var gemini = Profile{
	Name:        Gemini,
	Command:     `gemini --output-format json --approval-mode auto_edit%s`,
	Resume:      `gemini --output-format json --approval-mode auto_edit --resume "$ORCHESTRATE_SESSION_ID"%s`,
	Review:      `gemini --approval-mode plan -p "$ORCHESTRATE_REVIEW_PROMPT"`,
	Session:     SessionReported,
	Usage:       UsageGeminiJSON,
	Permissions: "edits files without asking (--approval-mode auto_edit); runs only the gates' commands in its shell (--allowed-tools), which it does not offer headless otherwise",
	Program:     "gemini",
	Install:     "npm install -g @google/gemini-cli",
	Hooks:       &Hooks{Path: ".gemini/settings.json", StartEvent: "SessionStart", StopEvent: "AfterAgent", Millis: true},
	allowed:     geminiAllowedTools,
	failures:    geminiStartFailures,
	projectDirs: []string{"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
	trust:       geminiTrust,
}

// geminiAllowedTools returns the --allowed-tools argument (with its leading
// space) that lets Gemini CLI run each check command headless, where its
// shell tool is otherwise not offered: "run_shell_command(go test)", a
// prefix of the commands it allows, for "go test ./..."; the rules are
// claudeAllowedTools'. "" when there are none.
func geminiAllowedTools(checks []string) string {
	return allowedArg(" --allowed-tools ", checkRules(checks, func(words string, _ bool) string {
		return "run_shell_command(" + words + ")"
	}))
}

var geminiStartFailures = []StartFailure{
	{Code: 55, Match: `not running in a trusted directory`,
		What: "Gemini CLI does not trust this folder",
		Fix:  "trusting a folder is your decision: run gemini here once and trust it, or, for a repository you trust, set GEMINI_CLI_TRUST_WORKSPACE=true or add --skip-trust to agent.command"},
	{Code: 41, What: "Gemini CLI has no authentication method set up",
		Fix: "set GEMINI_API_KEY and choose it in ~/.gemini/settings.json (security.auth.selectedType: gemini-api-key), or sign in by running gemini once"},
}

// parseGemini reads Gemini CLI's --output-format json object: session_id,
// response, and stats, whose models each count their tokens.
func parseGemini(out []byte) Report {
	var r Report
	for _, o := range jsonObjects(out) {
		if _, ok := o["response"]; !ok && str(o, "session_id") == "" {
			continue
		}
		r = Report{Result: str(o, "response")}
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

// geminiSettings are Gemini CLI's project and user settings.json (the
// user's under home; none when home is "").
func geminiSettings(repo, home string) []string {
	files := []string{filepath.Join(repo, ".gemini", "settings.json")}
	if home != "" {
		files = append(files, filepath.Join(home, ".gemini", "settings.json"))
	}
	return files
}

// geminiAnswer is a hook's answer as Gemini CLI reads it: "deny" where
// Claude Code's says "block".
func geminiAnswer(out HookOutput) HookOutput {
	if out.Decision == "block" {
		out.Decision = "deny"
	}
	return out
}

// geminiTrust: Gemini CLI refuses a folder it was not told to trust (exit
// 55), unless the command skips the check or the environment trusts it.
func geminiTrust(c TrustCheck) Trust {
	cmd := c.Command
	if strings.Contains(cmd, "--skip-trust") || strings.Contains(cmd, "GEMINI_CLI_TRUST_WORKSPACE=true") || c.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return Trust{OK: true, Detail: "gemini: the agent command (or the environment) skips the folder trust check"}
	}
	file := filepath.Join(c.Home, ".gemini", "trustedFolders.json")
	data, _, _ := fsx.ReadFile(file)
	var trusted map[string]string
	_ = json.Unmarshal(data, &trusted)
	for dir, level := range trusted {
		switch {
		case level == "TRUST_FOLDER" && within(c.Repo, dir),
			level == "TRUST_PARENT" && within(c.Repo, filepath.Dir(dir)):
			return Trust{OK: true, Detail: "gemini trusts " + c.Repo + " (" + file + ": " + dir + ")"}
		}
	}
	return Trust{Detail: "gemini does not trust " + c.Repo + ": it exits 55 before any work",
		Fix: "trust it yourself (run gemini there once, or add \"" + c.Repo + "\": \"TRUST_FOLDER\" to " + file + "), or add --skip-trust to agent.command"}
}
