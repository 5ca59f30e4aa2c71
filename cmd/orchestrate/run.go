package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/pool"
)

var runCmd = &command{
	name:    "run",
	summary: "the self-driving loop: agent, gates, check, until done",
	usage: `Usage: orchestrate run [--task TEXT | --task-file FILE] [--once | --max-loops N] [--json]
       orchestrate run --agents N [--task TEXT]... [--issue ID]... [--lease DURATION]
                           [--remote NAME] [--max-loops N] [--json]

Runs the fix-and-retry loop until it is done, halted or capped. Per loop:

  1. the prompt: the task, the open issues, and on later loops the last
     feedback and what was already tried, from the templates agent.md,
     continuation.md and resume.md (yours in .orchestrator/prompts/ win);
  2. the agent: agent.command with the prompt on its stdin (sh -c, in its
     own process group, killed at agent.timeout), its output in
     runs/<run-id>/agent-<loop>.log, the prompt in prompt-<loop>.md. With
     retry.strategy same the next loops resume it (agent.resume_command,
     sent resume.md) in exactly its own session ($ORCHESTRATE_SESSION_ID:
     the UUID it started with, or the session it reported), never the
     most recent one; with fresh every loop starts a new one (sent
     continuation.md: the work summary, the feedback, the files changed);
     with auto (the default) a new one after fresh_after_failures failed
     loops of the same. With no resume command, or no session to resume,
     every loop starts a new one. What the agent reports of its turns,
     tokens and cost is a usage row of history.csv;
  3. the quality gates, as orchestrate gate runs them: failures file or
     update issues, passes resolve them;
  4. history.csv (analytics.html is made once, when the run ends);
  5. the auto-retry check, as orchestrate check: another loop or a stop.

The task comes from --task, --task-file (- for stdin), or
.orchestrator/task.md; with none, the agent works on the open issues. The
run begins a session (a new run_id) and holds .orchestrator/.run.lock: a
second run exits at once. The no_auto_retry sentinel and
auto_retry_enabled: false turn off the retries, not the work: the task's
first launch runs and its gates report, and nothing is retried (with no
task, no agent is launched). They and orchestrate abort are looked at
before every agent launch and every check. Ctrl-C stops the agent and the gates and records the interruption.
Human gates ask a person once every other blocking gate passes: with
human.wait: exit (the default) the run stops (11), and the next one goes
on once the request is decided (orchestrate approve or reject); with
block it waits, then runs the gates again. With on_exhaustion: stash, a run that stops for issues that wait for a
person keeps the last attempt's changes in a git stash entry
("orchestrate: ISSUE-… exhausted") and restores the tree. When every
blocking gate passes, on_success: commit (the default) commits the agent's
work (the task's first line, the resolved issues, an Orchestrate-Run
trailer), only when the run started from a clean tree outside
.orchestrator/; otherwise it says why not and how ("commit" and
"not_committed" with --json); on_success: leave leaves it in the tree.
With no gate (gates: []) it refuses before launching the agent.

The agent gets ORCHESTRATE_PROMPT_FILE, ORCHESTRATE_RUN_ID,
ORCHESTRATE_LOOP, ORCHESTRATE_AGENT (fresh or resumed),
ORCHESTRATE_SESSION_ID, ORCHESTRATE_CHILD=1 (its hooks run no gates) and
ORCHESTRATOR_DIR in its environment. agent.profile (claude, codex, gemini,
aider, opencode, cursor, custom) gives the commands; see the README.

With --agents N (2 to 64), N agents work at once on the open issues (and
on the tasks given, one --task each, filed as issues first). Each claims an
issue (see orchestrate help claim), works on it in a git worktree of its
own (in ~/.local/share/orchestrate/worktrees/, or agents.worktrees, on the
branch orchestrate/<issue>,
with its own TMPDIR, PORT when agents.port_base is set, and
ORCHESTRATE_CLAIM=ID:EPOCH), and its gates run there; when they pass its
work is committed, rebased onto the branch the run started on, its gates
run again, and the branch is fast-forwarded, one merge at a time. A
conflict or a failure after the rebase goes back to its agent as a failure
of its issue. The retry rules and budgets are the loop's, counted across
agents. --lease (default 1m) is each claim's lease, renewed every third of
it. It needs a git repository on a branch with a commit. --issue ID (one or
more) works those issues only. --agents 1 (the default) without --remote
is the one-agent loop above, in this tree; with --remote it is one agent
of the pool, in a worktree of its own, claiming as every machine's do.

With --remote NAME, the machines that run agents share the git remote NAME
(each a clone; --agents 1 or more on each): the claims are refs there
(see orchestrate help claim), the queue is synced with a copy there
(refs/orchestrate/queue) before each claim, each agent launch and each
release, with this machine's history.csv beside it, and the work lands on
the remote's branch of the same name as the one checked out, with a
compare-and-swap push; this clone's branches are not moved (git pull
them). Its last step makes analytics.html of every machine's history (see
orchestrate help analytics). See docs/many-agents.md.

Examples:
  orchestrate run --task "Add a --verbose flag to the CLI"
  orchestrate run --agents 4        # the open issues, four at a time
  orchestrate run --agents 2 --remote origin   # on each of several machines
  orchestrate run --once            # from cron: one loop on the open issues
  orchestrate run --max-loops 3 --json | jq .outcome

Exit codes: 0 every blocking gate passes (with --agents: every issue
worked was merged), 10 nothing to do (no task and no
open issue, nothing left to retry, auto-retry disabled), 11 a person is
needed (issues halted or exhausted, the global cap reached, aborted, a
human gate awaits approval with human.wait: exit), 12
gates still fail after --once or --max-loops (with --agents: some issues
worked were not merged), 1 error (another run in
progress, interrupted, a malformed file, no gate configured), 2 usage.
`,
	run: runRun,
}

