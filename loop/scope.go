package loop

import (
	"context"
	"os"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// A Scope is what the loop of a run works on, and how its passing work
// lands. Run's one agent works on the workspace's task or its open
// issues, and commits its work (on_success). Each agent of several
// (package pool) works on the issue it claimed, in a worktree of its own,
// and its work rides the merge train.
type Scope interface {
	// Issue is the one issue the loop works on, or "" for the open issues.
	// The prompt names that issue alone. The gates record against it, and
	// its own check retries it. Its artifacts go to runs/<run-id>-<issue>/.
	Issue() string
	// Env adds what the scope gives the agent to its environment.
	Env(env map[string]string)
	// Launching comes before each launch of the agent; its error stops the
	// run.
	Launching(ctx context.Context) error
	// Launched comes after each launch of the agent.
	Launched(ctx context.Context)
	// Land lands the work of loop l, whose blocking gates pass.
	Land(ctx context.Context, l Loop) (Landed, error)
	// End is told that the run ends after loop l, with outcome and reason.
	End(ctx context.Context, l Loop, outcome, reason string) error
}

// ChecksOnLanding is a Scope whose Land checks the work itself, on the
// work landing ahead of it (the merge train of several agents): when it
// says so, its loop lands each agent's work without running the gates
// first (Loop.Unchecked), unless a gate asks a person or a reviewer.
type ChecksOnLanding interface {
	ChecksOnLanding() bool
}

// Landed is how a loop's passing work landed.
type Landed struct {
	// Reason, when set, says where the work landed: the run has passed.
	Reason string
	// Gates, when set, are gates that failed as the work landed: the loop
	// goes on with their failures.
	Gates *GateRun
	// Feedback, when set, says why the work did not land: the agent's
	// next prompt tells it.
	Feedback string
}

// Loop is one loop of a run under way, as its Scope sees it.
type Loop struct {
	r *runner
	n int
	// unchecked: the loop's gates did not run on the work it lands.
	unchecked bool
}

// Unchecked reports whether the work landing was not checked by the loop
// (see ChecksOnLanding): Land checks it, and Gates is an earlier loop's.
func (l Loop) Unchecked() bool { return l.unchecked }

// N is the loop's number, from 1.
func (l Loop) N() int { return l.n }

// Now is the run's clock.
func (l Loop) Now() time.Time { return l.r.opt.Now() }

// Workspace is the workspace the loop works in: its writes name the loop
// in the history.
func (l Loop) Workspace() Workspace { return l.r.w }

// Step reports s as a step of the loop.
func (l Loop) Step(s Step) {
	s.Loop = l.n
	l.r.step(s)
}

// Event appends ev to the history as a row of the loop: its time, run and
// loop filled in.
func (l Loop) Event(ctx context.Context, ev analytics.Event) error {
	ev.Time, ev.RunID, ev.Loop = l.r.opt.Now(), l.r.res.RunID, l.n
	return l.r.history(ctx, ev)
}

// Gates is the loop's last evaluation of the gates, or nil.
func (l Loop) Gates() *GateRun { return l.r.res.Gates }

// Recheck runs the loop's gates again, on the work as it is now (after a
// rebase): their rows go to the history; their failures are not
// recorded.
func (l Loop) Recheck(ctx context.Context) (*GateRun, error) {
	r := l.r
	gr, err := r.w.RunGates(ctx, r.opt.Now, GateOptions{Progress: r.opt.Progress, Previous: r.attempts,
		Dir: r.artifacts(), Issue: r.scope.Issue(), NoRecord: true})
	if err != nil {
		return nil, err
	}
	r.attempts, r.res.Gates = gr.Attempts, gr
	l.Step(Step{Kind: StepGates, Gates: gr})
	return gr, nil
}

// oneAgent is the Scope of Run: the workspace's task or its open issues,
// the work committed when its gates pass.
type oneAgent struct{ r *runner }

func (oneAgent) Issue() string                   { return "" }
func (oneAgent) Env(map[string]string)           {}
func (oneAgent) Launching(context.Context) error { return nil }
func (oneAgent) Launched(context.Context)        {}

// Land resolves the issues without a gate that the run's prompts gave the
// agent, still open (a person's issues: its gates passing is all their
// verification), then commits the work (on_success: commit), its message
// naming them.
func (s oneAgent) Land(ctx context.Context, l Loop) (Landed, error) {
	r := s.r
	r.settleGates(ctx, workState{}, false)
	for _, id := range r.named {
		res, ok, err := r.w.resolveOpen(ctx, l.Now(), id)
		if err != nil {
			return Landed{}, err
		}
		if ok {
			r.resolved = append(r.resolved, res)
			l.Step(Step{Kind: StepResolved, Resolved: []Resolution{res}})
		}
	}
	r.res.Commit, r.res.NotCommitted = r.w.commitSuccess(ctx, r.start, r.res.RunID, r.task, r.resolved, r.made.list())
	return Landed{Reason: "every blocking quality gate passes"}, nil
}

// End writes the run's run_end row. An abort it stopped for was its own:
// its marker goes first.
func (s oneAgent) End(ctx context.Context, _ Loop, outcome, reason string) error {
	r := s.r
	if outcome == RunAborted {
		_ = os.Remove(r.w.Path(AbortFile))
	}
	detail := reason
	if r.res.Stash != "" {
		detail += "; stash: " + r.res.Stash
	}
	return r.history(ctx, analytics.Event{Time: r.opt.Now(), RunID: r.res.RunID, Loop: r.res.Loops,
		Event: analytics.EventRunEnd, Outcome: outcome, Detail: detail})
}

// Warn reports err as a warning through Notify, or returns it when there
// is no one to tell.
func (w Workspace) Warn(err error) error { return w.warn(err) }

// AppendHistory appends events to the history, under the lock.
func (w Workspace) AppendHistory(ctx context.Context, events ...analytics.Event) error {
	return w.withLock(ctx, func() error { return w.appendHistory(events...) })
}

// CheckFence refuses, with an error matching claim.ErrFenced, the writes
// of a workspace whose claim (Fenced) was taken over; nil otherwise.
func (w Workspace) CheckFence(ctx context.Context) error { return w.checkFence(ctx) }

// RecordClaimed records the blocking failures of gr against the claimed
// issue id, as the gates of a claimed issue record them: for gr judged by
// the issue (JudgeClaimed), what counts against it, and gr.Feedback then
// tells the agent of that alone.
func (w Workspace) RecordClaimed(ctx context.Context, now time.Time, id string, gr *GateRun) error {
	if err := w.recordClaimedFailure(ctx, now, id, gr, nil); err != nil || gr.Verdict == nil || gr.Verdict.Pass {
		return err
	}
	cfg, err := w.Config()
	if err != nil {
		return err
	}
	gr.Feedback, err = w.judgedFeedback(cfg, gr)
	return err
}

// Claimable reports whether an agent may claim is: open (pending or
// in_progress), not waiting for a person, not an approval request. An
// issue of a human gate counts here.
func Claimable(is *queue.Issue) bool { return claimable(nil)(is) }
