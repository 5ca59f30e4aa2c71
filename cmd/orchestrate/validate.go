package main

import (
	"fmt"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "list every problem in the queue, the session state and the config",
		usage: `Usage: orchestrate validate [--json]

Checks issue_queue.md, session_state.md and config.yaml and prints every
problem as file:line: message: duplicate issue IDs, an issue with no field
table, a malformed ID, a count that is not a non-negative integer, an unknown
status, a table row with a missing cell, a boolean that is not true or false,
an unknown or mistyped config key.

With --json: {"ok": bool, "problems": [{"file": "…", "line": N, "message": "…"}, …]}

Examples:
  orchestrate validate
  orchestrate --dir other/.orchestrator validate --json

Exit codes: 0 no problems, 1 problems found (or an error), 2 usage.
`,
		run: runValidate,
	})
}

type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func runValidate(e *env, args []string) error {
	fs := e.flags("validate")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	problems, issues, err := validateAll(e.ws())
	if err != nil {
		return err
	}
	if e.json {
		if err := e.printJSON(map[string]any{"ok": len(problems) == 0, "problems": problems}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintf(e.stdout, "%s:%d: %s\n", p.File, p.Line, p.Message)
		}
		if len(problems) == 0 {
			fmt.Fprintf(e.stdout, "ok: %d issues, no problems\n", issues)
		}
	}
	if len(problems) > 0 {
		return withCode(exitError, nil)
	}
	return nil
}

// validateAll returns every problem of the workspace's files and the number
// of issues in the queue.
func validateAll(ws loop.Workspace) ([]problemJSON, int, error) {
	problems := []problemJSON{}
	add := func(path string, ps []queue.Problem) {
		for _, p := range ps {
			problems = append(problems, problemJSON{File: path, Line: p.Line, Message: p.Msg})
		}
	}
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil {
		return nil, 0, err
	}
	add(ws.Path(loop.QueueFile), q.Problems)
	s, err := session.Load(ws.Path(loop.StateFile))
	if err != nil {
		return nil, 0, err
	}
	add(ws.Path(loop.StateFile), s.Problems)
	_, cps, err := config.Load(ws.Path(loop.ConfigFile))
	if err != nil {
		return nil, 0, err
	}
	for _, p := range cps {
		problems = append(problems, problemJSON{File: p.File, Line: p.Line, Message: p.Msg})
	}
	return problems, len(q.Issues), nil
}
