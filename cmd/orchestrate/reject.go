package main

var rejectCmd = &command{
	name:    "reject",
	summary: "reject a human gate's request, with a comment the agent gets as feedback",
	usage: `Usage: orchestrate reject ID --comment TEXT [--json]

Rejects a human gate's approval request (see orchestrate help approve): its
Approved field becomes false and the comment goes to its Comment section.
On its next evaluation the gate fails with the comment as its error: the
agent gets it as feedback, an auto-retry issue is filed for it, and the
request is closed (Status: resolved, Approved: false). When the gate next
needs a person, a new request is filed.

Editing the request by hand does the same: Approved: false, with a
### Comment section.

With --json: {"id": "…", "gate": "…", "approved": false, "status": "pending", "comment": "…", "changed": bool}

Examples:
  orchestrate reject ISSUE-20241213-002 --comment "Keep the old flag as an alias."

Exit codes: 0 rejected, 1 error (an unknown ID, an issue that is not an
approval request, a malformed queue), 2 usage (no --comment).
`,
	run: func(e *env, args []string) error { return runDecision(e, "reject", args) },
}
