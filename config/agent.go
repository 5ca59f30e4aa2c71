package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The agent profiles of agent.profile: the coding agent CLIs orchestrate knows
// how to start headless, resume by session, and read usage from.
const (
	ProfileClaude   = "claude"
	ProfileCodex    = "codex"
	ProfileGemini   = "gemini"
	ProfileAider    = "aider"
	ProfileOpencode = "opencode"
	ProfileCursor   = "cursor"
	ProfileCustom   = "custom"
)

// Profiles lists the profile names.
var Profiles = []string{ProfileClaude, ProfileCodex, ProfileGemini, ProfileAider, ProfileOpencode, ProfileCursor, ProfileCustom}

// EnvSessionID is the environment variable that holds the agent's pinned
// session: the ID orchestrate chose for a fresh start (a UUID), or the one the
// agent reported, for a resume. Commands use it as "$ORCHESTRATE_SESSION_ID".
const EnvSessionID = "ORCHESTRATE_SESSION_ID"

// How an agent's session is pinned.
const (
	// SessionChosen: orchestrate chooses the session ID (a UUID in
	// $ORCHESTRATE_SESSION_ID) and the command starts the session under it.
	SessionChosen = "chosen"
	// SessionReported: the agent chooses the ID and reports it in its
	// output, where orchestrate reads it for the resume.
	SessionReported = "reported"
)

// How an agent reports its session and usage in its output (Usage formats).
const (
	UsageClaudeJSON   = "claude-json"   // --output-format json: one result object
	UsageCodexJSONL   = "codex-jsonl"   // codex exec --json: thread.started, turn.completed events
	UsageGeminiJSON   = "gemini-json"   // --output-format json: session_id, stats
	UsageCursorJSON   = "cursor-json"   // --output-format json: one result object, as claude's
	UsageOpencodeJSON = "opencode-json" // run --format json: events with sessionID, step tokens and cost
	UsageAiderText    = "aider-text"    // "Tokens: 12k sent, 133 received. Cost: $0.04 message, $0.10 session."
)

// Profile is what orchestrate knows of one agent CLI.
type Profile struct {
	Name string
	// Command starts a fresh agent with the prompt on its stdin (also in
	// $ORCHESTRATE_PROMPT_FILE); %s is where the allowed check commands go.
	Command string
	// Resume continues the pinned session ($ORCHESTRATE_SESSION_ID); ""
	// when the agent cannot resume a session by its ID.
	Resume string
	// Review runs a reviewer: read-only, never resumed, never saved as the
	// directory's latest session; the prompt is $ORCHESTRATE_REVIEW_PROMPT,
	// the diff on stdin and in $ORCHESTRATE_REVIEW_DIFF.
	Review string
	// Session says how the session is pinned: SessionChosen or SessionReported.
	Session string
	// Usage says how the output reports the session, turns, tokens and cost.
	Usage string
	// Permissions says, for docs/agents.md and validate, what the command lets
	// the agent do.
	Permissions string
}

// The claude profile: edits are accepted (acceptEdits), shell commands only
// those of the gates (--allowedTools "Bash(CMD *)"), everything else that
// would ask is refused (headless, nobody answers).
const claudeFlags = `--output-format json --permission-mode acceptEdits`

