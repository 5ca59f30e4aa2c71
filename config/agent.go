package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// EnvSessionID is the environment variable that holds the agent's pinned
// session: the ID orchestrate chose for a fresh start (a UUID), or the one the
// agent reported, for a resume. Commands use it as "$ORCHESTRATE_SESSION_ID".
const EnvSessionID = "ORCHESTRATE_SESSION_ID"

// CLI is what orchestrate knows of the agent's CLI, by its profile: a
// custom agent's knows nothing but the start failures every CLI says.
func (a Agent) CLI() agentcli.Profile {
	p, _ := agentcli.Lookup(a.Profile)
	return p
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
		a.Profile = agentcli.Custom
	default:
		a.Profile = agentcli.Claude
	}
	if a.ReviewCommand != "" {
		return
	}
	if p, ok := agentcli.Lookup(a.Profile); ok && p.Review != "" {
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
	p, ok := agentcli.Lookup(a.Profile)
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
