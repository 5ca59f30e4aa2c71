package main

import (
	"fmt"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

var recordCmd = &command{
	name:    "record",
	summary: "record a failed verification's output against an issue",
	usage: `Usage: orchestrate record ID [FILE|-] [--exit-code N] [--gate NAME] [--epoch N] [--json]

Records a failed verification of issue ID, with its output from FILE or
stdin (the default, or -; at most 1 GiB, signed whole as it streams), by
the rules of the auto-retry mechanism:

  - the failure signature is a SHA256 of the exit class and the output,
    normalized (orchestrate signature --explain shows how);
  - the same signature as Failure-Signature adds one to
    Signature-Repeat-Count; a different one moves the old signature to
    Previous-Signatures and sets the count to 1;
  - halt_after_identical (3) in a row halts the issue (Halted: true, status
    stuck), and so does the same signature that often within the last 5
    attempts (A, B, A, B, A: an oscillation);
  - --exit-code 126 or 127 (command not found or not executable) is not
    retryable: the issue is stuck at once; 124 or a kill by a signal is
    infrastructure: retried, but not counted toward a halt, and neither is
    an output that normalizes to nothing;
  - the output goes to the issue's Failure Details (head and tail when
    long), the normalized text to runs/<run-id>/, a row to history.csv.

The issue goes back to pending unless it is stuck.

--epoch N is the epoch of the caller's claim of ID (see orchestrate help
claim): the record is refused if another holds the issue now.

Examples:
  go test ./... 2>&1 | orchestrate record ISSUE-20241213-001 --exit-code $?
  orchestrate record ISSUE-20241213-001 test.log --gate tests

Exit codes: 0 recorded, 11 recorded and the issue now needs a person (halted,
exhausted or not retryable), or refused as the caller's claim was taken
over, 1 error (an unknown ID, a malformed queue: no
file is changed), 2 usage.
`,
	run: runRecord,
}

func runRecord(e *env, args []string) error {
	fs := e.flags("record")
	exitCode := fs.Int("exit-code", 0, "")
	gate := fs.String("gate", "", "")
	fence := e.epochFlag(fs, "record")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usageError("record", "record needs an issue ID and at most one file")
	}
	if err := fence(pos[0]); err != nil {
		return err
	}
	src := "-"
	if len(pos) == 2 {
		src = pos[1]
	}
	f, err := readFailure(e, src)
	if err != nil {
		return err
	}
	f.Gate, f.ExitCode = *gate, flagInt(fs, "exit-code", *exitCode)
	r, err := e.ws().Record(e.ctx, e.now(), pos[0], f)
	if err != nil {
		return err
	}
	if e.json {
		err = e.printJSON(r)
	} else {
		fmt.Fprintf(e.stdout, "%s: %s\n", r.ID, describeRecord(r))
	}
	if err == nil && r.Status == queue.StatusStuck {
		return withCode(exitPerson, nil)
	}
	return err
}

// describeRecord says in a line what recording a failure did.
func describeRecord(r loop.Recorded) string {
	sig := r.Signature
	if len(sig) > 12 {
		sig = sig[:12]
	}
	var what string
	switch {
	case !r.Counted && r.Class == "infra":
		what = fmt.Sprintf("infrastructure failure (signature %s), not counted toward a halt", sig)
	case !r.Counted:
		what = "empty output after normalization, not counted toward a halt"
	default:
		what = fmt.Sprintf("failure recorded, signature %s seen %d time(s) in a row", sig, r.RepeatCount)
	}
	switch {
	case r.Halted:
		return what + "; HALTED (" + r.Reason + "): status stuck, a person is needed"
	case r.Status == queue.StatusStuck:
		return what + "; stuck (" + r.Reason + "): a person is needed"
	}
	return what + fmt.Sprintf("; status %s, %d of %d %s used", r.Status, r.RetryCount, r.MaxRetries, map[bool]string{true: "retry", false: "retries"}[r.MaxRetries == 1])
}