func runRun(e *env, args []string) error {
	fs := e.flags("run")
	var tasks taskList
	fs.Var(&tasks, "task", "what the agent is to do")
	taskFile := fs.String("task-file", "", "read the task from this file (- for stdin)")
	once := fs.Bool("once", false, "one loop, then stop")
	maxLoops := fs.Int("max-loops", 0, "stop after N loops")
	agents := fs.Int("agents", 1, "agents at once, each in its own worktree")
	lease := fs.Duration("lease", pool.DefaultLease, "the lease of each agent's claim")
	remoteOf := e.remoteFlag(fs)
	var only taskList
	fs.Var(&only, "issue", "work this issue only (with --agents or --remote)")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	r, err := remoteOf()
	if err != nil {
		return err
	}
	if err := checkAgentFlags(*agents, *lease, tasks); err != nil {
		return err
	}
	task := new(string)
	if len(tasks) == 1 {
		*task = tasks[0]
	}
	switch {
	case *task != "" && *taskFile != "":
		return usageError("run", "--task and --task-file do not go together")
	case *maxLoops < 0:
		return usageError("run", "--max-loops must be positive")
	case *once && *maxLoops > 1:
		return usageError("run", "--once and --max-loops %d do not go together", *maxLoops)
	case *once:
		*maxLoops = 1
	}
	if *taskFile != "" {
		data, err := readInput(e, *taskFile, maxTextInput) // capped, and Ctrl-C ends a blocked read
		if err != nil {
			return fmt.Errorf("reading the task: %w", err)
		}
		if *task = strings.TrimSpace(string(data)); *task == "" {
			return usageError("run", "the task file %s is empty", *taskFile)
		}
	}
	if *agents > 1 || r != nil || len(only) > 0 {
		if *task != "" && len(tasks) == 0 {
			tasks = taskList{*task} // from --task-file
		}
		return runAgents(e, pool.Options{RunOptions: loop.RunOptions{MaxLoops: *maxLoops, Now: e.now}, Agents: *agents, Tasks: tasks, Lease: *lease,
			Remote: r, Only: only})
	}
	opt := loop.RunOptions{Task: *task, MaxLoops: *maxLoops, Now: e.now}
	p := &runPrinter{w: e.stdout, dir: e.dir}
	var renderer *progressRenderer
	if !e.json {
		opt.Step = p.step
		opt.Progress = func(ev gate.Event) {
			if renderer == nil {
				renderer = newProgressRenderer(e.stderr, e.stderrIsTerminal())
			}
			renderer.Handle(ev)
		}
		p.closeProgress = func() {
			if renderer != nil {
				renderer.Close()
				renderer = nil
			}
		}
	}
	res, err := e.ws().Run(e.ctx, opt)
	if err != nil {
		return err
	}
	return finishRun(e, p, res)
}

// checkAgentFlags refuses --agents, --lease and --task that do not go
// together.
func checkAgentFlags(agents int, lease time.Duration, tasks taskList) error {
	switch {
	case agents < 1 || agents > 64:
		return usageError("run", "--agents %d: want 1 to 64", agents)
	case lease < claim.MinLease:
		return usageError("run", "--lease %v: want %v or more (it is renewed every third of it)", lease, claim.MinLease)
	case len(tasks) > 1 && agents == 1:
		return usageError("run", "one --task per agent: %d tasks for --agents 1", len(tasks))
	}
	return nil
}

