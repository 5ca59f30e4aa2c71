package main

import (
	"fmt"
)

var abortCmd = &command{
	name:    "abort",
	summary: "stop the orchestrate run in progress at its next decision point",
	usage: `Usage: orchestrate abort [--json]

Asks the orchestrate run in progress in this workspace to stop: it leaves
the marker .orchestrator/abort, which the run looks at before its next
check and its next agent launch; the run then stops with "aborted" (exit
11). The agent or the gates running at that moment finish first (Ctrl-C
in the run's terminal stops them at once). The abort is recorded in
history.csv. With no run in progress, nothing is left behind.

Examples:
  orchestrate abort

Exit codes: 0 the run was asked to stop, 10 no run in progress, 1 error,
2 usage.
`,
	run: runAbort,
}

func runAbort(e *env, args []string) error {
	fs := e.flags("abort")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	running, err := e.ws().Abort(e.ctx, e.now())
	if err != nil {
		return err
	}
	if e.json {
		if err := e.printJSON(map[string]any{"aborted": running}); err != nil {
			return err
		}
	} else if running {
		fmt.Fprintln(e.stdout, "Asked the run in progress to stop at its next decision point.")
	} else {
		fmt.Fprintln(e.stdout, "No run in progress: nothing to abort.")
	}
	if !running {
		return withCode(exitNothing, nil)
	}
	return nil
}
