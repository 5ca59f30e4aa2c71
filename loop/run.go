package loop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
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
	// Baseline, when set, gives the gates' results on the commit the work
	// started from, waiting for them while they are taken: an attempt at
	// a claimed issue is judged by its issue against them (see
	// GateOptions.Baseline), asked for once its gates have run, so that
	// its agent works while they are taken.
	Baseline func(context.Context) (*BaseResults, error)
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
	run, err := w.StartRun()
	if err != nil {
		return nil, err
	}
	defer run.Unlock()
	held, cfg := run.held, run.Config
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
	r.scope = oneAgent{r}
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
	r.startBaseline(ctx)
	res, err := r.loop(ctx)
	return res, w.EndRun(ctx, err, nil)
}

// EndRun is what every run does last: an abort that came after its last
// decision point is its own, which has ended, so none stays behind it; and
// the report shows the run, made once, outside the workspace's lock, also
// after an interruption: with the other hosts' histories on the remote r
// the run shared, if any, or else those the page shows. Past the run's
// commit point, the page is a warning, never the run's exit code.
func (w Workspace) EndRun(ctx context.Context, err error, r *remote.Remote) error {
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

// Started is a run begun (StartRun): the workspace's run lock, held, and
// the config the run read.
type Started struct {
	held *fsx.Held // where each agent's process group is noted
	// Config is the workspace's config, which names a gate.
	Config *config.Config
}

// Unlock lets the run lock go.
func (s *Started) Unlock() { s.held.Unlock() }

// StartRun takes the run lock and reads the config, which must name a
// gate: what every run begins with.
func (w Workspace) StartRun() (*Started, error) {
	held, err := w.runLock()
	if err != nil {
		return nil, err
	}
	cfg, err := w.Config()
	if err == nil {
		err = w.checkGates(cfg)
	}
	if err != nil {
		held.Unlock()
		return nil, err
	}
	return &Started{held: held, Config: cfg}, nil
}

// RunScope runs the loop of a run begun with StartRun, on what s scopes,
// with runID (see StartSession) for its history rows and artifacts. The
// workspace is in a git work tree. It returns as Run does, but s.End
// writes the run's end.
func (w Workspace) RunScope(ctx context.Context, run *Started, runID string, opt RunOptions, s Scope) (*RunResult, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	r := &runner{w: w, opt: opt, cfg: run.Config, res: &RunResult{RunID: runID}, held: run.held, scope: s}
	r.start.git = true
	return r.loop(ctx)
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
	// probe: gatesFirst because there was no task and no open issue: the
	// gates' failures are the work, and their passing leaves none.
	probe    bool
	left     leftTree     // the tree as the last agent left it, for a resume
	start    startTree    // the tree as the run found it, for on_success
	resolved []Resolution // the issues the run's gates resolved
	made     byproducts   // the files the gates wrote, which the commit leaves out
	// named are the issues without a gate (a person's) that a prompt of
	// the run gave its agent: resolved when its work passes, as each of
	// several agents' claimed issue is once merged.
	named []string

	// totals are the running totals each Codex thread reported last (see
	// launchUsage).
	totals map[string]analytics.Usage

	// own is what the run counted itself of each issue, and total its
	// total_auto_retries: the floor of what the files may say (see
	// keepCounts).
	own   map[string]counted
	total int

	// scope is what the loop works on and how its passing work lands:
	// the workspace's, or the claimed issue of one of several agents.
	scope Scope

	// base is the baseline the open issues' tests are judged against, and
	// tree the clean tree the run started on ("" when not clean).
	base *BaseResults
	tree string
}

// artifacts is the directory under runs/ of the loop's prompts, logs and
// gate artifacts: the run's, or for one of several agents its issue's.
func (r *runner) artifacts() string {
	if id := r.scope.Issue(); id != "" {
		return r.res.RunID + "-" + id
	}
	return r.res.RunID
}

// nothingToDo ends the run before it starts when there is no task and
// open issues wait for a person (RunHalted). When there is no task and no
// open issue, or the only open ones wait on a person's decision, the run
// goes on with the gates first: with none open, their failures are the
// agent's work, and their passing ends the run with RunNothing.
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
	if r.res.Stuck = WaitingForPerson(q, r.cfg.Retry.MaxRetries); len(r.res.Stuck) > 0 {
		r.res.Outcome, r.res.Reason = RunHalted, "no task, and the open issues wait for a person"
		return true, nil
	}
	// No task and no open issue: the gates tell whether there is work, as
	// orchestrate gate would; what they file is the agent's.
	r.gatesFirst, r.probe = true, true
	return false, nil
}

// WaitingForPerson lists the issues of q that wait for a person (halted,
// stuck, out of attempts), each with why; maxRetries is an issue's limit
// when it gives none. A run with nothing else to do stops on them with
// RunHalted, one agent's or several's.
func WaitingForPerson(q *queue.Queue, maxRetries int) []IssueRef {
	var out []IssueRef
	for _, is := range q.Issues {
		ref := IssueRef{ID: is.ID, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, maxRetries)}
		if ref.Reason = needsPerson(is, ref); ref.Reason != "" {
			out = append(out, ref)
		}
	}
	return out
}

// nothingLeft is the reason of a run with no task and no open issue whose
// gates pass: there is nothing to do.
func (r *runner) nothingLeft() string {
	return "nothing to do: no task (--task, --task-file or " + r.w.Path(TaskFile) + "), no open issue, and the gates pass"
}