var profiles = map[string]Profile{
	ProfileClaude: {
		Name:        ProfileClaude,
		Command:     `claude -p --session-id "$ORCHESTRATE_SESSION_ID" ` + claudeFlags + `%s`,
		Resume:      `claude -p --resume "$ORCHESTRATE_SESSION_ID" ` + claudeFlags + `%s`,
		Review:      `claude -p --no-session-persistence --tools Read,Grep,Glob -- "$ORCHESTRATE_REVIEW_PROMPT"`,
		Session:     SessionChosen,
		Usage:       UsageClaudeJSON,
		Permissions: "edits files in the working tree (--permission-mode acceptEdits); runs only the gates' commands in Bash (--allowedTools); anything else that would ask for permission is refused",
	},
	ProfileCodex: {
		Name:        ProfileCodex,
		Command:     `codex exec --json --sandbox workspace-write%s -`,
		Resume:      `codex exec --json --sandbox workspace-write%s resume "$ORCHESTRATE_SESSION_ID" -`,
		Review:      `codex exec --sandbox read-only "$ORCHESTRATE_REVIEW_PROMPT"`,
		Session:     SessionReported,
		Usage:       UsageCodexJSONL,
		Permissions: "edits files and runs commands inside the working tree's sandbox (--sandbox workspace-write: no network, nothing written outside the tree but Go's build cache when a gate runs go: --add-dir); never asks",
	},
	ProfileGemini: {
		Name:        ProfileGemini,
		Command:     `gemini --output-format json --approval-mode auto_edit%s`,
		Resume:      `gemini --output-format json --approval-mode auto_edit --resume "$ORCHESTRATE_SESSION_ID"%s`,
		Review:      `gemini --approval-mode plan -p "$ORCHESTRATE_REVIEW_PROMPT"`,
		Session:     SessionReported,
		Usage:       UsageGeminiJSON,
		Permissions: "edits files without asking (--approval-mode auto_edit); runs only the gates' commands in its shell (--allowed-tools), which it does not offer headless otherwise",
	},
	ProfileAider: {
		Name:        ProfileAider,
		Command:     `aider --yes-always --no-auto-commits --no-pretty --message-file "$ORCHESTRATE_PROMPT_FILE"`,
		Review:      `aider --chat-mode ask --no-auto-commits --no-pretty --yes-always --message "$ORCHESTRATE_REVIEW_PROMPT"`,
		Usage:       UsageAiderText,
		Permissions: "edits the files it adds to the chat and answers yes to its own questions (--yes-always), commits nothing (--no-auto-commits); no pinned session to resume, so every loop starts fresh",
	},
	ProfileOpencode: {
		Name:        ProfileOpencode,
		Command:     `opencode run --format json "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
		Resume:      `opencode run --format json --session "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
		Review:      `OPENCODE_CONFIG_CONTENT='{"agent":{"plan":{"permission":{"edit":"deny","bash":"deny","task":"deny","webfetch":"deny"}}}}' opencode run --agent plan "$ORCHESTRATE_REVIEW_PROMPT"`,
		Session:     SessionReported,
		Usage:       UsageOpencodeJSON,
		Permissions: "does what the permission section of opencode.json allows (its build agent edits and runs commands by default; narrow it there)",
	},
	ProfileCursor: {
		Name:        ProfileCursor,
		Command:     `cursor-agent -p --output-format json --trust --force "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
		Resume:      `cursor-agent -p --output-format json --trust --force --resume "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
		Review:      `cursor-agent -p --trust "$ORCHESTRATE_REVIEW_PROMPT"`,
		Session:     SessionReported,
		Usage:       UsageCursorJSON,
		Permissions: "applies its file changes and runs commands unless .cursor/cli.json denies them (--force); narrow it with deny rules there",
	},
	ProfileCustom: {
		Name:        ProfileCustom,
		Session:     SessionChosen,
		Permissions: "whatever your command grants",
	},
}

