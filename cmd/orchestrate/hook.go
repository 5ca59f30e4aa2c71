package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate/loop"
)

func init() {
	register(&command{
		name:    "hook",
		summary: "the Stop hook of an agent client (hook stop)",
		usage: `Usage: orchestrate hook stop

Claude Code's Stop hook: when the agent says it is done, run the quality
gates and let it stop, or send it back to work with the feedback.
orchestrate init --claude installs it in .claude/settings.json:

  {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                  "command": "orchestrate hook stop"}]}]}}

It reads the hook's JSON object on stdin (session_id, transcript_path,
cwd, hook_event_name, stop_hook_active) and runs the gates of
<cwd>/.orchestrator/config.yaml, as orchestrate gate does. Then:

  gates fail, attempts left  prints {"decision": "block", "reason": FEEDBACK}:
                             the agent goes on with the feedback; the
                             session's failing issues go to in_progress
                             with Retry-Count + 1
  gates pass                 prints nothing (or a systemMessage saying
                             which issues are resolved): the agent stops
  no attempt left            prints {"systemMessage": …} saying which issues
                             are halted or exhausted and why: the agent stops

Attempts are counted in issue_queue.md, per session: the issues a hook
files carry a Session field (the session_id; an empty one is "(none)"), and
a hook never touches another session's issues. stop_hook_active is no
reason to stop: Max-Retries and the halt on identical failures bound the
loop. With the no_auto_retry sentinel or auto_retry_enabled: false the
gates still run and file, and a failure is reported without blocking:
nothing is retried. A hook called by an agent that orchestrate run launched
(ORCHESTRATE_RUN_ID is set) lets it stop: the run runs the gates itself. Malformed input (not a JSON object, over 1 MiB, or not ended
within 10 seconds) lets the agent stop with a message; it never hangs.

Examples:
  echo '{"session_id":"abc","cwd":"'"$PWD"'","hook_event_name":"Stop"}' | orchestrate hook stop

Exit codes: 0 always once the input is read, whatever the decision (an
error is a systemMessage and an allowed stop); 2 usage.
`,
		run: runHook,
	})
}

func runHook(e *env, args []string) error {
	fs := e.flags("hook")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "stop" {
		return usageError("hook", "hook needs stop")
	}
	out := stopHook(e)
	if out == (loop.HookOutput{}) {
		return nil
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// stopHook decides; every problem is an allowed stop with a message, so
// that a broken hook never traps the agent.
func stopHook(e *env) loop.HookOutput {
	allow := func(format string, args ...any) loop.HookOutput {
		msg := "orchestrate hook stop: " + fmt.Sprintf(format, args...)
		fmt.Fprintln(e.stderr, msg)
		return loop.HookOutput{SystemMessage: msg}
	}
	if os.Getenv("ORCHESTRATE_RUN_ID") != "" {
		return loop.HookOutput{} // orchestrate run launched this agent, and runs the gates itself
	}
	in, err := loop.ReadHookInput(e.stdin, loop.HookInputTimeout)
	if err != nil {
		return allow("%v; the agent may stop", err)
	}
	switch in.HookEventName {
	case "", "Stop", "SubagentStop":
	default:
		return allow("hook_event_name is %q, not Stop; the agent may stop", in.HookEventName)
	}
	dir := e.dir
	if !filepath.IsAbs(dir) && in.Cwd != "" {
		dir = filepath.Join(in.Cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		// Not a repository orchestrate works in: nothing to say to anyone.
		fmt.Fprintf(e.stderr, "orchestrate hook stop: no %s; the agent may stop\n", dir)
		return loop.HookOutput{}
	}
	ws := loop.Workspace{Dir: dir}
	res, err := ws.StopHook(e.ctx, e.now, in.SessionID)
	refreshAnalytics(ws)
	if err != nil {
		return allow("%v; the agent may stop", err)
	}
	return res.Output
}
