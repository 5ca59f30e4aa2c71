// Package agentcli knows the coding agent CLIs orchestrate drives and
// answers: Claude Code, Codex CLI, Gemini CLI, opencode, Cursor's agent
// and aider.
//
// Each CLI has a file of its own (claude.go, codex.go, gemini.go,
// opencode.go, cursor.go, aider.go). A CLI's file holds its profile (the
// command lines that start it headless, resume its session and run a
// reviewer), what its output says of a launch's session and usage, the
// lines that say it could not work, its hooks (the settings file they are
// registered in, their events, their input and output, the unit of their
// timeout), and its trust and permission rules. What they share lives
// beside them: the registry of profiles and the command lines' allowed
// checks (agentcli.go), the hook protocol (hook.go), the reading of the
// output (output.go) and the start failures (startfail.go).
//
// The packages config, loop and the orchestrate command ask this package
// by a profile's name (Lookup), a hook agent's name (HookAgents,
// ProjectDirEnv, HookAnswer) or a usage format (ParseOutput). It imports no
// package of the module but internal/.
package agentcli

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Custom is the profile of an agent whose command is the user's own: it
// gets no other agent's resume, reviewer or usage format.
const Custom = "custom"

// Profiles lists the profile names of agent.profile, custom last.
var Profiles = []string{Claude, Codex, Gemini, Aider, Opencode, Cursor, Custom}

// How an agent's session is pinned.
const (
	// SessionChosen: orchestrate chooses the session ID (a UUID in
	// $ORCHESTRATE_SESSION_ID) and the command starts the session under it.
	SessionChosen = "chosen"
	// SessionReported: the agent chooses the ID and reports it in its
	// output, where orchestrate reads it for the resume.
	SessionReported = "reported"
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
	// Program is the CLI's program on the PATH, and Install how to install
	// it; "" for the custom profile.
	Program, Install string
	// Hooks is how the CLI keeps its hooks; nil when it has no hook that
	// runs when it stops.
	Hooks *Hooks

	// allowed returns what takes the %s of Command and Resume for the
	// given check commands; nil for nothing.
	allowed func(checks []string) string
	// failures are the CLI's own start failures (see StartFailure).
	failures []StartFailure
	// projectDirs are the environment variables that name the project's
	// root in a hook's environment, its own first.
	projectDirs []string
	// trust reads whether the CLI trusts a repository; nil when it has no
	// such rule.
	trust func(TrustCheck) Trust
}

var profiles = map[string]Profile{
	Claude:   claude,
	Codex:    codex,
	Gemini:   gemini,
	Aider:    aider,
	Opencode: opencode,
	Cursor:   cursor,
	Custom: {
		Name:        Custom,
		Session:     SessionChosen,
		Permissions: "whatever your command grants",
	},
}

// Lookup returns the profile called name.
func Lookup(name string) (Profile, bool) {
	p, ok := profiles[name]
	return p, ok
}

// AgentCommands returns a profile's fresh and resume commands, the claude
// and gemini profiles' allowing the given check commands (the gates') in
// their shell tools.
func (p Profile) AgentCommands(checks []string) (command, resume string) {
	allowed := ""
	if p.allowed != nil {
		allowed = p.allowed(checks)
	}
	fill := func(s string) string {
		if strings.Contains(s, "%s") {
			return fmt.Sprintf(s, allowed)
		}
		return s
	}
	return fill(p.Command), fill(p.Resume)
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

// TrustCheck is what a CLI's trust rule reads: the repository, the
// user's home directory, the agent command, and the environment.
type TrustCheck struct {
	Repo, Home, Command string
	Getenv              func(string) string
}

// Trust is what a CLI's own files say of a repository: whether it trusts
// it, what they say, and what to do when it does not.
type Trust struct {
	OK          bool
	Detail, Fix string
}

// Trusts reads whether the CLI trusts c.Repo; ok is false when the CLI has
// no trust rule.
func (p Profile) Trusts(c TrustCheck) (t Trust, ok bool) {
	if p.trust == nil {
		return Trust{}, false
	}
	return p.trust(c), true
}

// Program returns the program a command line starts: its first word, as
// sh would split it; "" for none.
func Program(command string) string {
	if w := shellWords(command); len(w) > 0 {
		return w[0]
	}
	return ""
}

// shellWords splits a command line into words as sh would, for quotes
// and backslashes; nothing is expanded.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'':
			cur.WriteByte(c)
		case quote == 0 && (c == '\'' || c == '"'):
			quote, in = c, true
		case c == '\\' && quote != '\'' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case quote == 0 && (c == ' ' || c == '\t' || c == '\n'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
