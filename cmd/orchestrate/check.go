package main

import "github.com/orchestrate-dev/orchestrate/loop"

var checkCmd = &command{
	name:    "check",
	summary: "the end-of-loop auto-retry check: start another loop or not",
	usage: `Usage: orchestrate check [--json]

The auto-retry check at the end of a loop, step for step as the auto-retry
mechanism prescribes:

  1. the .orchestrator/no_auto_retry sentinel, or auto_retry_enabled: false
     in session_state.md, disables it;
  2. the candidates are issues with Auto-Retry: true, status pending,
     Retry-Count < Max-Retries, not halted;
  3. at the global cap (retry.global_cap, 15) of auto-retry loops in this
     run, nothing is retried: a person is needed;
  4. each candidate's Retry-Count goes up by one and its status to
     in_progress; total_auto_retries goes up by one and last_retry_reason
     names the issue; both files are written.

It prints AUTO-RETRY TRIGGERED (with "Attempt N of M" per issue) and
"Auto-retry triggered for N critical issue(s)"; AUTO-RETRY EXHAUSTED ("Failed
to fix after N attempts:") for every issue that newly hit a limit (halted,
out of retries, not retryable), and where to look, once: the issue is
marked Escalated, and later checks name it in a line, "Still waiting for a
person". An issue an earlier retry left in_progress with no result since
(no record, no resolve) is named in a line, "Left in_progress with no
result", with how to record or resolve it.

With --json: {"outcome": "triggered|nothing|disabled|cap_reached|exhausted",
"retried": […], "exhausted": […], "total_auto_retries": N, "global_cap": N,
"unfinished": […] when there are such issues}

Examples:
  orchestrate check && echo "run another improvement loop"
  orchestrate check --json | jq .outcome

Exit codes: 0 a retry was triggered (start another loop), 10 nothing to
retry or auto-retry disabled, 11 a person is needed (cap reached, issues
stuck), 1 error, 2 usage.
`,
	run: runCheck,
}

func runCheck(e *env, args []string) error {
	fs := e.flags("check")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	res, err := e.ws().Check(e.ctx, e.now())
	if err != nil {
		return err
	}
	if e.json {
		if res.Retried == nil {
			res.Retried = []loop.IssueRef{}
		}
		if res.Exhausted == nil {
			res.Exhausted = []loop.IssueRef{}
		}
		if err := e.printJSON(res); err != nil {
			return err
		}
	} else {
		printCheck(e.stdout, e.dir, res)
	}
	switch res.Outcome {
	case loop.CheckTriggered:
		return nil
	case loop.CheckCapReached, loop.CheckExhausted:
		return withCode(exitPerson, nil)
	}
	return withCode(exitNothing, nil)
}
