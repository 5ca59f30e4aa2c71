package main

import (
	"fmt"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/session"
)

var sessionCmd = &command{
	name:    "session",
	summary: "begin a run (start) or show the session state (show)",
	usage: `Usage: orchestrate session start|show [--json]

  start  begins a run: a new run_id, run_started now, total_auto_retries
         back to 0, last_retry_reason null. Prints the new run ID.
  show   prints the Auto-Retry State table of session_state.md.

Every other line of session_state.md is kept byte for byte.

Examples:
  orchestrate session start
  orchestrate session show --json

Exit codes: 0 done, 1 error (a malformed session_state.md names its line),
2 usage.
`,
	run: runSession,
}

func runSession(e *env, args []string) error {
	fs := e.flags("session")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("session", "session needs start or show")
	}
	ws := e.ws()
	switch pos[0] {
	case "start":
		id, err := ws.StartSession(e.ctx, e.now())
		if err != nil {
			return err
		}
		if e.json {
			return e.printJSON(map[string]any{"run_id": id})
		}
		fmt.Fprintln(e.stdout, id)
		return nil
	case "show":
		s, err := session.Load(ws.Path(loop.StateFile))
		if err != nil {
			return err
		}
		if err := problemsError(ws.Path(loop.StateFile), s.Problems); err != nil {
			return err
		}
		if e.json {
			return writeSessionJSON(e.stdout, s)
		}
		rows := [][]string{}
		for _, f := range s.Fields() {
			rows = append(rows, []string{f[0], f[1]})
		}
		return renderTable(e.stdout, []string{"Field", "Value"}, rows)
	}
	return usageError("session", "unknown session command %q", pos[0])
}
