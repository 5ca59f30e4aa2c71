package pool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// worker is the Scope of one of several agents: its claim, its
// worktree and the merge queue. The loop works on its issue alone, in its
// worktree, and merges its work back when the gates pass.
type worker struct {
	w      loop.Workspace // the workspace, fenced by the claim
	name   string
	claim  loop.Claimed
	repo   *worktree.Repo
	tree   *worktree.Tree
	branch string // the integration branch, as git and people name it
	train  *train // the merge queue
	port   int    // the agent's own port; 0 when the config asks for none
	// share, on a remote, publishes the queue before each launch of the
	// agent (see loop.Workspace.SyncQueue); keep, after it, its work (see takeUp).
	share, keep func(context.Context) error
	merged      string // the commit merged, once it is
	// upstream is the work of another issue the branch was put onto in a
	// merge train that did not merge it: its own commits are after it.
	upstream string
	rel      string // the workspace directory, relative to the repository
	// stop ends the agent's work on its issue, with its cause; now is the
	// run's clock.
	stop func(error)
	now  func() time.Time
	// watch, where the branch is this repository's, reads it after each
	// launch: a move an agent made stops the run at once (see
	// localBranch).
	watch func(context.Context) error
	// marked are the files a conflict was marked in when the work was put
	// back onto the branch for the agent to resolve (see conflictBack),
	// until no marker is left in them.
	marked []string
}

// Issue is the claimed issue.
func (a *worker) Issue() string { return a.claim.ID }

// Env gives the agent its claim, carried by every change it makes; its
// own temporary files; its own port, when the config asks for ports.
func (a *worker) Env(env map[string]string) {
	env["ORCHESTRATE_CLAIM"] = a.claim.ID + ":" + strconv.Itoa(a.claim.Epoch)
	env["ORCHESTRATE_AGENT_NAME"] = a.name
	env["TMPDIR"] = a.repo.TempDir(a.claim.ID)
	if a.port > 0 {
		env["PORT"] = strconv.Itoa(a.port)
	}
}

// Launching checks that the worktree is still the one made (see lost),
// and publishes, on a remote, the retry this launch spends: a machine that
// takes the issue over counts it.
func (a *worker) Launching(ctx context.Context) error {
	if err := a.tree.Check(); a.lost(ctx, err) {
		return err
	}
	if a.share == nil {
		return nil
	}
	return a.share(ctx)
}

// testAfterCheck, set by a test alone, runs with the worktree's
// directory once a launch's check of it passed: a fault there (the
// worktree deleted) is one that no check before the gates sees.
var testAfterCheck func(dir string)

// Launched checks that the agent left its worktree the one made, before
// its gates run there (see lost), and the integration branch where a
// person or the train put it (see watch), and keeps, on a remote, what the agent
// did, for the machine that takes the issue over.
func (a *worker) Launched(ctx context.Context) {
	if err := a.tree.Check(); a.lost(ctx, err) {
		return
	}
	if testAfterCheck != nil {
		testAfterCheck(a.tree.Dir)
	}
	if a.watch != nil {
		if err := a.watch(ctx); err != nil {
			a.stop(err)
			return
		}
	}
	if a.keep == nil {
		return
	}
	if err := a.keep(ctx); err != nil {
		a.w.Warn(fmt.Errorf("keeping the work of %s on the remote: %w", a.claim.ID, err))
	}
}

// End writes nothing: Run writes the run's one run_end row, and
// takes orchestrate abort's marker away at its end.
func (a *worker) End(context.Context, loop.Loop, string, string) error { return nil }

// ChecksOnLanding: the train checks an agent's work as it boards, on the
// work of the cars ahead (see train), where a check in its worktree first
// would be followed by a second on the train for every car but the first.
func (a *worker) ChecksOnLanding() bool { return true }

