package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/agentcli"
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

func (d *doctor) plugin() {
	for _, f := range agentcli.SettingsFiles(agentcli.Claude, d.repo, d.home) {
		if id := agentcli.PluginID(f); id != "" {
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
	file  agentcli.Hooks
}

func (d *doctor) hookFilesToRead() []agentHookFile {
	var out []agentHookFile
	for _, agent := range agentcli.HookAgents {
		cli, _ := agentcli.Lookup(agent)
		hf := *cli.Hooks
		out = append(out, agentHookFile{agent, filepath.Join(d.repo, filepath.FromSlash(hf.Path)), hf})
		if hf.Local != "" {
			out = append(out, agentHookFile{agent, filepath.Join(d.repo, filepath.FromSlash(hf.Local)), hf})
		}
		if d.home != "" && d.home != d.repo {
			out = append(out, agentHookFile{agent, filepath.Join(d.home, filepath.FromSlash(hf.Path)), hf})
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
		found, err := jsonsettings.FindHooks(data, f.file.Flat)
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
	for _, agent := range agentcli.HookAgents {
		if files := stops[agent]; len(files) > 1 {
			d.add("hooks", "problem", fmt.Sprintf("%s runs orchestrate's stop hook %d times per stop (%s)", agent, len(files), strings.Join(files, ", ")),
				"remove orchestrate's hooks from all but one of them")
		}
	}
	if len(stops[agentcli.Claude]) > 0 && d.plugged {
		d.add("hooks", "ok", "the plugin leaves the stop to "+stops[agentcli.Claude][0]+": the gates run once per stop", "")
	}
	if len(stops) == 0 && d.ws != "" {
		d.add("hooks", "note", "no agent's stop hook runs orchestrate here: only orchestrate run checks the agent's work", "claude plugin install orchestrate@orchestrate, or orchestrate init --agent claude")
	}
}

// timeout checks that a stop hook's timeout covers the gates.
func (d *doctor) timeout(f agentHookFile, h jsonsettings.Found) {
	if d.cfg == nil {
		return
	}
	got := f.file.Timeout(h.Timeout)
	if need := gatesTimeout(d.cfg); got < need {
		d.add("timeout", "problem", fmt.Sprintf("%s's stop hook in %s may run %s, the gates %s: it would be killed before they end", f.agent, f.path, got, need),
			"orchestrate init --agent "+f.agent+" (raises it)")
		return
	}
	d.add("timeout", "ok", fmt.Sprintf("%s's stop hook in %s: %s covers the gates", f.agent, f.path, got), "")
}

func (d *doctor) allowed() {
	if d.cfg == nil || d.cfg.Agent.Profile != agentcli.Claude {
		return
	}
	missing, ok := agentcli.DisallowedChecks(d.cfg.Agent.Command, config.CheckCommands(d.cfg.Gates))
	if !ok {
		return
	}
	if len(missing) == 0 {
		d.add("allowed", "ok", "the agent command's --allowedTools allow every command gate", "")
		return
	}
	d.add("allowed", "problem", fmt.Sprintf("the agent command's --allowedTools do not allow the gate command(s) %q: the agent cannot run them headless", missing),
		"add a rule such as \"Bash("+strings.Fields(missing[0])[0]+" *)\" to agent.command in config.yaml, or delete agent.command to use the profile's")
}
