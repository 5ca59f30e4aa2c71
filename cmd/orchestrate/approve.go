package main

import "strings"

var approveCmd = &command{
	name:    "approve",
	summary: "approve a human gate's request: the gate passes on its next run",
	usage: `Usage: orchestrate approve ID [--comment TEXT] [--json]

A human gate (type: human in config.yaml) asks a person to approve the
change by filing an approval request in issue_queue.md: an issue of Type
approval, with the diff summary and the feedback of the run so far.
orchestrate approve sets its Approved field to true and its Status to
resolved; the gate passes on its next evaluation (orchestrate gate, run or
the Stop hook), for as long as the change is the one approved: once the
diff differs, the gate asks again. --comment keeps a note in the request's
Comment section.

Editing the request by hand does the same: Approved: true, or Status:
resolved. orchestrate reject rejects it.

With --json: {"id": "…", "gate": "…", "approved": true, "status": "resolved", "changed": bool}

Examples:
  orchestrate gate               # exit 11: awaiting approval in ISSUE-20241213-002
  orchestrate approve ISSUE-20241213-002
  orchestrate approve ISSUE-20241213-002 --comment "Checked the migration by hand."

Exit codes: 0 approved, 1 error (an unknown ID, an issue that is not an
approval request, a malformed queue), 2 usage.
`,
	run: func(e *env, args []string) error { return runDecision(e, "approve", args) },
}

// runDecision is approve and reject.
func runDecision(e *env, cmd string, args []string) error {
	fs := e.flags(cmd)
	comment := fs.String("comment", "", "")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError(cmd, "%s needs one approval request's ID", cmd)
	}
	id := pos[0]
	ws := e.ws()
	if cmd == "reject" {
		if strings.TrimSpace(*comment) == "" {
			return usageError(cmd, "reject needs --comment: what the agent is to change")
		}
		d, err := ws.Reject(e.ctx, e.now(), id, *comment)
		if err != nil {
			return err
		}
		return e.report(d, "%s rejected: gate %s fails on its next run, with your comment as the agent's feedback\n", id, d.Gate)
	}
	d, err := ws.Approve(e.ctx, e.now(), id, *comment)
	if err != nil {
		return err
	}
	if !d.Changed {
		return e.report(d, "%s was already approved\n", id)
	}
	return e.report(d, "%s approved: gate %s passes on its next run\n", id, d.Gate)
}