// Land merges an agent's work into the integration branch: its commit,
// then the merge train (see train): a rebase onto the branch and the work
// merged before it, its gates there (again, when they passed in its
// worktree, only when the rebase moved it), and a fast-forward. When the
// merge was not made, it says why: a conflict, or a change to the
// workspace directory, recorded against the issue, as the agent's
// feedback; or the gates that failed after the rebase.
func (a *worker) Land(ctx context.Context, l loop.Loop) (loop.Landed, error) {
	if left := a.tree.Marked(a.marked); len(left) > 0 {
		return loop.Landed{Feedback: a.mergeFailure(ctx, l, fmt.Sprintf("conflict markers are left in %s (<<<<<<< … >>>>>>>): resolve each conflict there, keeping both sides' intent, and remove the markers.",
			listSome(left, 5)))}, nil
	}
	a.marked = nil
	made, err := a.tree.Commit(ctx, agentCommitMessage(a.claim))
	if a.lost(ctx, err) {
		return loop.Landed{}, nil
	} else if err != nil {
		return loop.Landed{}, err
	}
	if files, err := a.repo.Touched(ctx, a.branch, a.tree.Branch, a.rel); err != nil {
		return loop.Landed{}, err
	} else if len(files) > 0 {
		return loop.Landed{Feedback: a.mergeFailure(ctx, l, fmt.Sprintf("the agent's commits change %s/, which is orchestrate's: %s. Undo those changes (git checkout %s -- %s) and change the queue only through orchestrate.",
			a.rel, listSome(files, 5), a.branch, a.rel))}, nil
	}
	w := l.Workspace()
	c, err := a.car(l)
	if err != nil {
		return loop.Landed{}, err
	}
	l.Step(loop.Step{Kind: loop.StepQueued})
	res := a.train.merge(ctx, c)
	a.upstream = c.upstream
	switch {
	case a.lost(ctx, res.err):
		return loop.Landed{}, nil
	case res.err != nil:
		return loop.Landed{}, res.err
	case res.conflict != nil:
		return loop.Landed{Feedback: a.conflictBack(ctx, l, res.conflict)}, nil
	case res.failed != nil && c.fresh:
		// Its gates failed where they first ran: the attempt failed, as
		// it would in its worktree, and its commit is undone, its changes
		// left to the next attempt, whose work lands as one commit.
		if made != "" {
			if err := a.tree.Uncommit(ctx); a.lost(ctx, err) {
				return loop.Landed{}, nil
			} else if err != nil {
				return loop.Landed{}, err
			}
		}
		return loop.Landed{Gates: res.failed}, nil
	case res.failed != nil:
		a.mergeEvent(ctx, l, analytics.OutcomeFail, "gates fail after the rebase onto "+a.branch)
		return loop.Landed{Gates: res.failed}, nil
	}
	a.merged, a.upstream = res.merged, ""
	// Merged: done, whatever ends now (the renewal of a claim its resolve
	// ended, a Ctrl-C after the merge).
	landed := loop.Landed{Reason: "its gates pass, and it is merged into " + a.branch}
	if c.fresh && res.gr != nil && res.gr.Verdict != nil {
		// Its gates ran on the train only: what its issue learned there
		// is recorded (an issue with no tests, checked alone, learns those
		// its work turned green).
		if err := w.RecordClaimed(ctx, l.Now(), a.claim.ID, res.gr); err != nil {
			return landed, err
		}
	}
	if _, err := w.Resolve(ctx, l.Now(), a.claim.ID, false); err != nil {
		return landed, err
	}
	a.mergeEvent(ctx, l, analytics.OutcomePass, fmt.Sprintf("%.12s into %s", res.merged, a.branch))
	if v := res.verdict; v != nil {
		w.Warn(l.Event(ctx, loop.JudgedEvent(l.Now(), "", a.claim.ID, v)))
	}
	return landed, nil
}

