package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
	"github.com/orchestrate-dev/orchestrate/loop"
)

var doctorCmd = &command{
	name:    "doctor",
	summary: "what is installed where (binary, plugin, hooks, agent CLI) and whether it works",
	usage: `Usage: orchestrate doctor [--dir DIR] [--json]

Says what is installed where and whether it works together, one line each,
with the command that fixes each problem:

  binary     this orchestrate's version, and whether the orchestrate on
             PATH (the one hooks run) is this one
  workspace  the .orchestrator/ found from here (walking up, as the hooks
             do), and whether its config is valid
  plugin     the Claude Code plugin (orchestrate@…), enabled for the user
             or the project
  hooks      orchestrate's hooks in each agent's settings, the repository's
             and the user's (.claude/settings.json, settings.local.json,
             .codex/hooks.json, .gemini/settings.json, .cursor/hooks.json),
             and whether one stop would run the gates more than once (the
             plugin leaves the work to a hook of the settings: that is once)
  timeout    whether each stop hook's timeout covers the gates (the serial
             ones one after another, then the parallel phase)
  mcp        whether each client (Claude Code, Codex, Gemini CLI, Cursor)
             has the MCP server, orchestrate mcp: the plugin ships it, or
             the project's or the user's settings name it
  allowed    whether the claude agent command's --allowedTools rules still
             allow each command gate
  agent      the agent CLI of agent.profile on PATH, its version, and
             whether it trusts this folder where it has such a notion
             (Gemini CLI's trustedFolders.json, Codex's projects in
             config.toml)

The lines start with ok, problem or note; a problem's line ends with
"fix: COMMAND". With --json: {"checks": [{"check", "status", "detail",
"fix"}…], "problems": N}.

Examples:
  orchestrate doctor
  orchestrate doctor --json | jq '.checks[] | select(.status == "problem")'

Exit codes: 0 no problem found; 1 a problem found (or an error); 2 usage.
`,
	run: runDoctor,
}

