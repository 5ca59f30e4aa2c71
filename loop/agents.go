package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// AgentsOptions tunes RunAgents.
type AgentsOptions struct {
	RunOptions
	// Agents is how many agents work at once.
	Agents int
	// Tasks are filed as issues, one each, before the agents claim.
	Tasks []string
	// Lease is how long a claim lasts unless renewed (the agents renew it
	// a third of the way through); DefaultAgentLease when 0.
	Lease time.Duration
	// AgentProgress, if set, hears each gate's progress with the agent
	// whose gates they are (RunOptions.Progress does not tell them apart).
	AgentProgress func(agent string, e gate.Event)
	// Remote, if set, is the git remote the machines that run agents
	// share: the claims are refs there, the queue is synced with its copy
	// there (SyncQueue), and the work lands on the integration branch
	// there, not in this clone.
	Remote *remote.Remote
	// Only, if set, are the issues to work: no other is claimed.
	Only []string
}

// DefaultAgentLease is the lease of the claims of run --agents, renewed
// every third of it while the agent works.
const DefaultAgentLease = time.Minute

// Worked is what one agent did with one issue.
type Worked struct {
	Agent   string `json:"agent"`
	Issue   string `json:"issue"`
	Summary string `json:"summary"`
	Epoch   int    `json:"epoch"`
	*RunResult
	// Merged is the commit the issue's work was merged as; "" when it was
	// not.
	Merged string `json:"merged,omitempty"`
	// Kept is the worktree kept for a person, with what it holds; "" when
	// it was removed.
	Kept string `json:"kept,omitempty"`
	// TakenOver says the claim was taken over while the agent worked (a
	// person reassigned it, or its lease lapsed): the agent stopped, and
	// the run goes on with the other issues.
	TakenOver bool `json:"taken_over,omitempty"`
}

// AgentsResult is what RunAgents did and why it stopped.
type AgentsResult struct {
	RunID       string   `json:"run_id"`
	Outcome     string   `json:"outcome"`
	Reason      string   `json:"reason"`
	Branch      string   `json:"branch"` // the integration branch
	Worked      []Worked `json:"worked"`
	Merged      []string `json:"merged"` // the issues merged, in merge order
	Stuck       []string `json:"stuck"`  // the issues that wait for a person
	Left        []string `json:"left"`   // worktrees a person is to look at
	ElapsedMS   int64    `json:"elapsed_ms"`
	AgentTimeMS int64    `json:"agent_time_ms"` // the agents' and gates' time, summed
}

// ErrNeedsGit says run --agents needs a git repository.
var ErrNeedsGit = errors.New("run --agents needs a git repository")

// The Step kinds of RunAgents, besides the loop's own (each carries the
// agent's name and its issue).
const (
	StepClaim = "claim" // an agent claimed an issue: Claim
	StepMerge = "merge" // an issue's branch merged, or failed to: Merge
	StepDone  = "done"  // an agent is done with its issue: Result
	// StepQueued: an issue's passing work joined the merge queue.
	StepQueued = "queued"
)

// agentCtx is what a runner working for one of several agents knows of
// its claim, its worktree and the merge queue.
type agentCtx struct {
	name   string
	claim  Claimed
	repo   *worktree.Repo
	tree   *worktree.Tree
	branch string // the integration branch, as git and people name it
	train  *train // the merge queue
	// share, on a remote, publishes the queue before each launch of the
	// agent (see SyncQueue); keep, after it, its work (see takeUp).
	share, keep func(context.Context) error
	merged      string // the commit merged, once it is
	// upstream is the work of another issue the branch was put onto in a
	// merge train that did not merge it: its own commits are after it.
	upstream string
	rel      string // the workspace directory, relative to the repository
	// marked are the files a conflict was marked in when the work was put
	// back onto the branch for the agent to resolve (see conflictBack),
	// until no marker is left in them.
	marked []string
}

