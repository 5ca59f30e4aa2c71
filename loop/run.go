package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// The outcomes of a run: the outcome column of its run_end row in
// history.csv.
const (
	RunPassed      = "passed"            // every blocking gate passed
	RunNothing     = "nothing_to_retry"  // nothing to do, or auto-retry is disabled
	RunCapReached  = "cap_reached"       // the global cap of auto-retry loops
	RunHalted      = "halted"            // the failing issues wait for a person
	RunAborted     = "aborted"           // orchestrate abort
	RunInterrupted = "interrupted"       // the context ended: Ctrl-C, SIGTERM
	RunGatesFailed = "gates_failed"      // MaxLoops reached while the check would retry
	RunAwaiting    = "awaiting_approval" // done but for a person's approval (human.wait: exit)
	RunError       = "error"             // an error stopped the run
)

// ErrRunning is returned by Run (and TryRunLock) when another run holds the
// run lock of the workspace.
var ErrRunning = errors.New("another orchestrate run is in progress")

// RunOptions tunes Run.
type RunOptions struct {
	// Task is what the agent is to do. When empty, the workspace's task.md
	// is, if there is one; with no task at all the agent works on the open
	// issues.
	Task string
	// MaxLoops ends the run after this many loops even when the check
	// would start another (RunGatesFailed); 0 leaves it to the retry
	// limits. --once is 1.
	MaxLoops int
	Now      func() time.Time // the clock; nil is time.Now
	Progress func(gate.Event) // each gate's progress, or nil
	Step     func(Step)       // each step of the loop as it happens, or nil
}

// The kinds of Step.
const (
	StepLaunch    = "launch"     // an agent is about to start: Agent has its command and prompt
	StepGatesOnly = "gates-only" // the first loop runs the gates alone: the open issues wait on a person
	StepAgent     = "agent"      // the agent finished: Agent
	StepGates     = "gates"      // the gates ran: Gates, Resolved
	StepWait      = "wait"       // human gates await a decision, which the run waits for (human.wait: block): Gates
	StepCheck     = "check"      // the auto-retry check decided: Check
)

// Step is one step of a run, reported as it happens.
type Step struct {
	Kind string
	// Worker and Issue name the agent of run --agents the step is of, and
	// its issue; "" for a single agent.
	Worker, Issue string
	Loop          int
	Agent         *AgentRun
	Gates         *GateRun
	Resolved      []Resolution // the issues the gates resolved
	Check         *CheckResult
	Claim         *Claimed // StepClaim
	Merge         string   // StepMerge: its outcome and why
	Result        *Worked  // StepDone
}

