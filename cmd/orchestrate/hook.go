package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/loop"
)

var hookCmd = &command{
	name:    "hook",
	summary: "an agent's Stop and SessionStart hooks (hook stop, hook session-start)",
	usage: `Usage: orchestrate hook stop|session-start [--agent claude|codex|gemini|cursor] [--plugin]

The hooks of an agent CLI. hook stop: when the agent says it is done, run
the quality gates and let it stop, or send it back to work with the
feedback. hook session-start: record where the session began, so that a
session that changed nothing stops at once. Both are installed by
orchestrate init --agent NAME (--claude: orchestrate init --agent claude):

  claude  .claude/settings.json  SessionStart, Stop
  codex   .codex/hooks.json      SessionStart, Stop
  gemini  .gemini/settings.json  SessionStart, AfterAgent
  cursor  .cursor/hooks.json     sessionStart, stop

The hook reads the agent's JSON object on stdin and knows the agent by it
(AfterAgent is Gemini CLI's; stop, sessionStart and conversation_id are
Cursor's; turn_id is Codex's; anything else is Claude Code's), or by
--agent. It answers in that agent's protocol, on stdout:

             gates fail, attempts left        the agent may stop
  claude     {"decision":"block","reason":F}  {"systemMessage":M} or nothing
  codex      {"decision":"block","reason":F}  {"systemMessage":M} or nothing
  gemini     {"decision":"deny","reason":F}   {"systemMessage":M} or {}
  cursor     {"followup_message":F}           {} (M on stderr)

where F is the feedback and M a message for the person. Then:

  gates fail, attempts left  block: the session's failing issues go to
                             in_progress with Retry-Count + 1
  gates pass                 stop (saying which issues are resolved)
  no attempt left            stop, saying which issues are halted or
                             exhausted and why
  the failure is one that    stop, naming the issue that waits for a
  waits for a person         person and what to run; nothing is filed
  $ORCHESTRATE_CLAIM was     stop, saying who holds the issue now;
  taken over                 the gates do not run, nothing is filed

The workspace: --dir when it is absolute; else .orchestrator (or --dir)
in the agent's project directory ($CLAUDE_PROJECT_DIR; $GEMINI_PROJECT_DIR,
$CURSOR_PROJECT_DIR), else in the payload's cwd (Cursor: its first
workspace root) or the nearest parent that has one, up to the repository
root (the file system's outside a repository). A hook that finds none lets the agent stop (a line on stderr, nothing
on stdout).

The session's gate artifacts go to .orchestrator/runs/hook-<session_id>/
(an ID that is not a plain name is hashed: hook-sha256-…), and so does its
baseline (baseline.json: HEAD and a git tree of the working tree, the
workspace left out), which session-start records (a resumed session keeps
its own) and a stop moves on when the gates pass, or fail only as issues
that wait for a person. A stop whose repository is as its baseline says,
from a session with no open issue of its own, is let through at once,
without running the gates. Without a baseline (no SessionStart hook, or
not a git repository) the gates always run.

Attempts are counted in issue_queue.md, per session: the issues a hook
files carry a Session field (the session ID; an empty one is "(none)"), and
a hook never touches another session's issues. stop_hook_active is no
reason to stop: Max-Retries and the halt on identical failures bound the
loop. With the no_auto_retry sentinel or auto_retry_enabled: false the
gates still run and file, and a failure is reported without blocking:
nothing is retried. Cursor's stop of a turn that was aborted or ended in an
error (status not completed) lets the agent stop without running the
gates. A process orchestrate launched
(ORCHESTRATE_CHILD=1, or ORCHESTRATE_RUN_ID set: an agent under orchestrate
run, a reviewer, a synthesis, a gate's command) is let through at once,
whatever its input: orchestrate runs the gates itself. Malformed input
(not a JSON object, over 1 MiB, or not ended within 10 seconds) lets the
agent stop with a message; it never hangs.

After a compaction (Claude Code's and Codex's SessionStart with source
"compact"), hook session-start tells the agent the session's open issues,
one line each, as {"hookSpecificOutput": {"hookEventName": "SessionStart",
"additionalContext": …}}: it keeps them in mind although the conversation
that led to them was summarized.

--plugin is how the Claude Code plugin (hooks/orchestrate-hook) and the
Gemini CLI extension (gemini-extension/) call the hook: where the agent's
settings hold orchestrate's hook of the same event (written by orchestrate
init --agent NAME: the repository's .claude/settings.json or
.claude/settings.local.json, or ~/.claude/settings.json; for Gemini CLI
.gemini/settings.json there or in the home directory), the plugin's call
does nothing (a line on stderr) and that hook does the work, so that the
gates run once per stop.

Examples:
  echo '{"session_id":"abc","cwd":"'"$PWD"'","hook_event_name":"Stop"}' | orchestrate hook stop
  echo '{"conversation_id":"c1","hook_event_name":"stop","status":"completed"}' | orchestrate hook stop --agent cursor

Exit codes: 0 always once the input is read, whatever the decision (an
error is a message and an allowed stop); 2 usage.
`,
	run: runHook,
}

func runHook(e *env, args []string) error {
	fs := e.flags("hook")
	agent := fs.String("agent", "", "the agent whose hook this is: "+strings.Join(agentcli.HookAgents, ", "))
	plugin := fs.Bool("plugin", false, "called by the Claude Code plugin: do nothing where the settings hold orchestrate's hook already")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "stop" && pos[0] != "session-start") {
		return usageError("hook", "hook needs stop or session-start")
	}
	if *agent != "" && !slices.Contains(agentcli.HookAgents, *agent) {
		return usageError("hook", "--agent %q: want one of %s", *agent, strings.Join(agentcli.HookAgents, ", "))
	}
	h := &hookCall{e: e, agent: *agent, name: "hook " + pos[0], sub: pos[0], plugin: *plugin}
	if pos[0] == "stop" {
		h.stop()
	} else {
		h.sessionStart()
	}
	if h.context != "" {
		return e.printJSON(map[string]any{"hookSpecificOutput": map[string]string{
			"hookEventName": "SessionStart", "additionalContext": h.context}})
	}
	out, msg := agentcli.HookAnswer(h.agent, agentcli.HookOutput(h.out))
	if msg != "" {
		fmt.Fprintln(e.stderr, msg)
	}
	_, err = e.stdout.Write(out)
	return err
}