// RunAgents runs opt.Agents agents at once on the open issues (and on
// opt.Tasks, filed as issues first). Each agent claims an issue
// (Claims.Next), works on it in a worktree of its own on the branch
// orchestrate/<issue>, its gates run there and its failures are recorded
// against its issue, by the rules and budgets of Run; an issue whose
// blocking gates pass is merged back by one integrator at a time (rebased
// onto the integration branch, the branch the main worktree is on; its
// gates run again; fast-forwarded). A conflict, or gates that fail after
// the rebase, is a failure of that issue. Worktrees go once merged or
// given up with nothing in them; one with work not merged is kept and
// reported. A start first cleans what a killed run left.
func (w Workspace) RunAgents(ctx context.Context, opt AgentsOptions) (*AgentsResult, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Lease <= 0 {
		opt.Lease = DefaultAgentLease
	}
	start := time.Now()
	held, cfg, err := w.startRun()
	if err != nil {
		return nil, err
	}
	defer held.Unlock()
	repo, err := worktree.Open(ctx, w.Root())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNeedsGit, err)
	}
	if d := cfg.Agents.Worktrees; d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(repo.Root, d)
		}
		repo.Base = d
	}
	branch, err := repo.CurrentBranch(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := repo.Head(ctx, "refs/heads/"+branch); err != nil {
		return nil, fmt.Errorf("%s has no commit yet: commit once, then run the agents", branch)
	}
	rel, err := filepath.Rel(repo.Root, w.absDir())
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s is not inside the repository %s", w.Dir, repo.Root)
	}
	if err := os.Remove(w.Path(AbortFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var land landing = localBranch{repo, branch}
	if opt.Remote != nil {
		land = remoteBranch{opt.Remote, branch}
		if _, err := land.Head(ctx); err != nil {
			return nil, err
		}
	}
	res := &AgentsResult{Branch: land.Rev()}
	if res.Left, err = w.cleanLeft(ctx, repo, branch); err != nil {
		return nil, err
	}
	if err := w.fileTasks(ctx, opt.Now(), opt.Tasks); err != nil {
		return nil, err
	}
	if err := w.share(ctx, opt.Remote); err != nil {
		return nil, err
	}
	if err := w.checkOnly(opt.Only); err != nil {
		return nil, err
	}
	if res.RunID, err = w.StartSession(ctx, opt.Now()); err != nil {
		return nil, err
	}
	p := &pool{w: w, opt: opt, cfg: cfg, held: held, repo: repo, branch: branch, land: land, claims: w.Claims(opt.Remote), rel: rel, res: res,
		given: map[string]bool{}, train: &train{repo: repo, land: land}}
	p.run(ctx)
	res.ElapsedMS = time.Since(start).Milliseconds()
	err = p.end(ctx)
	if serr := w.share(context.WithoutCancel(ctx), opt.Remote); err == nil {
		err = serr
	}
	return res, w.endRun(ctx, err, opt.Remote)
}

// checkOnly refuses issues to work that the queue does not hold: a
// mistyped ID would otherwise leave nothing to do, and say so as if every
// issue were done.
func (w Workspace) checkOnly(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if q.Issue(id) == nil {
			return &NoIssueError{Path: w.Path(QueueFile), ID: id}
		}
	}
	return nil
}

// share syncs the queue with the remote's (see SyncQueue), when the agents
// share one.
func (w Workspace) share(ctx context.Context, r *remote.Remote) error {
	if r == nil {
		return nil
	}
	return w.SyncQueue(ctx, r)
}