// car is the agent's work of loop l as it boards the train: checked there
// again, or, unchecked by the loop, there alone when its issue learns its
// tests from it.
func (a *worker) car(l loop.Loop) (*car, error) {
	w := l.Workspace()
	c := &car{
		tree: a.tree, upstream: a.upstream,
		check: l.Recheck,
		record: func(ctx context.Context, gr *loop.GateRun) error {
			return w.RecordClaimed(ctx, l.Now(), a.claim.ID, gr)
		},
		judge: func(gr *loop.GateRun, base []results.Report) error {
			return w.JudgeClaimed(gr, a.claim.ID, base)
		},
		fence: w.CheckFence,
		fresh: l.Unchecked(),
	}
	if !c.fresh {
		c.last = l.Gates() // unchecked, Gates is an earlier loop's
	} else {
		var err error
		if c.alone, err = w.Learns(a.claim.ID); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// lost ends the agent's work on its issue when err says its worktree is
// no longer the one made (see worktree.Tree.Check), and reports whether it
// did. A worktree gone is not the issue's failure: nothing is recorded. A
// worktree with something else in its place (a link to another checkout)
// is: it is recorded against the issue, with the gate "worktree".
func (a *worker) lost(ctx context.Context, err error) bool {
	var nt *worktree.NotTreeError
	if !errors.As(err, &nt) {
		return false
	}
	if !nt.Gone {
		code := 1
		if _, rerr := a.w.Record(ctx, a.now(), a.claim.ID, loop.Failure{Output: []byte(nt.Error() + "\n"), ExitCode: &code, Gate: "worktree"}); rerr != nil {
			a.w.Warn(fmt.Errorf("recording that %w: %v", nt, rerr))
		}
	}
	a.stop(nt)
	return true
}

// conflictBack sends work that conflicts with the integration branch back
// to its agent, put onto the branch for it: its worktree's branch moved
// onto the branch, its work on top, not committed, each conflict marked in
// its file, so that the agent resolves them by editing files, which every
// agent may do, where a rebase of its own needs git commands that a
// headless agent may not run (the claude profile allows the gates'
// commands only). Its commit waits until no marker is left. When its work
// cannot be put there, the agent is told to rebase it itself. It returns
// the agent's feedback, recorded as the failure of its issue.
func (a *worker) conflictBack(ctx context.Context, l loop.Loop, conflict *worktree.ConflictError) string {
	files, err := a.tree.Reapply(ctx, a.branch, a.upstream, "the work on "+a.claim.ID)
	if err != nil {
		how := "git rebase " + a.branch
		if a.upstream != "" {
			// Its branch still sits on work of another issue that is not
			// merged: that work stays out.
			how = fmt.Sprintf("git rebase --onto %s %.12s", a.branch, a.upstream)
		}
		return a.mergeFailure(ctx, l, fmt.Sprintf("%v. Rebase your branch onto %s (%s) and resolve the conflicts, keeping both sides' intent.",
			conflict, a.branch, how))
	}
	a.upstream, a.marked = "", files
	if len(files) == 0 {
		return a.mergeFailure(ctx, l, fmt.Sprintf("%v. Your work is now on %s, not committed, and applies there without conflicts: check that it still does what its issue asks.",
			conflict, a.branch))
	}
	return a.mergeFailure(ctx, l, fmt.Sprintf("%v. Your work is now on %s, not committed, with each conflict marked in its file (<<<<<<< the branch's side ======= yours >>>>>>>): edit %s to resolve them, keeping both sides' intent, and remove the markers.",
		conflict, a.branch, listSome(files, 5)))
}

// mergeFailure records why a merge could not be made against the issue, as
// a failure of its own signature, and returns it as the agent's feedback.
func (a *worker) mergeFailure(ctx context.Context, l loop.Loop, msg string) string {
	code := 1
	if _, err := l.Workspace().Record(ctx, l.Now(), a.claim.ID, loop.Failure{Output: []byte(msg + "\n"), ExitCode: &code, Gate: "merge"}); err != nil {
		return msg + " (recording it failed: " + err.Error() + ")"
	}
	a.mergeEvent(ctx, l, analytics.OutcomeFail, msg)
	return msg
}

func (a *worker) mergeEvent(ctx context.Context, l loop.Loop, outcome, detail string) {
	l.Step(loop.Step{Kind: loop.StepMerge, Merge: outcome + ": " + detail})
	l.Event(ctx, analytics.Event{Event: analytics.EventMerge, IssueID: a.claim.ID, Outcome: outcome, Detail: detail})
}

// workMark, in the message of the commit of an issue's work (see
// agentCommitMessage), names that issue.
const workMark = "orchestrate run --agents: the work on "

// workOf returns the issue whose work the commit with message is, when
// orchestrate made it (see agentCommitMessage).
func workOf(message string) (string, bool) {
	for _, line := range strings.Split(message, "\n") {
		if rest, ok := strings.CutPrefix(line, workMark); ok {
			id, _, ok := strings.Cut(rest, ",")
			return id, ok && id != ""
		}
	}
	return "", false
}

// leftUpstream is, for the worktree of an issue as a killed run left it,
// the work of another issue its branch was put onto in that run's merge
// train, not merged (see worker.upstream, which that run alone knew): the
// newest commit of base..its branch made for another issue; "" when there
// is none. Taken for the issue's own, that work would ride with it, and a
// car behind it whose work it is would lose it when this one leaves
// (rebased onto the branch without the work ahead of it).
func leftUpstream(ctx context.Context, repo *worktree.Repo, base string, tree *worktree.Tree) (string, error) {
	return repo.Newest(ctx, base, tree.Branch, func(message string) bool {
		id, ok := workOf(message)
		return ok && id != tree.Issue
	})
}

func agentCommitMessage(c loop.Claimed) string {
	s := c.Summary
	if s == "" {
		s = "work of orchestrate run --agents"
	}
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return fmt.Sprintf("%s: %s\n\n"+workMark+"%s, its quality gates passing.\n", c.ID, s, c.ID)
}

// index is the agent's number: 1 for agent-1.
func (a *worker) index() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(a.name, "agent-"))
	return n
}

// listSome names the first n of names, and how many more there are.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}