// LookupProfile returns the profile called name.
func LookupProfile(name string) (Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// AgentCommands returns a profile's fresh and resume commands, the claude
// and gemini profiles' allowing the given check commands (the gates') in
// their shell tools.
func (p Profile) AgentCommands(checks []string) (command, resume string) {
	allowed := ""
	switch p.Name {
	case ProfileClaude:
		allowed = claudeAllowedTools(checks)
	case ProfileGemini:
		allowed = geminiAllowedTools(checks)
	case ProfileCodex:
		allowed = codexWritableDirs(checks)
	}
	fill := func(s string) string {
		if strings.Contains(s, "%s") {
			return fmt.Sprintf(s, allowed)
		}
		return s
	}
	return fill(p.Command), fill(p.Resume)
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

// codexWritableDirs returns the --add-dir arguments (with their leading
// space) that the check commands need writable beside the working tree in
// codex's workspace-write sandbox: Go's build cache for a go command, where
// go test writes what it builds (the sandbox makes the rest of the disk
// read-only, and go test fails with "read-only file system" on any
// package it has not built before). "" when none does.
func codexWritableDirs(checks []string) string {
	for _, c := range checks {
		if f := strings.Fields(c); len(f) > 0 && f[0] == "go" {
			return ` --add-dir "$(go env GOCACHE)"`
		}
	}
	return ""
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

func allowedArg(flag string, rules []string) string {
	if len(rules) == 0 {
		return ""
	}
	return flag + strings.Join(rules, " ")
}

// checkRules returns a quoted rule per check command, made by rule from
// its first two words (prefix: the command with more arguments), or from
// the whole command when its second word is an option ("sh -c …",
// "python -m …": a wildcard after an option would allow any program);
// none for a command that would need quoting, none twice.
func checkRules(checks []string, rule func(words string, prefix bool) string) []string {
	var rules []string
	seen := map[string]bool{}
	for _, c := range checks {
		f := strings.Fields(c)
		if len(f) == 0 {
			continue
		}
		r := rule(f[0], true)
		switch {
		case len(f) > 1 && strings.HasPrefix(f[1], "-"):
			r = rule(strings.Join(f, " "), false)
		case len(f) > 1:
			r = rule(f[0]+" "+f[1], true)
		}
		if strings.ContainsAny(r, "\"'`$\\") || seen[r] {
			continue
		}
		seen[r] = true
		rules = append(rules, `"`+r+`"`)
	}
	return rules
}

// CheckCommands returns the commands of the command gates.
func CheckCommands(gates []Gate) []string {
	var out []string
	for _, g := range gates {
		if g.Kind() == TypeCommand && g.Command != "" {
			out = append(out, g.Command)
		}
	}
	return out
}

// reviewer fills in the reviewer command from the profile, when the file
// sets none: a custom agent reviews with its own command, the prompt as its
// argument.
func (a *Agent) reviewer() {
	switch {
	case a.Profile != "":
	case a.CommandSet:
		// A command of one's own, with no profile named, is a custom agent:
		// it gets no other agent's resume, reviewer or usage format.
		a.Profile = ProfileCustom
	default:
		a.Profile = ProfileClaude
	}
	if a.ReviewCommand != "" {
		return
	}
	if p, ok := LookupProfile(a.Profile); ok && p.Review != "" {
		a.ReviewCommand = p.Review
	} else if a.Command != "" {
		a.ReviewCommand = a.Command + ` "$ORCHESTRATE_REVIEW_PROMPT"`
	}
}

// applyProfile fills in what the file left out of the agent section from its
// profile: commands, session pinning, usage format. When the file sets the
// command, the resume command is the one the file sets with it, or none: a
// resume command belongs to its agent, and another agent's would resume
// something else.
func (a *Agent) applyProfile(gates []Gate) {
	p, ok := LookupProfile(a.Profile)
	if !ok {
		return
	}
	a.Session, a.Usage = p.Session, p.Usage
	if !a.CommandSet {
		command, resume := p.AgentCommands(CheckCommands(gates))
		a.Command = command
		if !a.ResumeSet {
			a.ResumeCommand = resume
		}
	}
}

// FormatAgent writes a's settings as the YAML of an agent: section that
// parses back to the same agent, for orchestrate validate --explain.
func FormatAgent(a Agent) string {
	var b strings.Builder
	b.WriteString("agent:\n")
	fmt.Fprintf(&b, "  profile: %s\n", a.Profile)
	for _, kv := range []struct{ k, v string }{{"command", a.Command}, {"resume_command", a.ResumeCommand}, {"review_command", a.ReviewCommand}} {
		if kv.v != "" {
			fmt.Fprintf(&b, "  %s: %s\n", kv.k, yamlString(kv.v))
		}
	}
	fmt.Fprintf(&b, "  timeout: %s\n", shortDuration(a.Timeout))
	if len(a.Prices) > 0 {
		b.WriteString("  prices:\n")
		models := make([]string, 0, len(a.Prices))
		for m := range a.Prices {
			models = append(models, m)
		}
		sort.Strings(models)
		num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
		for _, m := range models {
			p := a.Prices[m]
			fmt.Fprintf(&b, "    %s: {input: %s, output: %s, cache_read: %s}\n", yamlString(m), num(p.Input), num(p.Output), num(p.CacheRead))
		}
	}
	return b.String()
}