func (w Workspace) absDir() string {
	abs, err := filepath.Abs(w.Dir)
	if err != nil {
		return w.Dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// cleanLeft removes the worktrees and branches a killed run left that
// hold nothing a merge has not kept, and returns those it keeps, each with
// the command to look at it. The run lock is held: no other run's agent
// works in them.
func (w Workspace) cleanLeft(ctx context.Context, repo *worktree.Repo, branch string) ([]string, error) {
	left, err := repo.Leftovers(ctx, branch)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, l := range left {
		if l.Unmerged == "" {
			if err := repo.Remove(ctx, l.Issue, false); err != nil {
				w.warn(fmt.Errorf("removing the worktree of %s: %w", l.Issue, err))
			}
			continue
		}
		kept = append(kept, keptNote(repo, l.Issue, l.Unmerged))
	}
	return kept, nil
}

func keptNote(repo *worktree.Repo, issue, why string) string {
	dir := filepath.Join(repo.Dir(), issue)
	return fmt.Sprintf("%s: kept with %s: look with git -C %s status, git log %s; remove with git worktree remove --force %s && git branch -D %s",
		issue, why, dir, worktree.Branch(issue), dir, worktree.Branch(issue))
}

// fileTasks files each task as an issue for the agents.
func (w Workspace) fileTasks(ctx context.Context, now time.Time, tasks []string) error {
	for _, t := range tasks {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		_, err := w.AddIssue(ctx, now, NewIssue{
			Fields: map[string]string{
				queue.FieldType: "task", queue.FieldSource: "task", queue.FieldAutoRetry: "true",
			},
			Sections: map[string]string{queue.SectionSummary: t},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pool is the agents of one RunAgents.
type pool struct {
	w      Workspace
	opt    AgentsOptions
	cfg    *config.Config
	held   *fsx.Held
	repo   *worktree.Repo
	branch string
	land   landing // where the work lands: branch, here or on the remote
	claims Claims  // the claims: here, or on the remote
	rel    string
	train  *train

	mu    sync.Mutex
	res   *AgentsResult
	given map[string]bool // issues this run worked and let go: not claimed again
	stop  *RunResult      // the result that stops the run (cap, abort, error)
	errs  []error
}

func (p *pool) run(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i <= p.opt.Agents; i++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			p.agent(ctx, cancel, name)
		}("agent-" + strconv.Itoa(i))
	}
	wg.Wait()
}

// agent claims issues one after another until none is ready or the run
// stops.
func (p *pool) agent(ctx context.Context, cancel context.CancelFunc, name string) {
	holder := claim.Holder(name, os.Getpid())
	for ctx.Err() == nil && !p.stopped() {
		c, err := p.claimNext(ctx, holder)
		if err != nil {
			p.failed(err, cancel)
			return
		}
		if c == nil {
			if !p.waitForHeld(ctx) {
				return
			}
			continue
		}
		p.mu.Lock()
		p.given[c.ID] = true // no other agent of this run takes it again, whatever comes
		p.mu.Unlock()
		p.step(Step{Kind: StepClaim, Worker: name, Issue: c.ID, Claim: c})
		wk, err := p.work(ctx, name, *c)
		p.mu.Lock()
		if wk != nil {
			p.res.Worked = append(p.res.Worked, *wk)
			p.res.AgentTimeMS += wk.agentTime()
			if wk.Merged != "" {
				p.res.Merged = append(p.res.Merged, wk.Issue)
			}
			if wk.Kept != "" {
				p.res.Left = append(p.res.Left, wk.Kept)
			}
			switch wk.Outcome {
			case RunInterrupted:
				if !wk.TakenOver && p.stop == nil {
					p.stop = wk.RunResult
				}
			case RunCapReached, RunAborted, RunError, RunNothing:
				if p.stop == nil && wk.Outcome != RunNothing || wk.Outcome == RunNothing && strings.Contains(wk.Reason, "disabled") {
					p.stop = wk.RunResult
				}
			}
		}
		p.mu.Unlock()
		if wk != nil {
			p.step(Step{Kind: StepDone, Worker: name, Issue: c.ID, Result: wk})
		}
		if err != nil {
			p.failed(err, cancel)
			return
		}
	}
}

// claimNext claims the next ready issue for holder: here, or on the
// remote, once the queue is in step with the other machines'.
func (p *pool) claimNext(ctx context.Context, holder string) (*Claimed, error) {
	if err := p.w.share(ctx, p.opt.Remote); err != nil {
		return nil, err
	}
	return p.claims.Next(ctx, p.opt.Now(), holder, p.opt.Lease, p.skip)
}

// skip leaves out of Claims.Next the issues this run already worked, and
// those it is not to work.
func (p *pool) skip(is *queue.Issue) bool {
	if len(p.opt.Only) > 0 && !slices.Contains(p.opt.Only, is.ID) {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.given[is.ID]
}

// waitForHeld waits while open issues are claimed by holders of no agent
// of this run (a killed run's, whose leases have yet to lapse, or another
// machine's): it reports whether to look again.
func (p *pool) waitForHeld(ctx context.Context) bool {
	q, err := p.w.loadQueue()
	if err != nil {
		return false
	}
	waiting := false
	open := claimable(nil)
	for _, is := range q.Issues {
		if l := claim.Of(is); l.Holder != "" && open(is) && !p.skip(is) && !strings.HasSuffix(l.Holder, "/"+strconv.Itoa(os.Getpid())) {
			waiting = true
		}
	}
	if !waiting {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

func (p *pool) stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop != nil || len(p.errs) > 0
}

func (p *pool) failed(err error, cancel context.CancelFunc) {
	p.mu.Lock()
	p.errs = append(p.errs, err)
	p.mu.Unlock()
	cancel()
}

func (p *pool) step(s Step) {
	if p.opt.Step != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.opt.Step(s)
	}
}

// work is one agent's work on one claimed issue: a worktree, the loop,
// the merge, and what is left after it.
func (p *pool) work(ctx context.Context, name string, c Claimed) (*Worked, error) {
	wk := &Worked{Agent: name, Issue: c.ID, Summary: c.Summary, Epoch: c.Epoch}
	w := p.w.Fenced(c.ID, c.Epoch)
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := p.release(rctx, w, c); err != nil && !errors.Is(err, claim.ErrFenced) {
			w.warn(fmt.Errorf("releasing %s: %w", c.ID, err))
		}
	}
	base, err := p.land.Head(ctx)
	if err != nil {
		release()
		return nil, err
	}
	tree, err := p.takeUp(ctx, c.ID, base)
	if err != nil {
		release()
		return nil, fmt.Errorf("making the worktree of %s: %w", c.ID, err)
	}
	actx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		p.renew(actx, stop, w, c)
	}()
	a := &agentCtx{name: name, claim: c, repo: p.repo, tree: tree, branch: p.land.Rev(), train: p.train, rel: p.rel}
	if r := p.opt.Remote; r != nil {
		a.share = func(ctx context.Context) error { return w.SyncQueue(ctx, r) }
		a.keep = func(ctx context.Context) error {
			snap, err := tree.Snapshot(ctx, fmt.Sprintf("orchestrate: the work on %s, not merged yet (epoch %d)", c.ID, c.Epoch))
			if err != nil {
				return err
			}
			return r.PushWork(ctx, c.ID, snap)
		}
	}
	opt := p.opt.RunOptions
	if opt.Step != nil {
		opt.Step = func(s Step) {
			s.Worker, s.Issue = name, c.ID
			p.step(s)
		}
	}
	if ap := p.opt.AgentProgress; ap != nil {
		opt.Progress = func(e gate.Event) { ap(name, e) }
	}
	r := &runner{w: w.InTree(tree.Dir), opt: opt, cfg: p.cfg, res: &RunResult{RunID: p.res.RunID}, held: p.held, agent: a}
	r.start.git = true
	wk.RunResult, err = r.loop(actx)
	// A takeover, seen by the renewal or by a write refused: this agent
	// stops; the run goes on.
	fenced := context.Cause(actx)
	if !errors.Is(fenced, claim.ErrFenced) {
		fenced = err
	}
	if errors.Is(fenced, claim.ErrFenced) && ctx.Err() == nil && a.merged == "" {
		wk.RunResult.Outcome, wk.RunResult.Reason = RunInterrupted, fenced.Error()
		wk.TakenOver, err = true, nil
	}
	stop(nil)
	<-renewed
	wk.Merged = a.merged
	if wk.TakenOver {
		// Its worktree is the new holder's now: left as it is.
		wk.Kept = keptNote(p.repo, c.ID, "its claim taken over")
		return wk, err
	}
	release()
	if r := p.opt.Remote; r != nil && a.merged != "" {
		r.DropWork(context.WithoutCancel(ctx), c.ID) // merged: nothing to take up
	}
	wk.Kept = p.tidy(ctx, c.ID, a.merged != "")
	return wk, err
}

// takeUp makes the worktree of issue id on base. On a remote, the work
// another machine's holder kept there (its last agent's, see keep) is put
// on top, not committed, when this machine has no branch of the issue of
// its own: a holder killed, or gone, leaves its work to the next.
func (p *pool) takeUp(ctx context.Context, id, base string) (*worktree.Tree, error) {
	r := p.opt.Remote
	if r == nil {
		return p.repo.Add(ctx, id, base)
	}
	if _, err := p.repo.Head(ctx, "refs/heads/"+worktree.Branch(id)); err == nil {
		return p.repo.Add(ctx, id, base) // its own, as a killed run left it
	}
	snap, err := r.FetchWork(ctx, id)
	if err != nil || snap == "" {
		return p.repo.Add(ctx, id, base)
	}
	tree, err := p.repo.Add(ctx, id, snap)
	if err != nil {
		return nil, err
	}
	if _, err := tree.Reapply(ctx, base, snap+"^", "the work of "+id+" kept on "+r.Name()); err != nil {
		p.w.warn(fmt.Errorf("taking up the work of %s kept on %s: %w", id, r.Name(), err))
	}
	return tree, nil
}

// renew renews the claim every third of its lease until ctx ends; a claim
// taken over stops the agent (cancel with the refusal).
func (p *pool) renew(ctx context.Context, cancel context.CancelCauseFunc, w Workspace, c Claimed) {
	t := time.NewTicker(p.opt.Lease / 3)
	defer t.Stop()
	holder, held := c.Holder, p.claims.Fenced(c.ID, c.Epoch)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := held.Renew(ctx, p.opt.Now(), c.ID, holder, c.Epoch, p.opt.Lease)
		if errors.Is(err, claim.ErrFenced) {
			cancel(err)
			return
		}
		if err != nil && ctx.Err() == nil {
			w.warn(fmt.Errorf("renewing the claim of %s: %w", c.ID, err))
		}
	}
}

// release ends the claim c: here, or on the remote once what the agent's
// work did to the queue is shared.
func (p *pool) release(ctx context.Context, w Workspace, c Claimed) error {
	if err := w.share(ctx, p.opt.Remote); err != nil {
		return err
	}
	_, err := p.claims.Fenced(c.ID, c.Epoch).Release(ctx, p.opt.Now(), c.ID, c.Epoch)
	return err
}

// tidy removes an issue's worktree and branch once merged, or when they
// hold nothing; otherwise it keeps them and says how to look.
func (p *pool) tidy(ctx context.Context, issue string, merged bool) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if !merged {
		left, err := p.repo.Leftovers(ctx, p.branch)
		if err == nil {
			for _, l := range left {
				if l.Issue == issue && l.Unmerged != "" {
					return keptNote(p.repo, issue, l.Unmerged)
				}
			}
		}
	}
	if err := p.repo.Remove(ctx, issue, false); err != nil {
		p.w.warn(fmt.Errorf("removing the worktree of %s: %w", issue, err))
	}
	return ""
}

// end decides the run's outcome and writes its run_end row.
func (p *pool) end(ctx context.Context) error {
	res := p.res
	q, err := p.w.loadQueue()
	if err == nil {
		for _, wk := range res.Worked {
			if is := q.Issue(wk.Issue); is != nil && (is.Status() == queue.StatusStuck || is.Bool(queue.FieldHalted, false)) {
				res.Stuck = append(res.Stuck, wk.Issue)
			}
		}
	}
	slices.Sort(res.Stuck)
	res.Stuck = slices.Compact(res.Stuck)
	switch {
	case len(p.errs) > 0:
		res.Outcome, res.Reason = RunError, errors.Join(p.errs...).Error()
	case p.stop != nil:
		res.Outcome, res.Reason = p.stop.Outcome, p.stop.Reason
	case ctx.Err() != nil:
		res.Outcome, res.Reason = RunInterrupted, fmt.Sprintf("interrupted (%v)", context.Cause(ctx))
	case len(res.Worked) == 0:
		res.Outcome, res.Reason = RunNothing, "nothing to do: no open issue is ready to claim"
	case len(res.Stuck) > 0:
		res.Outcome, res.Reason = RunHalted, "the failing issues wait for a person: "+strings.Join(res.Stuck, ", ")
	case len(res.Merged) == len(res.Worked):
		res.Outcome, res.Reason = RunPassed, fmt.Sprintf("every issue worked was merged into %s: %s", p.land.Rev(), strings.Join(res.Merged, ", "))
	default:
		res.Outcome, res.Reason = RunGatesFailed, fmt.Sprintf("%d of %d issues merged into %s", len(res.Merged), len(res.Worked), p.land.Rev())
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	herr := p.w.withLock(hctx, func() error {
		return p.w.appendHistory(analytics.Event{Time: p.opt.Now(), RunID: res.RunID, Event: analytics.EventRunEnd,
			Outcome: res.Outcome, DurationMS: res.ElapsedMS,
			Detail: fmt.Sprintf("%s; agents=%d merged=%d agent_ms=%d", res.Reason, p.opt.Agents, len(res.Merged), res.AgentTimeMS)})
	})
	if len(p.errs) > 0 {
		return errors.Join(append(p.errs, herr)...)
	}
	return herr
}

// agentTime is the time an agent's loops took: its agent runs and gates.
func (wk *Worked) agentTime() int64 {
	if wk.RunResult == nil {
		return 0
	}
	var ms int64
	for _, a := range wk.Agents {
		ms += a.Duration.Milliseconds()
	}
	return ms
}

// mergeBack merges an agent's passing work into the integration branch:
// its commit, then the merge train (see train): a rebase onto the branch
// and the work merged before it, the gates again when the rebase moved it,
// and a fast-forward. It returns why the merge was not made (a conflict, a
// change to the workspace directory, recorded against the issue, as the
// agent's feedback; or the gates that failed after the rebase), or nothing
// once merged (r.agent.merged).
func (r *runner) mergeBack(ctx context.Context, n int) (*GateRun, string, error) {
	a := r.agent
	if left := a.tree.Marked(a.marked); len(left) > 0 {
		return nil, r.mergeFailure(ctx, fmt.Sprintf("conflict markers are left in %s (<<<<<<< … >>>>>>>): resolve each conflict there, keeping both sides' intent, and remove the markers.",
			listSome(left, 5))), nil
	}
	a.marked = nil
	if _, err := a.tree.Commit(ctx, agentCommitMessage(a.claim)); err != nil {
		return nil, "", err
	}
	if files, err := a.repo.Touched(ctx, a.branch, a.tree.Branch, a.rel); err != nil {
		return nil, "", err
	} else if len(files) > 0 {
		return nil, r.mergeFailure(ctx, fmt.Sprintf("the agent's commits change %s/, which is orchestrate's: %s. Undo those changes (git checkout %s -- %s) and change the queue only through orchestrate.",
			a.rel, listSome(files, 5), a.branch, a.rel)), nil
	}
	c := &car{
		tree: a.tree, upstream: a.upstream,
		check: func(ctx context.Context) (*GateRun, error) { return r.recheck(ctx, n) },
		record: func(ctx context.Context, gr *GateRun) error {
			return r.w.recordClaimedFailure(ctx, r.opt.Now(), a.claim.ID, gr, nil)
		},
		fence: r.w.checkFence,
	}
	r.step(Step{Kind: StepQueued, Loop: n})
	res := a.train.merge(ctx, c)
	a.upstream = c.upstream
	switch {
	case res.err != nil:
		return nil, "", res.err
	case res.conflict != nil:
		return nil, r.conflictBack(ctx, res.conflict), nil
	case res.failed != nil:
		r.mergeEvent(ctx, n, analytics.OutcomeFail, "gates fail after the rebase onto "+a.branch)
		return res.failed, "", nil
	}
	a.merged, a.upstream = res.merged, ""
	if _, err := r.w.Resolve(ctx, r.opt.Now(), a.claim.ID, false); err != nil {
		return nil, "", err
	}
	r.resolved = append(r.resolved, Resolution{ID: a.claim.ID, Summary: a.claim.Summary})
	r.mergeEvent(ctx, n, analytics.OutcomePass, fmt.Sprintf("%.12s into %s", res.merged, a.branch))
	return nil, "", nil
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
func (r *runner) conflictBack(ctx context.Context, conflict *worktree.ConflictError) string {
	a := r.agent
	files, err := a.tree.Reapply(ctx, a.branch, a.upstream, "the work on "+a.claim.ID)
	if err != nil {
		how := "git rebase " + a.branch
		if a.upstream != "" {
			// Its branch still sits on work of another issue that is not
			// merged: that work stays out.
			how = fmt.Sprintf("git rebase --onto %s %.12s", a.branch, a.upstream)
		}
		return r.mergeFailure(ctx, fmt.Sprintf("%v. Rebase your branch onto %s (%s) and resolve the conflicts, keeping both sides' intent.",
			conflict, a.branch, how))
	}
	a.upstream, a.marked = "", files
	if len(files) == 0 {
		return r.mergeFailure(ctx, fmt.Sprintf("%v. Your work is now on %s, not committed, and applies there without conflicts: check that it still does what its issue asks.",
			conflict, a.branch))
	}
	return r.mergeFailure(ctx, fmt.Sprintf("%v. Your work is now on %s, not committed, with each conflict marked in its file (<<<<<<< the branch's side ======= yours >>>>>>>): edit %s to resolve them, keeping both sides' intent, and remove the markers.",
		conflict, a.branch, listSome(files, 5)))
}

// recheck runs the gates of loop n again after a rebase, for the merge
// train: their rows go to the history, their failure is not recorded yet.
func (r *runner) recheck(ctx context.Context, n int) (*GateRun, error) {
	gr, err := r.w.RunGates(ctx, r.opt.Now, GateOptions{Progress: r.opt.Progress, Previous: r.attempts,
		Dir: r.artifacts(), Issue: r.agent.claim.ID, NoRecord: true})
	if err != nil {
		return nil, err
	}
	r.attempts, r.res.Gates = gr.Attempts, gr
	r.step(Step{Kind: StepGates, Loop: n, Gates: gr})
	return gr, nil
}

// mergeFailure records why a merge could not be made against the issue, as
// a failure of its own signature, and returns it as the agent's feedback.
func (r *runner) mergeFailure(ctx context.Context, msg string) string {
	code := 1
	if _, err := r.w.Record(ctx, r.opt.Now(), r.agent.claim.ID, Failure{Output: []byte(msg + "\n"), ExitCode: &code, Gate: "merge"}); err != nil {
		return msg + " (recording it failed: " + err.Error() + ")"
	}
	r.mergeEvent(ctx, r.res.Loops, analytics.OutcomeFail, msg)
	return msg
}

func (r *runner) mergeEvent(ctx context.Context, n int, outcome, detail string) {
	r.step(Step{Kind: StepMerge, Loop: n, Merge: outcome + ": " + detail})
	r.history(ctx, analytics.Event{Time: r.opt.Now(), RunID: r.res.RunID, Loop: n, Event: analytics.EventMerge,
		IssueID: r.agent.claim.ID, Outcome: outcome, Detail: detail})
}

func agentCommitMessage(c Claimed) string {
	s := c.Summary
	if s == "" {
		s = "work of orchestrate run --agents"
	}
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return fmt.Sprintf("%s: %s\n\norchestrate run --agents: the work on %s, its quality gates passing.\n", c.ID, s, c.ID)
}

// index is the agent's number: 1 for agent-1.
func (a *agentCtx) index() int {
	n, _ := strconv.Atoi(strings.TrimPrefix(a.name, "agent-"))
	return n
}