func (r *runner) loop(ctx context.Context) (*RunResult, error) {
	for n := 1; ; n++ {
		if n > 1 {
			if res, err := r.stopBefore(ctx, n); res != nil || err != nil {
				return res, err
			}
		}
		r.res.Loops, r.w.loop = n, n // the history rows of the loop name it
		a, res, err := r.agentOf(ctx, n)
		if res != nil || err != nil {
			return res, err
		}

		gr, mergeFeedback, res, err := r.landUnchecked(ctx, n, a)
		if res != nil || err != nil {
			return res, err
		}
		tried := gr != nil // landed unchecked, or tried to
		if !tried {
			var awaiting bool
			gr, awaiting, err = r.gatesApproved(ctx, n)
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
			if r.probe && n == 1 && gr.Evaluation.Passed {
				return r.end(ctx, RunNothing, r.nothingLeft())
			}
		}
		if !tried && gr.Passed() {
			landed, err := r.scope.Land(ctx, Loop{r: r, n: n})
			if res, err := r.ended(ctx, landed, err); res != nil || err != nil {
				return res, err
			}
			if landed.Gates != nil {
				gr = landed.Gates // the gates failed as it landed
			}
			mergeFeedback = landed.Feedback
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

// landUnchecked lands loop n's work with no gates run first, when its
// scope checks the work as it lands (see ChecksOnLanding) and the gates
// ask no person: a merge train checks it there, on the work ahead of it,
// once, where a check first in its worktree would be followed by another
// on the train. It returns the gates that failed as it landed, or, when it
// did not land for another reason (a conflict, a change refused), what
// the agent is told and gates that ran none; nil gates when it did not
// try. A result ends the run.
func (r *runner) landUnchecked(ctx context.Context, n int, a *AgentRun) (*GateRun, string, *RunResult, error) {
	if cl, ok := r.scope.(ChecksOnLanding); !ok || !cl.ChecksOnLanding() || a == nil || r.probe || r.asksAPerson() {
		return nil, "", nil, nil
	}
	landed, err := r.scope.Land(ctx, Loop{r: r, n: n, unchecked: true})
	if res, err := r.ended(ctx, landed, err); res != nil || err != nil {
		return nil, "", res, err
	}
	if landed.Gates != nil {
		return landed.Gates, landed.Feedback, nil, nil
	}
	// Sent back before its gates ran: none failed.
	return &GateRun{Evaluation: &gate.Evaluation{Passed: true}}, landed.Feedback, nil, nil
}

// ended ends the run after a Land that landed the work, was interrupted
// or failed; a nil result goes on.
func (r *runner) ended(ctx context.Context, landed Landed, err error) (*RunResult, error) {
	switch {
	case landed.Reason != "":
		// Landed: done, whatever ended meanwhile (the renewal of a claim
		// its resolve ended, a Ctrl-C after the merge).
		return r.end(ctx, RunPassed, landed.Reason)
	case ctx.Err() != nil:
		return r.interrupted(ctx)
	case err != nil:
		return r.fail(ctx, err)
	}
	return nil, nil
}

// asksAPerson reports whether a gate asks a person (a human gate) or a
// reviewer: the loop's own run of the gates waits for the one and tells
// the other's errors apart.
func (r *runner) asksAPerson() bool {
	return slices.ContainsFunc(r.cfg.Gates, func(g config.Gate) bool { return g.IsHuman() || g.IsReview() })
}

// agentOf launches loop n's agent, or, in a first loop of the gates
// alone, says why there is none (a nil AgentRun). A result ends the run.
func (r *runner) agentOf(ctx context.Context, n int) (*AgentRun, *RunResult, error) {
	if n == 1 && r.gatesFirst {
		why := "the open issues wait on a person's decision"
		if r.probe {
			why = "no task and no open issue: what fails is the work"
		}
		r.step(Step{Kind: StepGatesOnly, Loop: n, Why: why})
		return nil, nil, nil
	}
	if res, err := r.spendLaunch(ctx); res != nil || err != nil {
		return nil, res, err
	}
	a, err := r.launch(ctx, n)
	if ctx.Err() != nil {
		res, err := r.interrupted(ctx)
		return nil, res, err
	}
	if closed := (*ClosedError)(nil); errors.As(err, &closed) {
		res, err := r.end(ctx, RunNothing, closed.Error())
		return nil, res, err
	}
	if err == nil && (a.ExitCode == 126 || a.ExitCode == 127) {
		err = fmt.Errorf("the agent could not run (%s): check %s in %s", a.Reason, a.Key, r.w.Path(ConfigFile))
	}
	if err == nil {
		err = r.couldNotStart(a)
	}
	if err == nil {
		err = r.keepCounts(ctx)
	}
	if err != nil {
		res, err := r.fail(ctx, err)
		return nil, res, err
	}
	return a, nil, nil
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
	if id := r.scope.Issue(); id != "" {
		chk, err = r.w.CheckIssue(ctx, r.opt.Now(), id)
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
	r.countedCheck(chk)
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
	if id := r.scope.Issue(); id != "" {
		opt.Dir, opt.Issue, opt.Baseline = r.artifacts(), id, r.opt.Baseline
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
	r.gatesRan()
	r.attempts, r.res.Gates = gr.Attempts, gr
	if err := r.resolveHeld(ctx, n, gr); err != nil {
		return nil, err
	}
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
	// Judged, the gates that failed for this work alone: the others'
	// failures on the baseline are not its attempt's.
	for _, f := range gr.told().Failures() {
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

// aborted reports whether orchestrate abort asked the run to stop. Its
// scope's End takes the marker away, or leaves it to the other agents.
func (r *runner) aborted() bool {
	_, err := os.Stat(r.w.Path(AbortFile))
	return err == nil
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
	return r.res, r.scope.End(ctx, Loop{r: r, n: r.res.Loops}, outcome, reason)
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
	return resolutionsIn(direct{w}, resolved)
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