// finishRun prints how a run ended and returns its exit code.
func finishRun(e *env, p *runPrinter, res *loop.RunResult) error {
	code := runExitCode(res.Outcome)
	if e.json {
		if res.Agents == nil {
			res.Agents = []loop.AgentRun{}
		}
		if res.Stuck == nil {
			res.Stuck = []loop.IssueRef{}
		}
		if c := res.Check; c != nil {
			if c.Retried == nil {
				c.Retried = []loop.IssueRef{}
			}
			if c.Exhausted == nil {
				c.Exhausted = []loop.IssueRef{}
			}
		}
		if err := e.printJSON(struct {
			*loop.RunResult
			ExitCode int `json:"exit_code"`
		}{res, code}); err != nil {
			return err
		}
	} else {
		p.end(res)
	}
	if res.Outcome == loop.RunInterrupted {
		return withCode(exitError, errors.New(res.Reason+"; nothing is lost: run orchestrate run again to go on"))
	}
	if code == exitOK {
		return nil
	}
	return withCode(code, nil)
}

func runExitCode(outcome string) int {
	switch outcome {
	case loop.RunPassed:
		return exitOK
	case loop.RunNothing:
		return exitNothing
	case loop.RunHalted, loop.RunCapReached, loop.RunAborted, loop.RunAwaiting:
		return exitPerson
	case loop.RunGatesFailed:
		return exitGateFailed
	}
	return exitError
}

// runPrinter prints a run's steps for a person.
type runPrinter struct {
	w             io.Writer
	dir           string
	closeProgress func()
}

func (p *runPrinter) step(s loop.Step) {
	switch s.Kind {
	case loop.StepLaunch:
		how := "fresh agent"
		if !s.Agent.Fresh {
			how = "same agent, resumed"
		}
		fmt.Fprintf(p.w, "\n── loop %d: %s: %s\n", s.Loop, how, s.Agent.Command)
		fmt.Fprintf(p.w, "prompt: %s\n", s.Agent.Prompt)
	case loop.StepGatesOnly:
		fmt.Fprintf(p.w, "\n── loop %d: the gates only, no agent: %s\n", s.Loop, s.Why)
	case loop.StepAgent:
		a := s.Agent
		what := a.Outcome
		if a.Reason != "" {
			what += " (" + a.Reason + ")"
		}
		if u := a.Usage; u != nil {
			what += fmt.Sprintf(", %d turns, %d tokens", u.Turns, u.Tokens())
			switch {
			case u.CostUSD > 0 && u.Priced != "":
				what += fmt.Sprintf(", $%.4f at agent.prices' %s", u.CostUSD, u.Priced)
			case u.CostUSD > 0:
				what += fmt.Sprintf(", $%.4f", u.CostUSD)
			}
		}
		fmt.Fprintf(p.w, "agent: %s in %.1fs; output: %s\n", what, a.Duration.Seconds(), a.Log)
	case loop.StepGates:
		if p.closeProgress != nil {
			p.closeProgress()
		}
		_ = renderGateTable(p.w, s.Gates, false)
		for _, r := range s.Resolved {
			fmt.Fprint(p.w, loop.SucceededMessage(r))
		}
	case loop.StepResolved:
		for _, r := range s.Resolved {
			fmt.Fprint(p.w, loop.SucceededMessage(r))
		}
	case loop.StepCheck:
		printCheck(p.w, p.dir, *s.Check)
	case loop.StepWait:
		for _, name := range s.Gates.AwaitingApproval {
			id := s.Gates.Approvals[name]
			fmt.Fprint(p.w, loop.AwaitingApprovalMessage(name, id))
		}
		fmt.Fprintln(p.w, "Waiting for a person's decision (human.wait: block); Ctrl-C stops the run.")
	}
}

func (p *runPrinter) end(res *loop.RunResult) {
	if res.Outcome == loop.RunHalted && res.Check == nil && len(res.Stuck) > 0 {
		fmt.Fprint(p.w, loop.ExhaustedMessage(p.dir, res.Stuck))
	}
	if res.Stash != "" {
		if strings.HasPrefix(res.Stash, "not stashed") {
			fmt.Fprintf(p.w, "The last attempt's changes are still in the tree (%s).\n", res.Stash)
		} else {
			fmt.Fprintf(p.w, "The last attempt's changes are kept in a git stash entry, %q, and the tree is restored: git stash list, then git stash pop to get them back.\n", res.Stash)
		}
	}
	if res.Commit != nil {
		fmt.Fprintf(p.w, "All gates passed! Committed the changes: %s %s\n", res.Commit.Hash, res.Commit.Subject)
	} else if res.NotCommitted != "" {
		fmt.Fprintf(p.w, "All gates passed; %s.\n", res.NotCommitted)
	}
	run := ""
	if res.RunID != "" {
		run = fmt.Sprintf(" (run %s, %s)", res.RunID, plural(res.Loops, "loop"))
	}
	fmt.Fprintf(p.w, "\nStopped%s: %s.\n", run, res.Reason)
}