// finding is one line of doctor's report.
type finding struct {
	Check  string `json:"check"`
	Status string `json:"status"` // ok, problem, note
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctor gathers the findings of one run.
type doctor struct {
	home     string
	repo     string         // the repository root: the workspace's parent, or the working directory
	ws       string         // the workspace found, "" when none
	cfg      *config.Config // nil without a valid config
	plugged  bool           // the Claude Code plugin is enabled
	findings []finding
}

func (d *doctor) add(check, status, detail, fix string) {
	d.findings = append(d.findings, finding{Check: check, Status: status, Detail: detail, Fix: fix})
}

func runDoctor(e *env, args []string) error {
	if err := e.parseNone(e.flags("doctor"), args); err != nil {
		return err
	}
	d := &doctor{}
	d.home, _ = os.UserHomeDir()
	d.binary()
	d.workspace(e)
	d.plugin()
	d.hooks()
	d.mcp()
	d.allowed()
	d.agent(e.ctx)
	problems := 0
	for _, f := range d.findings {
		if f.Status == "problem" {
			problems++
		}
	}
	if e.json {
		if err := e.printJSON(map[string]any{"checks": d.findings, "problems": problems}); err != nil {
			return err
		}
	} else {
		for _, f := range d.findings {
			line := fmt.Sprintf("%-7s %-9s %s", f.Status, f.Check, f.Detail)
			if f.Fix != "" {
				line += "; fix: " + f.Fix
			}
			fmt.Fprintln(e.stdout, line)
		}
	}
	if problems > 0 {
		return withCode(exitError, fmt.Errorf("doctor: %d problem(s) found", problems))
	}
	return nil
}

// installHint is how to install orchestrate from a clone of its repository.
const installHint = "go install ./cmd/orchestrate in a clone of orchestrate, with $(go env GOPATH)/bin on PATH"

func (d *doctor) binary() {
	self, _ := os.Executable()
	d.add("binary", "ok", readBuildVersion().String()+" at "+self, "")
	onPath, err := exec.LookPath("orchestrate")
	if err != nil {
		d.add("binary", "problem", "orchestrate is not on PATH: the hooks run orchestrate by that name", installHint)
		return
	}
	if !sameFile(onPath, self) {
		d.add("binary", "note", "the orchestrate on PATH is "+onPath+", not this one: the hooks run that one", "")
	}
}

func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func (d *doctor) workspace(e *env) {
	cwd, _ := os.Getwd()
	d.repo = cwd
	if filepath.IsAbs(e.dir) {
		if fi, err := os.Stat(e.dir); err == nil && fi.IsDir() {
			d.ws = e.dir
		}
	} else {
		d.ws = loop.FindWorkspace(e.dir, nil, cwd)
	}
	if d.ws == "" {
		d.add("workspace", "note", "no "+e.dir+" here or above it: the hooks and the plugin do nothing in this repository", "orchestrate init")
		return
	}
	ws := loop.Workspace{Dir: d.ws}
	d.repo = ws.Root()
	cfg, err := ws.Config()
	if err != nil {
		d.add("workspace", "problem", d.ws+": "+err.Error(), "orchestrate validate, then edit "+filepath.Join(d.ws, "config.yaml"))
		return
	}
	d.cfg = cfg
	d.add("workspace", "ok", fmt.Sprintf("%s: %d gate(s), agent profile %s", d.ws, len(cfg.Gates), cfg.Agent.Profile), "")
}

// pluginID is the orchestrate plugin's ID (orchestrate@MARKETPLACE)
// enabled in a Claude Code settings file, "" when none is.
func pluginID(file string) string {
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

func (d *doctor) plugin() {
	for _, f := range claudeSettings(d.repo, d.home) {
		if id := pluginID(f); id != "" {
			d.plugged = true
			d.add("plugin", "ok", "the Claude Code plugin "+id+" is enabled in "+f, "")
			return
		}
	}
	d.add("plugin", "note", "the Claude Code plugin is not enabled", "claude plugin marketplace add <a clone of orchestrate> && claude plugin install orchestrate@orchestrate")
}

// agentHookFile is one hooks file of an agent, the repository's or the
// user's.
type agentHookFile struct {
	agent string
	path  string
	file  hookFile
}

func (d *doctor) hookFilesToRead() []agentHookFile {
	var out []agentHookFile
	for _, agent := range loop.HookAgents {
		hf, ok := hookFiles[agent]
		if !ok {
			continue
		}
		out = append(out, agentHookFile{agent, filepath.Join(d.repo, filepath.FromSlash(hf.path)), hf})
		if agent == loop.AgentClaude {
			out = append(out, agentHookFile{agent, filepath.Join(d.repo, ".claude", "settings.local.json"), hf})
		}
		if d.home != "" && d.home != d.repo {
			out = append(out, agentHookFile{agent, filepath.Join(d.home, filepath.FromSlash(hf.path)), hf})
		}
	}
	return out
}

func (d *doctor) hooks() {
	stops := map[string][]string{} // agent: the files with its stop hook
	for _, f := range d.hookFilesToRead() {
		data, ok, err := fsx.ReadFile(f.path)
		if err != nil || !ok {
			continue
		}
		found, err := jsonsettings.FindHooks(data, f.file.flat)
		if err != nil {
			d.add("hooks", "problem", f.path+": "+err.Error(), "fix the JSON, then orchestrate init --agent "+f.agent)
			continue
		}
		for _, h := range found {
			if h.Sub != "stop" {
				continue
			}
			stops[f.agent] = append(stops[f.agent], f.path)
			d.add("hooks", "ok", fmt.Sprintf("%s's stop hook in %s", f.agent, f.path), "")
			d.timeout(f, h)
		}
	}
	for _, agent := range loop.HookAgents {
		if files := stops[agent]; len(files) > 1 {
			d.add("hooks", "problem", fmt.Sprintf("%s runs orchestrate's stop hook %d times per stop (%s)", agent, len(files), strings.Join(files, ", ")),
				"remove orchestrate's hooks from all but one of them")
		}
	}
	if len(stops[loop.AgentClaude]) > 0 && d.plugged {
		d.add("hooks", "ok", "the plugin leaves the stop to "+stops[loop.AgentClaude][0]+": the gates run once per stop", "")
	}
	if len(stops) == 0 && d.ws != "" {
		d.add("hooks", "note", "no agent's stop hook runs orchestrate here: only orchestrate run checks the agent's work", "claude plugin install orchestrate@orchestrate, or orchestrate init --agent claude")
	}
}

// defaultHookTimeout is the timeout of a hook that sets none (Claude
// Code's, Codex's and Gemini CLI's default).
const defaultHookTimeout = 60 * time.Second

// timeout checks that a stop hook's timeout covers the gates.
func (d *doctor) timeout(f agentHookFile, h jsonsettings.Found) {
	if d.cfg == nil {
		return
	}
	got := defaultHookTimeout
	if h.Timeout > 0 {
		unit := time.Second
		if f.file.millis {
			unit = time.Millisecond
		}
		got = time.Duration(h.Timeout * float64(unit))
	}
	if need := gatesTimeout(d.cfg); got < need {
		d.add("timeout", "problem", fmt.Sprintf("%s's stop hook in %s may run %s, the gates %s: it would be killed before they end", f.agent, f.path, got, need),
			"orchestrate init --agent "+f.agent+" (raises it)")
		return
	}
	d.add("timeout", "ok", fmt.Sprintf("%s's stop hook in %s: %s covers the gates", f.agent, f.path, got), "")
}

func (d *doctor) allowed() {
	if d.cfg == nil || d.cfg.Agent.Profile != config.ProfileClaude {
		return
	}
	rules, ok := allowedToolsRules(d.cfg.Agent.Command)
	if !ok {
		return
	}
	var missing []string
	for _, c := range config.CheckCommands(d.cfg.Gates) {
		if !slices.ContainsFunc(rules, func(r string) bool { return bashRuleAllows(r, c) }) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		d.add("allowed", "ok", "the agent command's --allowedTools allow every command gate", "")
		return
	}
	d.add("allowed", "problem", fmt.Sprintf("the agent command's --allowedTools do not allow the gate command(s) %q: the agent cannot run them headless", missing),
		"add a rule such as \"Bash("+strings.Fields(missing[0])[0]+" *)\" to agent.command in config.yaml, or delete agent.command to use the profile's")
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