// AgentRun is one launch of the agent.
type AgentRun struct {
	Loop     int           `json:"loop"`
	Fresh    bool          `json:"fresh"` // a fresh agent, not the same one resumed
	Command  string        `json:"command"`
	Key      string        `json:"-"`       // the config key of the command: agent.command or agent.resume_command
	Prompt   string        `json:"prompt"`  // the file of the prompt it was sent
	Log      string        `json:"log"`     // the file of its whole output
	Outcome  string        `json:"outcome"` // ok, fail, timeout, or error (could not start, canceled)
	ExitCode int           `json:"exit_code"`
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"-"`
	Output   string        `json:"-"` // the head and tail of its output
	// Usage is what the agent reported of its session, turns, tokens and
	// cost; nil when it reported nothing.
	Usage *analytics.Usage `json:"usage,omitempty"`
}

// RunResult is what a run did and why it stopped.
type RunResult struct {
	RunID   string     `json:"run_id"`
	Outcome string     `json:"outcome"` // one of the Run* outcomes
	Reason  string     `json:"reason"`  // why, in a sentence
	Loops   int        `json:"loops"`
	Agents  []AgentRun `json:"agents"`
	// Gates and Check are the last evaluation and the last check.
	Gates *GateRun     `json:"-"`
	Check *CheckResult `json:"check,omitempty"`
	// Stuck lists the issues that wait for a person, when the run stopped
	// for them.
	Stuck []IssueRef `json:"stuck"`
	// Stash is the message of the git stash entry that keeps the last
	// attempt's changes (on_exhaustion: stash).
	Stash string `json:"stash,omitempty"`
	// Commit is the commit of the agent's work when the run passed
	// (on_success: commit); NotCommitted says why there is none, and how
	// to make it.
	Commit       *Commit `json:"commit,omitempty"`
	NotCommitted string  `json:"not_committed,omitempty"`
}

// TryRunLock takes the workspace's run lock, which orchestrate run holds
// for its whole length; ErrRunning when another run holds it.
func (w Workspace) TryRunLock() (func(), error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	unlock, err := fsx.TryLock(w.Path(RunLockFile))
	if errors.Is(err, fsx.ErrLocked) {
		return nil, fmt.Errorf("%w in %s (it holds %s): wait for it, or stop it with orchestrate abort",
			ErrRunning, w.Dir, w.Path(RunLockFile))
	}
	return unlock, err
}

// Run is the self-driving loop. Per loop: build the prompt (the task, the
// open issues, the last feedback, what was tried) from the templates in
// prompts/; run agent.command (or agent.resume_command, per the retry
// strategy) with the prompt on stdin, in its own process group, within
// agent.timeout; run the gates, which file, record and resolve issues;
// append the history; then the auto-retry check decides whether to loop
// again. The sentinel, auto_retry_enabled and orchestrate abort are looked
// at before every agent launch after the first and every check: the
// sentinel turns off the retries, not a task's first launch.
//
// Run holds the run lock throughout (ErrRunning when another run does)
// and begins a session; its last step brings analytics.html up to date.
// It returns an error only for what stopped it short of a decision; a
// RunResult says why it stopped otherwise, an ended ctx included
// (RunInterrupted).
func (w Workspace) Run(ctx context.Context, opt RunOptions) (*RunResult, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	held, cfg, err := w.startRun()
	if err != nil {
		return nil, err
	}
	defer held.Unlock()
	task := opt.Task
	if task == "" {
		data, _, err := fsx.ReadFileMax(w.Path(TaskFile), MaxTaskFile)
		if err != nil {
			return nil, err
		}
		task = strings.TrimSpace(string(data))
	}
	// A marker left for an earlier run is not this one's business.
	if err := os.Remove(w.Path(AbortFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r := &runner{w: w, opt: opt, cfg: cfg, task: task, res: &RunResult{}, held: held}
	if stop, err := r.nothingToDo(); stop || err != nil {
		return r.res, err
	}
	// The sentinel turns off the retries, not the work: a task's first
	// launch runs, and its gates report. With no task, the open issues are
	// the work, and working on them again is a retry.
	if reason, err := w.Disabled(); err != nil {
		return nil, err
	} else if reason != "" && task == "" && !r.gatesFirst {
		r.res.Outcome, r.res.Reason = RunNothing, "auto-retry is disabled: "+reason
		return r.res, nil
	}
	if r.res.RunID, err = w.StartSession(ctx, opt.Now()); err != nil {
		return nil, err
	}
	r.start = w.noteStartTree(ctx, cfg)
	res, err := r.loop(ctx)
	return res, w.endRun(ctx, err, nil)
}

// endRun is what every run does last: an abort that came after its last
// decision point is its own, which has ended, so none stays behind it; and
// the report shows the run, made once, outside the workspace's lock, also
// after an interruption: with the other hosts' histories on the remote r
// the run shared, if any, or else those the page shows. Past the run's
// commit point, the page is a warning, never the run's exit code.
func (w Workspace) endRun(ctx context.Context, err error, r *remote.Remote) error {
	if rerr := os.Remove(w.Path(AbortFile)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	name := w.pageRemote()
	if r != nil {
		name = r.Name()
	}
	if _, aerr := w.refreshPage(actx, name, false); aerr != nil {
		err = errors.Join(err, w.warn(fmt.Errorf("making analytics.html: %w", aerr)))
	}
	return err
}

// startRun takes the run lock and reads the config, which must name a
// gate: what every run begins with.
func (w Workspace) startRun() (*fsx.Held, *config.Config, error) {
	held, err := w.runLock()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := w.Config()
	if err == nil {
		err = w.checkGates(cfg)
	}
	if err != nil {
		held.Unlock()
		return nil, nil, err
	}
	return held, cfg, nil
}

type runner struct {
	w    Workspace
	opt  RunOptions
	cfg  *config.Config
	task string
	res  *RunResult
	held *fsx.Held // the run lock, where each agent's process group is noted

	attempts     []gate.Attempt  // the evaluations so far, for the artifacts
	tried        []PromptAttempt // the loops so far, for the prompts
	feedback     string          // the last evaluation's feedback
	summary      string          // the end of the last agent's output
	said         string          // the last agent's result, as it reported it
	watch        *stallWatch     // the last launch's watch: its stalled, the failure that stopped it
	sameFailures int             // failed loops since the last fresh agent
	launched     int             // agents launched
	// session is the pinned session of the last agent: the one a resume
	// continues (the ID orchestrate chose, or the one the agent reported);
	// "" when there is none to continue.
	session string
	// gatesFirst: the first loop runs the gates without an agent, as the
	// only open issues wait on a person's decision (approval requests, human
	// gates' failures), which the gates read.
	gatesFirst bool
	left       leftTree     // the tree as the last agent left it, for a resume
	start      startTree    // the tree as the run found it, for on_success
	resolved   []Resolution // the issues the run's gates resolved

	// totals are the running totals each Codex thread reported last (see
	// launchUsage).
	totals map[string]analytics.Usage

	// agent, when set, is the claim, worktree and merge queue of one of
	// several agents (RunAgents): the loop works on its issue alone, in
	// its worktree, and merges its work back when the gates pass.
	agent *agentCtx
}

// artifacts is the directory under runs/ of the loop's prompts, logs and
// gate artifacts: the run's, or for one of several agents its issue's.
func (r *runner) artifacts() string {
	if r.agent != nil {
		return r.res.RunID + "-" + r.agent.claim.ID
	}
	return r.res.RunID
}

// nothingToDo ends the run before it starts when there is no task and no
// open issue: RunHalted when issues wait for a person, RunNothing if not.
// When the only open issues wait on a person's decision, the run goes on
// with the gates first.
func (r *runner) nothingToDo() (bool, error) {
	if r.task != "" {
		return false, nil
	}
	q, err := queue.Load(r.w.Path(QueueFile))
	if err != nil {
		return false, err
	}
	if len(q.Problems) > 0 {
		return false, &queue.ValidationError{Path: r.w.Path(QueueFile), Problems: q.Problems}
	}
	// Open issues are the agent's work, unless they wait on a person's
	// decision: approval requests, and the failures of human gates, which
	// the gates read before any agent is launched.
	human := map[string]bool{}
	for _, g := range r.cfg.Gates {
		human[g.Name] = g.IsHuman()
	}
	for _, is := range q.Issues {
		if st := is.Status(); st != queue.StatusPending && st != queue.StatusInProgress {
			continue
		}
		if g, _ := is.Get(FieldGate); !isApproval(is) && !human[g] {
			return false, nil
		}
		r.gatesFirst = true
	}
	if r.gatesFirst {
		return false, nil
	}
	for _, is := range q.Issues {
		ref := IssueRef{ID: is.ID, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, r.cfg.Retry.MaxRetries)}
		if ref.Reason = needsPerson(is, ref); ref.Reason != "" {
			r.res.Stuck = append(r.res.Stuck, ref)
		}
	}
	if len(r.res.Stuck) > 0 {
		r.res.Outcome, r.res.Reason = RunHalted, "no task, and the open issues wait for a person"
	} else {
		r.res.Outcome, r.res.Reason = RunNothing, "nothing to do: no task (--task, --task-file or "+r.w.Path(TaskFile)+") and no open issue"
	}
	return true, nil
}

func (r *runner) loop(ctx context.Context) (*RunResult, error) {
	for n := 1; ; n++ {
		if n > 1 {
			if res, err := r.stopBefore(ctx, n); res != nil || err != nil {
				return res, err
			}
		}
		r.res.Loops, r.w.loop = n, n // the history rows of the loop name it
		var a *AgentRun
		if n == 1 && r.gatesFirst {
			r.step(Step{Kind: StepGatesOnly, Loop: n})
		} else {
			var err error
			a, err = r.launch(ctx, n)
			if ctx.Err() != nil {
				return r.interrupted(ctx)
			}
			if err != nil {
				return r.fail(ctx, err)
			}
			if a.ExitCode == 126 || a.ExitCode == 127 {
				return r.fail(ctx, fmt.Errorf("the agent could not run (%s): check %s in %s", a.Reason, a.Key, r.w.Path(ConfigFile)))
			}
			if err := r.couldNotStart(a); err != nil {
				return r.fail(ctx, err)
			}
		}

		gr, awaiting, err := r.gatesApproved(ctx, n)
		if awaiting {
			return r.end(ctx, RunAwaiting, "awaiting a person's approval: "+approvals(gr))
		}
		if ctx.Err() != nil {
			return r.interrupted(ctx)
		}
		if err != nil {
			return r.fail(ctx, err)
		}
		if gr.OnlyReviewerErrors() {
			return r.fail(ctx, fmt.Errorf("the review could not be done, which is not the agent's to fix (%s): check the reviewer's command; its logs are in %s",
				strings.Join(gr.ReviewerErrors, "; "), gr.Dir))
		}
		var mergeFeedback string
		if gr.Evaluation.Passed {
			if r.agent == nil {
				r.res.Commit, r.res.NotCommitted = r.w.commitSuccess(ctx, r.start, r.res.RunID, r.task, r.resolved)
				return r.end(ctx, RunPassed, "every blocking quality gate passes")
			}
			after, feedback, err := r.mergeBack(ctx, n)
			if r.agent.merged != "" {
				// Merged: done, whatever ended meanwhile (the renewal of a
				// claim its resolve ended, a Ctrl-C after the merge).
				return r.end(ctx, RunPassed, "its gates pass, and it is merged into "+r.agent.branch)
			}
			if ctx.Err() != nil {
				return r.interrupted(ctx)
			}
			if err != nil {
				return r.fail(ctx, err)
			}
			if after != nil {
				gr = after // the gates failed after the rebase
			}
			mergeFeedback = feedback
		}
		r.remember(n, a, gr)
		if mergeFeedback != "" {
			r.feedback = mergeFeedback
			r.tried[len(r.tried)-1].Failed = append(r.tried[len(r.tried)-1].Failed, "merge")
		}

		if res, err := r.check(ctx, n, gr); res != nil || err != nil {
			return res, err
		}
	}
}

// stopBefore ends the run before loop n when orchestrate abort asked for
// it or auto-retry was disabled meanwhile: a result ends the run, none
// goes on.
func (r *runner) stopBefore(ctx context.Context, n int) (*RunResult, error) {
	if r.aborted() {
		return r.end(ctx, RunAborted, "aborted by orchestrate abort before loop "+strconv.Itoa(n))
	}
	if reason, err := r.w.Disabled(); err != nil {
		return r.fail(ctx, err)
	} else if reason != "" {
		return r.end(ctx, RunNothing, "auto-retry was disabled before loop "+strconv.Itoa(n)+": "+reason)
	}
	return nil, nil
}

// gatesApproved runs the gates for loop n. Human gates ask only once every
// other blocking gate passes: the agent has nothing to fix, a person has
// to decide. With human.wait block it waits for them and runs the gates
// again; otherwise awaiting says the run stops to wait.
func (r *runner) gatesApproved(ctx context.Context, n int) (gr *GateRun, awaiting bool, err error) {
	gr, err = r.gates(ctx, n)
	for err == nil && !gr.Failed() && len(gr.AwaitingApproval) > 0 {
		if r.cfg.Human.Wait != config.HumanWaitBlock {
			return gr, true, nil
		}
		r.step(Step{Kind: StepWait, Loop: n, Gates: gr})
		if err = r.w.WaitApprovals(ctx, approvalIDs(gr), 0); err == nil {
			gr, err = r.gates(ctx, n)
		}
	}
	return gr, false, err
}

// check runs the retry step after loop n's failing gates: a result ends
// the run, none starts the next loop.
func (r *runner) check(ctx context.Context, n int, gr *GateRun) (*RunResult, error) {
	if r.aborted() {
		return r.end(ctx, RunAborted, "aborted by orchestrate abort after loop "+strconv.Itoa(n))
	}
	if r.opt.MaxLoops > 0 && n >= r.opt.MaxLoops {
		// The limit of this run: no TRIGGERED for a loop it will not run,
		// and no retry counted for it; the next run's check retries.
		if would, err := r.w.wouldRetry(r.cfg); err != nil {
			return r.fail(ctx, err)
		} else if would {
			return r.end(ctx, RunGatesFailed, fmt.Sprintf("quality gates still fail after %s (the limit of this run); the next run retries", plural(n, "loop")))
		}
	}
	var chk CheckResult
	var err error
	if r.agent != nil {
		chk, err = r.w.CheckIssue(ctx, r.opt.Now(), r.agent.claim.ID)
	} else {
		chk, err = r.w.Check(ctx, r.opt.Now())
	}
	if ctx.Err() != nil {
		return r.interrupted(ctx)
	}
	if err != nil {
		return r.fail(ctx, err)
	}
	r.res.Check = &chk
	r.step(Step{Kind: StepCheck, Loop: n, Check: &chk})
	switch chk.Outcome {
	case CheckTriggered:
		if r.opt.MaxLoops > 0 && n >= r.opt.MaxLoops {
			return r.end(ctx, RunGatesFailed, fmt.Sprintf("quality gates still fail after %s (the limit of this run); the next run retries", plural(n, "loop")))
		}
		return nil, nil
	case CheckNothing:
		return r.end(ctx, RunNothing, "quality gates fail, but no auto-retry issue is left to retry")
	case CheckDisabled:
		return r.end(ctx, RunNothing, "quality gates fail, and nothing is retried: auto-retry is disabled: "+chk.Reason)
	case CheckCapReached:
		r.res.Stuck = chk.Exhausted
		r.exhausted(ctx, gr, chk)
		return r.end(ctx, RunCapReached, fmt.Sprintf("the global cap of %d auto-retry loops per run is reached", chk.GlobalCap))
	case CheckExhausted:
		r.res.Stuck = chk.Exhausted
		r.exhausted(ctx, gr, chk)
		return r.end(ctx, RunHalted, "the failing issues wait for a person: "+ids(chk.Exhausted))
	default:
		return r.fail(ctx, fmt.Errorf("unknown check outcome %q", chk.Outcome))
	}
}

// gates runs the gates for loop n. From the second loop on, the agent's
// last words are the fixes the attempt checks.
func (r *runner) gates(ctx context.Context, n int) (*GateRun, error) {
	opt := GateOptions{Progress: r.opt.Progress, Previous: r.attempts}
	if r.agent != nil {
		opt.Dir, opt.Issue = r.artifacts(), r.agent.claim.ID
	}
	if r.attempts == nil {
		opt.Previous = []gate.Attempt{} // a run's fix cycle starts with it
	}
	if n > 1 {
		opt.AgentFixes = agentFixes(r.summary)
	}
	gr, err := r.w.RunGates(ctx, r.opt.Now, opt)
	if err != nil {
		return nil, err
	}
	r.attempts, r.res.Gates = gr.Attempts, gr
	resolved := r.w.resolutions(gr.Resolved)
	r.resolved = append(r.resolved, resolved...)
	r.step(Step{Kind: StepGates, Loop: n, Gates: gr, Resolved: resolved})
	return gr, nil
}

// approvalIDs returns the approval requests the gates wait on.
func approvalIDs(gr *GateRun) []string {
	var out []string
	for _, name := range gr.AwaitingApproval {
		out = append(out, gr.Approvals[name])
	}
	return out
}

// approvals says which gates wait on which request, and how to decide.
func approvals(gr *GateRun) string {
	var parts []string
	for _, name := range gr.AwaitingApproval {
		id := gr.Approvals[name]
		parts = append(parts, fmt.Sprintf("gate %s in %s (%s, or %s)", name, id, ApproveCommand(id), RejectCommand(id)))
	}
	return strings.Join(parts, "; ")
}

// fresh says whether loop n starts a fresh agent rather than resuming the
// last one: always with strategy fresh, only the first with same, and with
// auto after fresh_after_failures failed loops of the same agent.
func (r *runner) fresh(n int) bool {
	switch {
	case r.launched == 0 || r.cfg.Agent.ResumeCommand == "" || r.session == "":
		// Nothing to resume: no agent yet, no resume command for this one,
		// or no session it reported. Never "the most recent" session.
		return true
	case r.cfg.Retry.Strategy == config.StrategyFresh:
		return true
	case r.cfg.Retry.Strategy == config.StrategySame:
		return false
	}
	return r.sameFailures >= r.cfg.Retry.FreshAfterFailures
}

// launch builds loop n's prompt and runs the agent with it.
func (r *runner) launch(ctx context.Context, n int) (*AgentRun, error) {
	fresh := r.fresh(n)
	if fresh {
		r.sameFailures = 0
	}
	if r.agent != nil && r.agent.share != nil {
		// The retry this launch spends is published first: a machine that
		// takes the issue over counts it.
		if err := r.agent.share(ctx); err != nil {
			return nil, err
		}
	}
	r.launched++
	c := r.callOf(n, fresh)
	a, err := r.writePrompt(ctx, n, c)
	if err != nil {
		return nil, err
	}
	env, err := r.agentEnv(n, a, c)
	if err != nil {
		return nil, err
	}
	r.step(Step{Kind: StepLaunch, Loop: n, Agent: a})

	// A fresh agent gets a session of its own: one orchestrate chooses, or
	// the one it will report.
	session := r.session
	if fresh {
		session = ""
		if r.cfg.Agent.Session != agentcli.SessionReported {
			if session, err = newSessionID(); err != nil {
				return nil, err
			}
		}
	}
	env[config.EnvSessionID] = session

	// The agent runs as a gate does (sh -c, its own process group, killed
	// whole at its timeout or when ctx ends), with the prompt file as its
	// standard input. ORCHESTRATE_CHILD tells orchestrate's own hooks in it
	// that the run runs the gates itself.
	g := config.Gate{
		Name:    "agent",
		Command: "exec <\"$ORCHESTRATE_PROMPT_FILE\"\n" + c.command,
		Timeout: r.cfg.Agent.Timeout,
		Env:     env,
	}
	actx, stop := context.WithCancel(ctx)
	defer stop()
	watch := newStallWatch(r.cfg.Agent.CLI().Stalls(), stop)
	res, logErr := gate.Run(actx, g, gate.Options{RepoRoot: r.w.Root(), Output: r.cfg.Output, Now: r.opt.Now,
		Started: noteGroup(r.held, r.res.RunID), Watch: watch.writer()}, a.Log)
	r.watch = watch
	if logErr != nil {
		a.Log = ""
	}
	a.ExitCode, a.Duration, a.Output, a.Reason = res.ExitCode, res.Duration, res.Output, res.Reason()
	a.Outcome = agentOutcome(res.Outcome)
	if res.Outcome == gate.Pass {
		a.Reason = ""
	}
	a.Key = c.key
	r.noteLeft(ctx)
	if r.agent != nil && r.agent.keep != nil {
		// What it did, for the machine that takes the issue over.
		if err := r.agent.keep(ctx); err != nil {
			r.w.warn(fmt.Errorf("keeping the work of %s on the remote: %w", r.agent.claim.ID, err))
		}
	}
	r.takeReport(a, res.Output, session)
	r.res.Agents = append(r.res.Agents, *a)
	if err := r.history(ctx, r.agentEvents(n, a, c)...); err != nil {
		return a, err
	}
	r.step(Step{Kind: StepAgent, Loop: n, Agent: a})
	return a, nil
}

// couldNotStart returns why the agent could not work at all, when its
// launch failed with no model turn and its output says so in the words its
// profile knows (agentcli.Profile.CouldNotStart): not an attempt, and nothing
// is counted; the run stops, quoting the agent.
func (r *runner) couldNotStart(a *AgentRun) error {
	if a.Usage != nil && (a.Usage.Turns > 0 || a.Usage.Tokens() > 0) {
		return nil // it worked, then failed: an attempt like any other
	}
	// A launch stopped as stalled, then the agent's own words (Claude
	// Code's result: "API Error: Request rejected (429) · …"), then its
	// whole output.
	var f agentcli.StartFailure
	var line string
	ok := r.watch != nil && r.watch.stalled != nil
	if ok {
		f, line = *r.watch.stalled, r.watch.line
	} else {
		f, line, ok = r.cfg.Agent.CLI().CouldNotStart(a.ExitCode, r.said)
	}
	if !ok {
		f, line, ok = r.cfg.Agent.CLI().CouldNotStart(a.ExitCode, a.Output)
	}
	if !ok {
		return nil
	}
	line = textclean.Line(line)
	if r := []rune(line); len(r) > 200 {
		line = string(r[:199]) + "…"
	}
	return fmt.Errorf("the agent could not work: %s (exit %d: %q; all of it in %s): %s; nothing was counted", f.What, a.ExitCode, line, a.Log, f.Fix)
}

// agentCall is how a loop calls the agent: the prompt it renders, the
// command, how the history names the call, and the command's config key.
type agentCall struct {
	fresh                     bool
	prompt, command, how, key string
}

// callOf says how loop n calls the agent: a fresh one with the first
// prompt, or the continue prompt after the first loop, or the one before
// resumed.
func (r *runner) callOf(n int, fresh bool) agentCall {
	c := agentCall{fresh: fresh, prompt: PromptAgent, command: r.cfg.Agent.Command, how: "fresh", key: "agent.command"}
	switch {
	case !fresh:
		c.prompt, c.command, c.how, c.key = PromptResume, r.cfg.Agent.ResumeCommand, "resumed", "agent.resume_command"
	case n > 1:
		c.prompt = PromptContinue
	}
	return c
}

// writePrompt renders loop n's prompt into runs/<run-id>/prompt-<n>.md
// and returns the agent run it starts.
func (r *runner) writePrompt(ctx context.Context, n int, c agentCall) (*AgentRun, error) {
	q, err := queue.Load(r.w.Path(QueueFile))
	if err != nil {
		return nil, err
	}
	d := PromptData{
		Task: r.task, Loop: n, MaxLoops: r.opt.MaxLoops, Fresh: c.fresh,
		Workspace: filepath.Base(r.w.Dir), Issues: r.issues(q),
		Feedback: r.feedback, WorkSummary: r.summary, Attempts: r.tried,
	}
	d.Title = titleOf(r.task, d.Issues)
	for _, g := range r.cfg.Gates {
		d.Gates = append(d.Gates, g.Name)
	}
	if c.prompt == PromptContinue && r.start.git {
		d.FilesChanged = r.w.filesChanged(ctx)
	}
	if c.prompt == PromptResume {
		r.resumeState(ctx, &d)
	}
	text, err := r.w.renderPrompt(c.prompt, d)
	if err != nil {
		return nil, err
	}
	dir, err := r.w.RunDir(r.artifacts())
	if err != nil {
		return nil, err
	}
	r.w.noteSupervisor(dir)
	a := &AgentRun{
		Loop: n, Fresh: c.fresh, Command: c.command,
		Prompt: filepath.Join(dir, fmt.Sprintf("prompt-%d.md", n)),
		Log:    filepath.Join(dir, fmt.Sprintf("agent-%d.log", n)),
	}
	if err := fsx.WriteFile(a.Prompt, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return a, nil
}

// agentEnv is the agent's environment but for its session
// (config.EnvSessionID): where its prompt and workspace are, which run
// and loop it is.
func (r *runner) agentEnv(n int, a *AgentRun, c agentCall) (map[string]string, error) {
	promptAbs, err := filepath.Abs(a.Prompt)
	if err != nil {
		return nil, err
	}
	wsAbs, err := filepath.Abs(r.w.Dir)
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		"ORCHESTRATE_PROMPT_FILE": promptAbs,
		"ORCHESTRATE_RUN_ID":      r.res.RunID,
		"ORCHESTRATE_LOOP":        strconv.Itoa(n),
		"ORCHESTRATE_AGENT":       c.how,
		"ORCHESTRATOR_DIR":        wsAbs,
		gate.EnvChild:             "1",
	}
	if a := r.agent; a != nil {
		// Its claim, carried by every change it makes; its own temporary
		// files; its own port, when the config asks for ports.
		env["ORCHESTRATE_CLAIM"] = a.claim.ID + ":" + strconv.Itoa(a.claim.Epoch)
		env["ORCHESTRATE_AGENT_NAME"] = a.name
		env["TMPDIR"] = a.repo.TempDir(a.claim.ID)
		if base := r.cfg.Agents.PortBase; base > 0 {
			env["PORT"] = strconv.Itoa(base + a.index())
		}
	}
	return env, nil
}

// issues are the issues loop's prompt names: the open ones, or the
// claimed one of one of several agents.
func (r *runner) issues(q *queue.Queue) []PromptIssue {
	all := openIssues(q, r.cfg.Retry.MaxRetries)
	if r.agent == nil {
		return all
	}
	return slices.DeleteFunc(all, func(p PromptIssue) bool { return p.ID != r.agent.claim.ID })
}

// agentOutcome is an agent run's outcome for the history.
func agentOutcome(o gate.Outcome) string {
	switch o {
	case gate.Pass:
		return "ok"
	case gate.Fail:
		return analytics.OutcomeFail
	case gate.TimedOut:
		return analytics.OutcomeTimeout
	}
	return analytics.OutcomeError
}

// takeReport keeps what the agent reported (its output, or the log when
// kept): its last words for the next prompt, the session a resume
// continues (the one it reported, else the one it was given), and its
// usage.
func (r *runner) takeReport(a *AgentRun, output, session string) {
	rep := ParseAgentOutput(r.cfg.Agent.Usage, agentOutput(a.Log, output))
	r.summary, r.said = workSummary(output), rep.Result
	if rep.Result != "" {
		r.summary = workSummary(rep.Result)
	}
	r.session = session
	if rep.Usage.Session != "" {
		r.session = rep.Usage.Session
	}
	if !rep.Usage.Zero() {
		if rep.Usage.Session == "" {
			rep.Usage.Session = r.session
		}
		u := r.launchUsage(rep.Usage)
		a.Usage = &u
	}
}

// launchUsage is what one launch used, from what the agent reported. Codex
// reports a resumed thread's running totals: this launch's share is what
// they grew by since the thread's last launch.
func (r *runner) launchUsage(u analytics.Usage) analytics.Usage {
	return priced(&r.cfg.Agent, r.launchShare(u))
}

// launchShare is launchUsage before pricing.
func (r *runner) launchShare(u analytics.Usage) analytics.Usage {
	if !agentcli.RunningTotals(r.cfg.Agent.Usage) || u.Session == "" {
		return u
	}
	if r.totals == nil {
		r.totals = map[string]analytics.Usage{}
	}
	prev, seen := r.totals[u.Session]
	r.totals[u.Session] = u
	if !seen || u.InputTokens < prev.InputTokens || u.OutputTokens < prev.OutputTokens || u.CacheReadTokens < prev.CacheReadTokens {
		return u // a thread of its own, or totals that did not grow: as reported
	}
	u.InputTokens -= prev.InputTokens
	u.OutputTokens -= prev.OutputTokens
	u.CacheReadTokens -= prev.CacheReadTokens
	return u
}

// priced prices the tokens of a launch whose agent reported tokens but no
// cost, with agent.prices (the launch's model's entry, or the default);
// Priced names the entry. Codex and Gemini count cached tokens within the
// input tokens; the others apart.
func priced(a *config.Agent, u analytics.Usage) analytics.Usage {
	if u.CostUSD != 0 || u.Tokens() == 0 {
		return u
	}
	p, from, ok := a.PriceOf(u.Model)
	if !ok {
		return u
	}
	input := u.InputTokens
	if agentcli.CacheInInput(a.Usage) {
		input = max(0, input-u.CacheReadTokens)
	}
	cost := (float64(input)*p.Input + float64(u.OutputTokens)*p.Output + float64(u.CacheReadTokens)*p.CacheRead) / 1e6
	// To a millionth of a dollar: no float noise in the history.
	u.CostUSD, u.Priced = math.Round(cost*1e6)/1e6, from
	return u
}

// agentEvents are the history rows of loop n's agent run: the run, and
// its usage when it reported some.
func (r *runner) agentEvents(n int, a *AgentRun, c agentCall) []analytics.Event {
	ev := analytics.Event{
		Time: r.opt.Now(), RunID: r.res.RunID, Loop: n, Event: analytics.EventAgent, Attempt: n,
		Outcome: a.Outcome, DurationMS: a.Duration.Milliseconds(), Detail: c.how + ": " + c.command,
	}
	if a.ExitCode >= 0 {
		ev.ExitCode = &a.ExitCode
	}
	events := []analytics.Event{ev}
	if a.Usage != nil {
		events = append(events, analytics.Event{Time: ev.Time, RunID: ev.RunID, Loop: n, Event: analytics.EventUsage,
			Attempt: n, Detail: analytics.FormatUsage(*a.Usage)})
	}
	return events
}

// remember keeps what a failed loop tried, for the next prompts. a is nil
// for a loop that ran the gates only.
func (r *runner) remember(n int, a *AgentRun, gr *GateRun) {
	at := PromptAttempt{Loop: n, Agent: "resumed"}
	switch {
	case a == nil:
		at.Agent = "no"
	case a.Fresh:
		at.Agent = "fresh"
	}
	for _, f := range gr.Evaluation.Failures() {
		s := f.Name()
		if is, ok := gr.Issues[f.Name()]; ok && len(is.Signature) >= shortSig {
			s += " (" + is.Signature[:shortSig] + ")"
		}
		at.Failed = append(at.Failed, s)
	}
	r.tried = append(r.tried, at)
	r.feedback = gr.Feedback
	if a != nil {
		r.sameFailures++
	}
}

// exhausted applies on_exhaustion to the last attempt's changes.
func (r *runner) exhausted(ctx context.Context, gr *GateRun, chk CheckResult) {
	if r.cfg.OnExhaustion != config.ExhaustionStash {
		return
	}
	var names []string
	for _, a := range gr.Issues {
		names = append(names, a.ID)
	}
	if len(names) == 0 {
		for _, ref := range chk.Exhausted {
			names = append(names, ref.ID)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	msg, err := r.w.stashExhausted(ctx, names)
	if err != nil {
		// The changes are still in the tree: nothing is lost, say so.
		r.res.Stash = "not stashed: " + err.Error()
		return
	}
	r.res.Stash = msg
}

// aborted reports whether orchestrate abort asked the run to stop, taking
// its marker away.
func (r *runner) aborted() bool {
	if _, err := os.Stat(r.w.Path(AbortFile)); err != nil {
		return false
	}
	if r.agent == nil {
		// Several agents each see it; RunAgents takes it away at its end.
		_ = os.Remove(r.w.Path(AbortFile))
	}
	return true
}

func (r *runner) step(s Step) {
	if r.opt.Step != nil {
		r.opt.Step(s)
	}
}

// history appends events under the lock. It outlives ctx for a moment, so
// that an interrupted run still says so.
func (r *runner) history(ctx context.Context, events ...analytics.Event) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return r.w.withLock(ctx, func() error { return r.w.appendHistory(events...) })
}

// end records why the run stopped.
func (r *runner) end(ctx context.Context, outcome, reason string) (*RunResult, error) {
	r.res.Outcome, r.res.Reason = outcome, reason
	if r.agent != nil {
		return r.res, nil // RunAgents writes the run's one run_end row
	}
	detail := reason
	if r.res.Stash != "" {
		detail += "; stash: " + r.res.Stash
	}
	err := r.history(ctx, analytics.Event{Time: r.opt.Now(), RunID: r.res.RunID, Loop: r.res.Loops,
		Event: analytics.EventRunEnd, Outcome: outcome, Detail: detail})
	return r.res, err
}

func (r *runner) interrupted(ctx context.Context) (*RunResult, error) {
	return r.end(ctx, RunInterrupted, fmt.Sprintf("interrupted during loop %d (%v)", r.res.Loops, context.Cause(ctx)))
}

func (r *runner) fail(ctx context.Context, err error) (*RunResult, error) {
	res, herr := r.end(ctx, RunError, err.Error())
	return res, errors.Join(err, herr)
}

// resolutions describes the issues the gates resolved, for the SUCCEEDED
// messages.
func (w Workspace) resolutions(resolved []string) []Resolution {
	if len(resolved) == 0 {
		return nil
	}
	q, err := w.loadQueue()
	if err != nil {
		return nil
	}
	var out []Resolution
	for _, id := range resolved {
		if is := q.Issue(id); is != nil {
			out = append(out, Resolution{ID: id, Retries: is.Int(queue.FieldRetryCount, 0), Summary: summaryOf(is)})
		}
	}
	return out
}

// Abort asks the run in progress to stop at its next decision point (before
// its next check or agent launch), and records the abort in the history.
// It reports false, leaving nothing behind, when no run is in progress.
func (w Workspace) Abort(ctx context.Context, now time.Time) (bool, error) {
	unlock, err := w.TryRunLock()
	if err == nil {
		unlock()
		return false, nil
	}
	if !errors.Is(err, ErrRunning) {
		return false, err
	}
	if err := fsx.WriteFile(w.Path(AbortFile), []byte("orchestrate abort: the run stops at its next decision point\n"), 0o644); err != nil {
		return false, err
	}
	return true, w.withLock(ctx, func() error {
		return w.appendHistory(analytics.Event{Time: now, RunID: w.runID(), Event: analytics.EventAbort})
	})
}

// agentFixes is what an attempt's agent_fixes keeps of the agent's work
// summary: its last lines, bounded.
func agentFixes(summary string) string {
	s, _ := gate.Excerpt(summary, 5, 600)
	return strings.TrimSpace(s)
}