// hookCall is one call of a hook: every problem is an allowed stop with a
// message, so that a broken hook never traps the agent.
type hookCall struct {
	e       *env
	agent   string // from --agent, or known from the input
	name    string // hook stop, hook session-start
	sub     string // stop, session-start
	plugin  bool   // called by the Claude Code plugin
	out     loop.HookOutput
	context string // session-start: what the agent is told, after a compaction
	tree    string // the linked worktree the workspace was found through, if any
}

func (h *hookCall) allow(format string, args ...any) {
	msg := "orchestrate " + h.name + ": " + fmt.Sprintf(format, args...)
	fmt.Fprintln(h.e.stderr, msg)
	h.out = loop.HookOutput{SystemMessage: msg}
}

// read reads the input and finds the workspace; "" when the hook has
// nothing to do (h.out then says why, if anything).
func (h *hookCall) read(event string, want func(agentcli.HookInput) bool) (agentcli.HookInput, string) {
	in, err := agentcli.ReadHookInput(h.e.stdin, agentcli.HookInputTimeout)
	if err != nil {
		h.allow("%v; the agent may stop", err)
		return in, ""
	}
	if h.agent == "" {
		h.agent = in.Agent()
	}
	if !want(in) {
		h.allow("hook_event_name is %q, not %s; the agent may stop", in.HookEventName, event)
		return in, ""
	}
	if filepath.IsAbs(h.e.dir) {
		return in, h.e.dir
	}
	var projects []string
	for _, v := range agentcli.ProjectDirEnv(h.agent) {
		projects = append(projects, os.Getenv(v))
	}
	cwd := in.Dir()
	if !filepath.IsAbs(cwd) {
		wd, _ := os.Getwd()
		cwd = filepath.Join(wd, cwd)
	}
	dir, tree := loop.FindWorkspaceTree(h.e.dir, projects, cwd)
	h.tree = tree
	if dir == "" {
		// Not a repository orchestrate works in: nothing to say to anyone.
		fmt.Fprintf(h.e.stderr, "orchestrate %s: no %s in %s or above it; the agent may stop\n", h.name, h.e.dir, cwd)
		return in, ""
	}
	if h.plugin {
		if f := pluginDefersTo(h.agent, loop.Workspace{Dir: dir}.Root(), h.sub); f != "" {
			// Said on stderr only: the hook in f answers the agent.
			fmt.Fprintf(h.e.stderr, "orchestrate %s: %s runs orchestrate's hook; the plugin's leaves it to that one\n", h.name, f)
			return in, ""
		}
	}
	return in, dir
}

// child reports whether orchestrate launched this process, which then
// does nothing: orchestrate runs the gates itself. The input is read all
// the same, so that the agent never writes to a closed pipe.
func (h *hookCall) child() bool {
	if !loop.IsChild(os.Getenv) {
		return false
	}
	_, _ = agentcli.ReadHookInput(h.e.stdin, agentcli.HookInputTimeout)
	return true
}

func (h *hookCall) stop() {
	if h.child() {
		return
	}
	in, dir := h.read("Stop", agentcli.HookInput.IsStop)
	if dir == "" {
		return
	}
	if h.agent == agentcli.Cursor && in.Status != "" && in.Status != "completed" {
		h.allow("the agent's turn ended %s, not completed; the gates did not run", in.Status)
		return
	}
	// The gates' own processes (reviewers above all) are orchestrate's
	// children: their hooks must do nothing.
	os.Setenv(loop.ChildEnv, "1")
	ws := loop.Workspace{Dir: dir, Notify: h.e.notify}
	if h.tree != "" {
		ws = ws.InTree(h.tree) // a linked worktree's: its gates run there
	}
	if h.e.fenceID != "" {
		ws = ws.Fenced(h.e.fenceID, h.e.fenceEpoch) // its claim, when taken over, ends its work
	}
	res, err := ws.StopHook(h.e.ctx, h.e.now, in.Session(), loop.StopInput{AgentFixes: agentcli.LastAssistantText(in.TranscriptPath)})
	// The page is made when the agent stops, not at each stop the loop
	// blocks: an agent that keeps failing pays nothing for it.
	if err != nil || res.Outcome != loop.HookBlocked {
		refreshAnalytics(ws)
	}
	if err != nil {
		h.allow("%v; the agent may stop", err)
		return
	}
	h.out = res.Output
}

func (h *hookCall) sessionStart() {
	if h.child() {
		return
	}
	in, dir := h.read("SessionStart", agentcli.HookInput.IsSessionStart)
	if dir == "" {
		return
	}
	ws := loop.Workspace{Dir: dir, Notify: h.e.notify}
	if _, err := ws.SessionStart(h.e.ctx, h.e.now(), in.Session(), in.Source); err != nil {
		h.allow("%v", err)
		return
	}
	if in.Source == "compact" && (h.agent == agentcli.Claude || h.agent == agentcli.Codex) {
		// After a compaction the agent keeps its open issues in mind.
		text, err := ws.SessionContext(in.Session())
		if err != nil {
			h.allow("%v", err)
			return
		}
		h.context = text
	}
}
