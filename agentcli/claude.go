package agentcli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// Claude is Claude Code's profile, and the agent of its hooks.
const Claude = "claude"

// UsageClaudeJSON is Claude Code's --output-format json: one result object.
const UsageClaudeJSON = "claude-json"

// The claude profile: edits are accepted (acceptEdits), shell commands only
// those of the gates (--allowedTools "Bash(CMD *)"), everything else that
// would ask is refused (headless, nobody answers).
const claudeFlags = `--output-format json --permission-mode acceptEdits`

var claude = Profile{
	Name:        Claude,
	Command:     `claude -p --session-id "$ORCHESTRATE_SESSION_ID" ` + claudeFlags + `%s`,
	Resume:      `claude -p --resume "$ORCHESTRATE_SESSION_ID" ` + claudeFlags + `%s`,
	Review:      `claude -p --no-session-persistence --tools Read,Grep,Glob -- "$ORCHESTRATE_REVIEW_PROMPT"`,
	Session:     SessionChosen,
	Usage:       UsageClaudeJSON,
	Permissions: "edits files in the working tree (--permission-mode acceptEdits); runs only the gates' commands in Bash (--allowedTools); anything else that would ask for permission is refused",
	Program:     "claude",
	Install:     "npm install -g @anthropic-ai/claude-code",
	Hooks: &Hooks{Path: ".claude/settings.json", Local: ".claude/settings.local.json", StartEvent: "SessionStart", StopEvent: "Stop",
		SlashCommand: ".claude/commands/orchestrate.md"},
	allowed:     claudeAllowedTools,
	projectDirs: []string{"CLAUDE_PROJECT_DIR"},
}

// claudeAllowedTools returns the --allowedTools argument (with its leading
// space) that lets Claude Code run each check command, and the same command
// with more arguments, in Bash: "Bash(go test *)" for "go test ./...",
// "Bash(pytest *)" for "pytest" (Claude Code's "X *" allows X alone too,
// and "pytest -q tests/test_x.py", which an agent runs to check one file).
// A command whose second word is an option ("sh -c …") is allowed exactly
// as it is; one that would need quoting is left out. "" when there are
// none.
func claudeAllowedTools(checks []string) string {
	return allowedArg(" --allowedTools ", checkRules(checks, func(words string, prefix bool) string {
		if prefix {
			return "Bash(" + words + " *)"
		}
		return "Bash(" + words + ")"
	}))
}

// DisallowedChecks returns the check commands that the rules after
// --allowedTools in a command line do not allow; ok is false when it has
// no --allowedTools.
func DisallowedChecks(command string, checks []string) (missing []string, ok bool) {
	rules, ok := allowedToolsRules(command)
	if !ok {
		return nil, false
	}
	for _, c := range checks {
		if !slices.ContainsFunc(rules, func(r string) bool { return bashRuleAllows(r, c) }) {
			missing = append(missing, c)
		}
	}
	return missing, true
}

// allowedToolsRules returns the rules after --allowedTools in a command
// line, unquoted; ok is false when it has none.
func allowedToolsRules(command string) (rules []string, ok bool) {
	words := shellWords(command)
	for i, w := range words {
		if w != "--allowedTools" && w != "--allowed-tools" {
			continue
		}
		ok = true
		for _, r := range words[i+1:] {
			if strings.HasPrefix(r, "-") {
				break
			}
			for _, part := range strings.Split(r, ",") {
				if part = strings.TrimSpace(part); part != "" {
					rules = append(rules, part)
				}
			}
		}
	}
	return rules, ok
}

// bashRuleAllows reports whether a Claude Code permission rule allows a
// shell command: Bash, Bash(CMD) exactly, Bash(PREFIX *) or Bash(PREFIX:*)
// the prefix alone or followed by more words.
func bashRuleAllows(rule, command string) bool {
	if rule == "Bash" {
		return true
	}
	inner, ok := strings.CutPrefix(rule, "Bash(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return false
	}
	inner = strings.TrimSuffix(inner, ")")
	command = strings.Join(strings.Fields(command), " ")
	for _, wild := range []string{" *", ":*"} {
		if prefix, ok := strings.CutSuffix(inner, wild); ok {
			return command == prefix || strings.HasPrefix(command, prefix+" ")
		}
	}
	return command == strings.Join(strings.Fields(inner), " ")
}

