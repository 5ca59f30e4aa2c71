package main

import (
	"fmt"
	"strings"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

var validateCmd = &command{
	name:    "validate",
	summary: "list every problem in the queue, the session state and the config",
	usage: `Usage: orchestrate validate [--explain] [--json]

Checks issue_queue.md, session_state.md and config.yaml and prints every
problem as file:line: message: duplicate issue IDs, an issue with no field
table, a malformed ID, a count that is not a non-negative integer, an unknown
status, a table row with a missing cell, a boolean that is not true or false,
an item of an issue's Tests that is empty, names no gate or names a gate
config.yaml does not have, an unknown or mistyped config key, an agent section that cannot work
(retry.strategy same with no agent.resume_command, a custom profile with no
agent.command). When every loop will start a fresh agent (no resume command),
a note says so.

--explain also prints the agent and the gates as they run: the agent
profile's commands and how its session is pinned, gates.preset expanded,
changed and extended by gates.list, every default filled in, as an agent:
section and a gates: list that config.yaml could hold, each gate with where
it came from.

With --json: {"ok": bool, "problems": [{"file": "…", "line": N, "message": "…"}, …]},
and with --explain "agent": {"profile": "…", "command": "…", …}, "preset",
"human_wait" and "gates": [{"name": "…", "type": "…", …}, …].

Examples:
  orchestrate validate
  orchestrate validate --explain
  orchestrate --dir other/.orchestrator validate --json

Exit codes: 0 no problems, 1 problems found (or an error), 2 usage.
`,
	run: runValidate,
}

type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// gateJSON is a gate as validate --explain --json shows it.
type gateJSON struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Command     string            `json:"command,omitempty"`
	Timeout     string            `json:"timeout,omitempty"`
	WorkingDir  string            `json:"working_dir,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Enforcement string            `json:"enforcement"`
	MaxRetries  *int              `json:"max_retries,omitempty"`
	Serial      bool              `json:"serial"`
	FailFast    bool              `json:"fail_fast"`
	AutoRetry   bool              `json:"auto_retry"`
	Priority    string            `json:"priority,omitempty"`
	Hints       []string          `json:"hints,omitempty"`
	Prompt      string            `json:"prompt,omitempty"`
	Dimensions  []string          `json:"dimensions,omitempty"`
	FailOn      string            `json:"fail_on,omitempty"`
	Synthesis   string            `json:"synthesis,omitempty"`
	DiffBase    string            `json:"diff_base,omitempty"`
	When        string            `json:"when,omitempty"`
	Preset      string            `json:"preset,omitempty"`
	Line        int               `json:"line,omitempty"`
}

func gatesJSON(gates []config.Gate) []gateJSON {
	out := []gateJSON{}
	for _, g := range gates {
		j := gateJSON{
			Name: g.Name, Type: g.Kind(), Command: g.Command, WorkingDir: g.WorkingDir, Env: g.Env,
			Enforcement: string(g.Enforcement), Serial: g.Serial, FailFast: g.FailFast,
			AutoRetry: g.AutoRetry, Priority: g.Priority, Hints: g.Hints, Prompt: g.Prompt, FailOn: g.FailOn,
			Synthesis: g.Synthesis, DiffBase: g.DiffBase, Preset: g.Preset, Line: g.Line,
		}
		if g.MaxRetriesSet || g.MaxRetries > 0 {
			j.MaxRetries = &g.MaxRetries
		}
		if g.Timeout > 0 {
			j.Timeout = g.Timeout.String()
		}
		for _, d := range g.Dimensions {
			j.Dimensions = append(j.Dimensions, d.Name)
		}
		if g.When != nil {
			j.When = g.When.Text
		}
		out = append(out, j)
	}
	return out
}

func runValidate(e *env, args []string) error {
	fs := e.flags("validate")
	explain := fs.Bool("explain", false, "")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	ws := e.ws()
	if err := ws.Exists(); err != nil {
		return err
	}
	st, err := validateAll(ws)
	if err != nil {
		return err
	}
	problems, issues := st.problems, len(st.queue.Issues)
	cfg, configOK := st.config, st.configOK
	fieldNotes := fieldWarnings(ws.Path(loop.QueueFile), st.queue)
	if e.json {
		out := map[string]any{"ok": len(problems) == 0, "problems": problems}
		var warnings []string
		if configOK && len(cfg.Gates) == 0 {
			warnings = append(warnings, ws.Path(loop.ConfigFile)+": "+loop.ErrNoGates.Error()+" (gates: []): orchestrate run refuses to start")
		}
		if warnings = append(warnings, fieldNotes...); len(warnings) > 0 {
			out["warnings"] = warnings
		}
		if *explain && configOK {
			out["preset"], out["human_wait"], out["gates"] = cfg.Preset, cfg.Human.Wait, gatesJSON(cfg.Gates)
			a := cfg.Agent
			agent := map[string]any{"profile": a.Profile, "command": a.Command, "resume_command": a.ResumeCommand,
				"review_command": a.ReviewCommand, "session": a.Session, "usage": a.Usage, "timeout": a.Timeout.String()}
			if len(a.Prices) > 0 {
				agent["prices"] = a.Prices
			}
			out["agent"] = agent
		}
		if err := e.printJSON(out); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintf(e.stdout, "%s:%d: %s\n", p.File, p.Line, p.Message)
		}
		if len(problems) == 0 {
			fmt.Fprintf(e.stdout, "ok: %s, no problems\n", plural(issues, "issue"))
			if configOK && len(cfg.Gates) == 0 {
				fmt.Fprintf(e.stdout, "warning: %s: %v (gates: []): orchestrate run refuses to start; %s\n",
					ws.Path(loop.ConfigFile), loop.ErrNoGates, loop.NoGatesAdvice)
			}
			for _, w := range fieldNotes {
				fmt.Fprintf(e.stdout, "warning: %s\n", w)
			}
			if configOK && cfg.Agent.ResumeCommand == "" && cfg.Retry.Strategy != config.StrategyFresh {
				fmt.Fprintf(e.stdout, "note: %s: agent.resume_command is not set: every loop starts a fresh agent (the %s profile has no resume of its own)\n",
					ws.Path(loop.ConfigFile), cfg.Agent.Profile)
			}
		}
		if *explain {
			explainGates(e, ws.Path(loop.ConfigFile), cfg, configOK)
		}
	}
	if len(problems) > 0 {
		return withCode(exitError, nil)
	}
	return nil
}

// fieldWarnings are what a person likely mistyped in the queue's fields,
// which the queue still reads: a field named close to a known one
// (Priorty), and a priority that is none of the four (claims take it
// last).
func fieldWarnings(path string, q *queue.Queue) []string {
	var out []string
	for _, is := range q.Issues {
		is.EachField(func(f *queue.Field) {
			if err := checkFieldName(f.Name, false); err != nil {
				out = append(out, fmt.Sprintf("%s:%d: %s: field %q is not one orchestrate reads; did you mean %s?", path, f.Line, is.ID, f.Name, meantField(f.Name)))
			}
			if mdpatch.SameName(f.Name, queue.FieldPriority) {
				if err := queue.CheckValue(f.Name, f.Value); err != nil {
					out = append(out, fmt.Sprintf("%s:%d: %s: %v: claims take it after every other", path, f.Line, is.ID, err))
				}
			}
		})
	}
	return out
}

// workspaceState is the queue and the session state as read once, with
// every problem of them and of the config.
type workspaceState struct {
	queue    *queue.Queue
	state    *session.State
	config   *config.Config
	configOK bool // config.yaml has no problem
	problems []problemJSON
}

// validateAll reads the workspace's files and finds all their problems.
func validateAll(ws loop.Workspace) (*workspaceState, error) {
	problems := []problemJSON{}
	add := func(path string, ps []queue.Problem) {
		for _, p := range ps {
			problems = append(problems, problemJSON{File: path, Line: p.Line, Message: p.Msg})
		}
	}
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil {
		return nil, err
	}
	add(ws.Path(loop.QueueFile), q.Problems)
	add(ws.Path(loop.QueueFile), q.TextProblems())
	s, err := session.Load(ws.Path(loop.StateFile))
	if err != nil {
		return nil, err
	}
	add(ws.Path(loop.StateFile), s.Problems)
	cfg, cps, err := config.Load(ws.Path(loop.ConfigFile))
	if err != nil {
		return nil, err
	}
	for _, p := range cps {
		problems = append(problems, problemJSON{File: p.File, Line: p.Line, Message: p.Msg})
	}
	if len(cps) == 0 {
		add(ws.Path(loop.QueueFile), unknownTestGates(q, cfg))
	}
	hps, err := analytics.CheckHistory(ws.Path(loop.HistoryFile))
	if err != nil {
		return nil, err
	}
	for _, p := range hps {
		problems = append(problems, problemJSON{File: p.File, Line: p.Line, Message: p.Msg})
	}
	return &workspaceState{queue: q, state: s, config: cfg, configOK: len(cps) == 0, problems: problems}, nil
}

// explainGates prints the gates as they run, for validate --explain.
func explainGates(e *env, file string, cfg *config.Config, ok bool) {
	fmt.Fprintln(e.stdout)
	if !ok {
		fmt.Fprintf(e.stdout, "# The gates are not shown: %s has problems.\n", file)
		return
	}
	from := "the gates: list of " + file
	if cfg.Preset != "" {
		from = "gates.preset " + cfg.Preset + " of " + file + ", with gates.list"
	}
	session := "none: every loop starts a fresh agent"
	switch {
	case cfg.Agent.ResumeCommand == "":
	case cfg.Agent.Session == agentcli.SessionReported:
		session = "the one the agent reports, resumed by resume_command"
	default:
		session = "a UUID orchestrate chooses, resumed by resume_command"
	}
	fmt.Fprintf(e.stdout, "# The agent, every default filled in. Its session ($%s): %s.\n", config.EnvSessionID, session)
	fmt.Fprintln(e.stdout, strings.TrimSuffix(config.FormatAgent(cfg.Agent), "\n"))
	fmt.Fprintln(e.stdout)
	gates := "gates"
	if len(cfg.Gates) == 1 {
		gates = "gate"
	}
	fmt.Fprintf(e.stdout, "# %d %s, from %s, every default filled in. human.wait: %s\n",
		len(cfg.Gates), gates, from, cfg.Human.Wait)
	if len(cfg.Gates) == 0 {
		fmt.Fprintln(e.stdout, "gates: []")
		return
	}
	fmt.Fprint(e.stdout, config.FormatGates(file, cfg.Gates))
}

// unknownTestGates are the items of the issues' Tests fields that name a
// gate config.yaml does not have, each a problem at its field's line.
func unknownTestGates(q *queue.Queue, cfg *config.Config) []queue.Problem {
	known := map[string]bool{}
	for _, g := range cfg.Gates {
		known[g.Name] = true
	}
	var out []queue.Problem
	for _, is := range q.Issues {
		for _, u := range is.Tests() {
			if !known[u.Gate] {
				out = append(out, queue.Problem{Line: is.Field(queue.FieldTests).Line,
					Msg: fmt.Sprintf("%s: Tests names the gate %q, which config.yaml does not have (its gates: %s)", is.ID, u.Gate, gateList(cfg.Gates))})
			}
		}
	}
	return out
}

// gateList names gates, for a message: "a, b", or "none".
func gateList(gates []config.Gate) string {
	if len(gates) == 0 {
		return "none"
	}
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}