// parseResultObject reads Claude Code's (and Cursor's) result object:
// {"type": "result", "session_id", "num_turns", "usage": {…}, "total_cost_usd", "result"}.
func parseResultObject(out []byte) Report {
	var r Report
	for _, o := range jsonObjects(out) {
		if str(o, "type") != "result" {
			continue
		}
		u := obj(o, "usage")
		r = Report{Result: str(o, "result"), Usage: Usage{
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

// claudeSettings are the Claude Code settings files that can hold hooks,
// where a session in repo reads them: the repository's shared and local
// settings, then the user's (under home; none when home is "").
func claudeSettings(repo, home string) []string {
	files := []string{
		filepath.Join(repo, ".claude", "settings.json"),
		filepath.Join(repo, ".claude", "settings.local.json"),
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	return files
}

// PluginID is the orchestrate plugin's ID (orchestrate@MARKETPLACE)
// enabled in a Claude Code settings file, "" when none is.
func PluginID(file string) string {
	data, ok, err := fsx.ReadFile(file)
	if err != nil || !ok {
		return ""
	}
	var s struct {
		EnabledPlugins map[string]bool `json:"enabledPlugins"`
	}
	if json.Unmarshal(data, &s) != nil {
		return ""
	}
	var ids []string
	for id, on := range s.EnabledPlugins {
		if on && strings.HasPrefix(id, "orchestrate@") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// PluginListArgs are the arguments of the claude command that lists the
// installed plugins as JSON, each with the errors of its load (Claude Code
// 2.1.197 and newer).
var PluginListArgs = []string{"plugin", "list", "--json"}

// PluginLoadErrors reads what claude plugin list --json printed: the
// errors Claude Code met loading the plugin id (its hooks, commands,
// manifest), each once, and whether the list holds the plugin at all. An
// error means the output holds no list.
func PluginLoadErrors(out []byte, id string) (errs []string, listed bool, err error) {
	// Anything before the list (a notice) is not part of it.
	if i := bytes.IndexByte(out, '['); i > 0 {
		out = out[i:]
	}
	var list []struct {
		ID     string   `json:"id"`
		Errors []string `json:"errors"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, false, err
	}
	for _, p := range list {
		if p.ID != id {
			continue
		}
		listed = true
		for _, e := range p.Errors {
			if !slices.Contains(errs, e) {
				errs = append(errs, e)
			}
		}
	}
	return errs, listed, nil
}

// maxTranscriptTail is how much of a transcript's end LastAssistantText
// reads: the last message is there, and a long session's file is not read
// whole on every stop.
const maxTranscriptTail = 2 << 20

// LastAssistantText returns the text of the last assistant message of a
// Claude Code transcript (JSON lines; an assistant line is
// {"type": "assistant", "message": {"content": [{"type": "text", "text":
// …}, …]}}), a subagent's (isSidechain) left out: what the agent last said
// of its work, for the report's agent fixes. "" when there is none, or the
// file is not such a transcript.
func LastAssistantText(path string) string {
	if path == "" {
		return ""
	}
	// The agent client names the file: never a FIFO that would hang the
	// hook, nor a link, nor more than its tail.
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	off := max(st.Size()-maxTranscriptTail, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	lines := bytes.Split(data, []byte("\n"))
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // the first is cut
	}
	for i := len(lines) - 1; i >= 0; i-- {
		var entry struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			Message     struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(lines[i], &entry) != nil || entry.Type != "assistant" || entry.IsSidechain {
			continue
		}
		var text string
		if json.Unmarshal(entry.Message.Content, &text) == nil {
			if text = strings.TrimSpace(text); text != "" {
				return text
			}
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(entry.Message.Content, &blocks) != nil {
			continue
		}
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}
