package pool

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
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// Options tunes Run.
type Options struct {
	loop.RunOptions
	// Agents is how many agents work at once.
	Agents int
	// Tasks are filed as issues, one each, before the agents claim.
	Tasks []string
	// Lease is how long a claim lasts unless renewed (the agents renew it
	// a third of the way through); DefaultLease when 0.
	Lease time.Duration
	// AgentProgress, if set, hears each gate's progress with the agent
	// whose gates they are (loop.RunOptions.Progress does not tell them apart).
	AgentProgress func(agent string, e gate.Event)
	// Remote, if set, is the git remote the machines that run agents
	// share: the claims are refs there, the queue is synced with its copy
	// there (loop.Workspace.SyncQueue), and the work lands on the integration branch
	// there, not in this clone.
	Remote *remote.Remote
	// Only, if set, are the issues to work: no other is claimed.
	Only []string
}

// Result is what Run did and why it stopped.
type Result struct {
	RunID       string        `json:"run_id"`
	Outcome     string        `json:"outcome"`
	Reason      string        `json:"reason"`
	Branch      string        `json:"branch"` // the integration branch
	Worked      []loop.Worked `json:"worked"`
	Merged      []string      `json:"merged"` // the issues merged, in merge order
	Stuck       []string      `json:"stuck"`  // the issues that wait for a person
	Left        []string      `json:"left"`   // worktrees a person is to look at
	ElapsedMS   int64         `json:"elapsed_ms"`
	AgentTimeMS int64         `json:"agent_time_ms"` // the agents' and gates' time, summed
}

// ErrNeedsGit says run --agents needs a git repository.
var ErrNeedsGit = errors.New("run --agents needs a git repository")

// Run runs opt.Agents agents at once on the open issues of w (and on
// opt.Tasks, filed as issues first). Each agent claims an issue
// (loop.Workspace.ClaimNext), works on it in a worktree of its own on the branch
// orchestrate/<issue>, its gates run there and its failures are recorded
// against its issue, by the rules and budgets of loop.Workspace.Run; an issue whose
// blocking gates pass is merged back by one integrator at a time (rebased
// onto the integration branch, the branch the main worktree is on; its
// gates run again; fast-forwarded). A conflict, or gates that fail after
// the rebase, is a failure of that issue. Worktrees go once merged or
// given up with nothing in them; one with work not merged is kept and
// reported. A start first cleans what a killed run left.
func Run(ctx context.Context, w loop.Workspace, opt Options) (*Result, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Lease <= 0 {
		opt.Lease = DefaultLease
	}
	start := time.Now()
	run, err := w.StartRun()
	if err != nil {
		return nil, err
	}
	defer run.Unlock()
	cfg := run.Config
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
	rel, err := filepath.Rel(repo.Root, absDir(w))
	if err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%s is not inside the repository %s", w.Dir, repo.Root)
	}
	if err := os.Remove(w.Path(loop.AbortFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var land landing = &localBranch{repo: repo, branch: branch}
	if opt.Remote != nil {
		land = remoteBranch{opt.Remote, branch}
		if _, err := land.Head(ctx); err != nil {
			return nil, err
		}
	}
	res := &Result{Branch: land.Rev()}
	if res.Left, err = cleanLeft(w, ctx, repo, branch); err != nil {
		return nil, err
	}
	if err := fileTasks(w, ctx, opt.Now(), opt.Tasks); err != nil {
		return nil, err
	}
	if err := share(w, ctx, opt.Remote); err != nil {
		return nil, err
	}
	if err := checkOnly(w, opt.Only); err != nil {
		return nil, err
	}
	if res.RunID, err = w.StartSession(ctx, opt.Now()); err != nil {
		return nil, err
	}
	bctx, stopBases := context.WithCancel(ctx)
	defer stopBases()
	bases := &baselines{w: w, repo: repo, now: opt.Now, ctx: bctx}
	p := &pool{w: w, opt: opt, cfg: cfg, started: run, repo: repo, branch: branch, land: land, claims: w.Claims(opt.Remote), rel: rel, res: res,
		given: map[string]bool{}, lost: map[string]bool{}, bases: bases, train: &train{repo: repo, land: land, bases: bases, warn: func(err error) { _ = w.Warn(err) }}}
	p.run(ctx)
	// A baseline still being taken is of no use once the agents are done.
	stopBases()
	bases.wait()
	res.ElapsedMS = time.Since(start).Milliseconds()
	err = p.end(ctx)
	if serr := share(w, context.WithoutCancel(ctx), opt.Remote); err == nil {
		err = serr
	}
	return res, w.EndRun(ctx, err, opt.Remote)
}

// checkOnly refuses issues to work that the queue does not hold: a
// mistyped ID would otherwise leave nothing to do, and say so as if every
// issue were done.
func checkOnly(w loop.Workspace, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	q, err := queue.Load(w.Path(loop.QueueFile))
	if err != nil {
		return err
	}
	for _, id := range ids {
		if q.Issue(id) == nil {
			return &loop.NoIssueError{Path: w.Path(loop.QueueFile), ID: id}
		}
	}
	return nil
}

// share syncs the queue with the remote's (see loop.Workspace.SyncQueue), when the agents
// share one.
func share(w loop.Workspace, ctx context.Context, r *remote.Remote) error {
	if r == nil {
		return nil
	}
	return w.SyncQueue(ctx, r)
}

func absDir(w loop.Workspace) string {
	abs, err := filepath.Abs(w.Dir)
	if err != nil {
		return w.Dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// fileTasks files each task as an issue for the agents.
func fileTasks(w loop.Workspace, ctx context.Context, now time.Time, tasks []string) error {
	for _, t := range tasks {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		_, err := w.AddIssue(ctx, now, loop.NewIssue{
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

// pool is the agents of one Run.
type pool struct {
	w       loop.Workspace
	opt     Options
	cfg     *config.Config
	started *loop.Started
	repo    *worktree.Repo
	branch  string
	land    landing     // where the work lands: branch, here or on the remote
	claims  loop.Claims // the claims: here, or on the remote
	rel     string
	train   *train
	bases   *baselines // the results each agent's work is judged against

	mu    sync.Mutex
	res   *Result
	given map[string]bool // issues this run worked and let go: not claimed again
	// lost are the issues whose worktree was no longer the one made (see
	// worker.lost): their work stopped, the run's goes on.
	lost map[string]bool
	// waitFrom is when the agents began to wait for claims held
	// elsewhere; waitTold that the wait was said.
	waitFrom time.Time
	waitTold bool
	stop     *loop.RunResult // the result that stops the run (cap, abort, error)
	errs     []error
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
		p.step(loop.Step{Kind: loop.StepClaim, Worker: name, Issue: c.ID, Claim: c})
		wk, err := p.work(ctx, name, *c)
		p.mu.Lock()
		if wk != nil {
			p.res.Worked = append(p.res.Worked, *wk)
			p.res.AgentTimeMS += agentTime(wk)
			if wk.Merged != "" {
				p.res.Merged = append(p.res.Merged, wk.Issue)
			}
			if wk.Kept != "" {
				p.res.Left = append(p.res.Left, wk.Kept)
			}
			switch wk.Outcome {
			case loop.RunInterrupted:
				if !wk.TakenOver && !p.lost[c.ID] && p.stop == nil {
					p.stop = wk.RunResult
				}
			case loop.RunCapReached, loop.RunAborted, loop.RunError, loop.RunNothing:
				if p.stop == nil && wk.Outcome != loop.RunNothing || wk.Outcome == loop.RunNothing && strings.Contains(wk.Reason, "disabled") {
					p.stop = wk.RunResult
				}
			}
		}
		p.mu.Unlock()
		if wk != nil {
			p.step(loop.Step{Kind: loop.StepDone, Worker: name, Issue: c.ID, Result: wk})
		}
		if err != nil {
			p.failed(err, cancel)
			return
		}
	}
}

// claimNext claims the next ready issue for holder: here, or on the
// remote, once the queue is in step with the other machines'.
func (p *pool) claimNext(ctx context.Context, holder string) (*loop.Claimed, error) {
	if err := share(p.w, ctx, p.opt.Remote); err != nil {
		return nil, err
	}
	return p.claims.Next(ctx, p.opt.Now(), holder, p.opt.Lease, p.skip)
}

// skip leaves out of the claims the issues this run already worked, and
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
	q, err := queue.Load(p.w.Path(loop.QueueFile))
	if err != nil {
		return false
	}
	var held []string
	var until time.Time
	for _, is := range q.Issues {
		if l := claim.Of(is); l.Holder != "" && loop.Claimable(is) && !p.skip(is) && !strings.HasSuffix(l.Holder, "/"+strconv.Itoa(os.Getpid())) {
			held = append(held, fmt.Sprintf("%s (%s, lease until %s)", is.ID, l.Holder, l.Until.UTC().Format(time.RFC3339)))
			if l.Until.After(until) {
				until = l.Until
			}
		}
	}
	p.sayWait(held, until, p.opt.Now())
	if len(held) == 0 {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Second):
		return true
	}
}

// waitSaid is how long a wait goes unsaid.
const waitSaid = 2 * time.Second

// sayWait tells the person, once a wait for the claims held (the issues,
// each with its holder and lease) has lasted waitSaid, what it waits for
// and until when; once per wait. No claim held ends the wait.
func (p *pool) sayWait(held []string, until, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(held) == 0 {
		p.waitFrom, p.waitTold = time.Time{}, false
		return
	}
	if p.waitFrom.IsZero() {
		p.waitFrom = now
	}
	if p.waitTold || now.Sub(p.waitFrom) < waitSaid {
		return
	}
	p.waitTold = true
	p.w.Warn(fmt.Errorf("waiting for claims of another run or machine: %s; until %s at the latest (a lease lapsed is taken over once its holder is gone)",
		strings.Join(held, ", "), until.UTC().Format(time.RFC3339)))
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

func (p *pool) step(s loop.Step) {
	if p.opt.Step != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.opt.Step(s)
	}
}

// work is one agent's work on one claimed issue: a worktree, the loop,
// the merge, and what is left after it.
func (p *pool) work(ctx context.Context, name string, c loop.Claimed) (*loop.Worked, error) {
	wk := &loop.Worked{Agent: name, Issue: c.ID, Summary: c.Summary, Epoch: c.Epoch}
	w := p.w.Fenced(c.ID, c.Epoch)
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := p.release(rctx, w, c); err != nil && !errors.Is(err, claim.ErrFenced) {
			w.Warn(fmt.Errorf("releasing %s: %w", c.ID, err))
		}
	}
	base, err := p.startOf(ctx)
	if err != nil {
		release()
		return nil, err
	}
	tree, upstream, err := p.takeUp(ctx, c.ID, base)
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
	a := &worker{w: w, name: name, claim: c, repo: p.repo, tree: tree, branch: p.land.Rev(), train: p.train, rel: p.rel,
		stop: stop, now: p.opt.Now, watch: p.watch(), upstream: upstream}
	if base := p.cfg.Agents.PortBase; base > 0 {
		a.port = base + a.index()
	}
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
	opt.Baseline = func(ctx context.Context) (*loop.BaseResults, error) { return p.bases.of(ctx, base) }
	if opt.Step != nil {
		opt.Step = func(s loop.Step) {
			s.Worker, s.Issue = name, c.ID
			p.step(s)
		}
	}
	if ap := p.opt.AgentProgress; ap != nil {
		opt.Progress = func(e gate.Event) { ap(name, e) }
	}
	wk.RunResult, err = w.InTree(tree.Dir).RunScope(actx, p.started, p.res.RunID, opt, a)
	// A takeover, seen by the renewal or by a write refused: this agent
	// stops; the run goes on.
	fenced := context.Cause(actx)
	if !errors.Is(fenced, claim.ErrFenced) {
		fenced = err
	}
	if errors.Is(fenced, claim.ErrFenced) && ctx.Err() == nil && a.merged == "" {
		wk.RunResult.Outcome, wk.RunResult.Reason = loop.RunInterrupted, fenced.Error()
		wk.TakenOver, err = true, nil
	}
	err = p.cutShort(ctx, context.Cause(actx), wk, a.merged != "", err)
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

// watch reads the integration branch, where it is this repository's (see
// localBranch): nil on a remote.
func (p *pool) watch() func(context.Context) error {
	l, ok := p.land.(*localBranch)
	if !ok {
		return nil
	}
	return func(ctx context.Context) error {
		_, err := l.Head(ctx)
		return err
	}
}

// cutShort says, in wk, why the agent's work on its issue was cut short,
// when the run goes on (ctx) and the work was not merged, and cause (its
// context's) says so: its worktree no longer the one made,
// which stops the issue's work, said, and the run goes on; or the
// integration branch moved where no one should have put it, which stops
// the run. It returns the work's error, err unless the run is to stop.
func (p *pool) cutShort(ctx context.Context, cause error, wk *loop.Worked, merged bool, err error) error {
	if ctx.Err() != nil || merged {
		return err
	}
	if nt := (*worktree.NotTreeError)(nil); errors.As(cause, &nt) && wk.RunResult != nil {
		wk.RunResult.Outcome, wk.RunResult.Reason = loop.RunInterrupted, lostReason(nt)
		p.w.Warn(errors.New(wk.RunResult.Reason))
		p.mu.Lock()
		p.lost[wk.Issue] = true
		p.mu.Unlock()
		return nil
	}
	if moved := (*worktree.ForeignMoveError)(nil); errors.As(cause, &moved) && err == nil {
		return moved
	}
	return err
}

// lostReason says why the work on an issue whose worktree is no longer
// the one made stopped, and what comes of it.
func lostReason(nt *worktree.NotTreeError) string {
	if nt.Gone {
		return nt.Error() + " while its agent worked: a failure of the machine, not of the issue, which is left for the next run"
	}
	return nt.Error() + ": a failure of the issue, recorded; its work stops for this run"
}

// startOf returns the commit an agent's work starts from, the branch's
// head, and starts taking its baseline, what the work is judged against,
// beside the agent's work (see baselines).
func (p *pool) startOf(ctx context.Context) (string, error) {
	base, err := p.land.Head(ctx)
	if err != nil {
		return "", err
	}
	p.bases.start(base)
	return base, nil
}

// takeUp makes the worktree of issue id on base (see addTree), and
// returns with it the work of another issue, not merged, that its branch
// was left on by a killed run's train (see leftUpstream): the upstream of
// the issue's worker, as that run's was.
func (p *pool) takeUp(ctx context.Context, id, base string) (*worktree.Tree, string, error) {
	tree, err := p.addTree(ctx, id, base)
	if err != nil {
		return nil, "", err
	}
	upstream, err := leftUpstream(ctx, p.repo, base, tree)
	return tree, upstream, err
}

// addTree makes the worktree of issue id on base. On a remote, the work
// another machine's holder kept there (its last agent's, see keep) is put
// on top, not committed, when this machine has no branch of the issue of
// its own: a holder killed, or gone, leaves its work to the next.
func (p *pool) addTree(ctx context.Context, id, base string) (*worktree.Tree, error) {
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
		p.w.Warn(fmt.Errorf("taking up the work of %s kept on %s: %w", id, r.Name(), err))
	}
	return tree, nil
}

// release ends the claim c: here, or on the remote once what the agent's
// work did to the queue is shared.
func (p *pool) release(ctx context.Context, w loop.Workspace, c loop.Claimed) error {
	if err := share(w, ctx, p.opt.Remote); err != nil {
		return err
	}
	_, err := p.claims.Fenced(c.ID, c.Epoch).Release(ctx, p.opt.Now(), c.ID, c.Epoch)
	return err
}

// end decides the run's outcome and writes its run_end row.
func (p *pool) end(ctx context.Context) error {
	res := p.res
	q, err := queue.Load(p.w.Path(loop.QueueFile))
	var waiting []string
	if err == nil && len(res.Worked) == 0 {
		for _, ref := range loop.WaitingForPerson(q, p.cfg.Retry.MaxRetries) {
			if len(p.opt.Only) == 0 || slices.Contains(p.opt.Only, ref.ID) {
				waiting = append(waiting, ref.ID)
			}
		}
	}
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
		res.Outcome, res.Reason = loop.RunError, errors.Join(p.errs...).Error()
	case p.stop != nil:
		res.Outcome, res.Reason = p.stop.Outcome, p.stop.Reason
	case ctx.Err() != nil:
		res.Outcome, res.Reason = loop.RunInterrupted, fmt.Sprintf("interrupted (%v)", context.Cause(ctx))
	case len(res.Worked) == 0 && len(waiting) > 0:
		res.Stuck = waiting
		res.Outcome, res.Reason = loop.RunHalted, "no open issue is ready to claim, and these wait for a person: "+strings.Join(waiting, ", ")
	case len(res.Worked) == 0:
		res.Outcome, res.Reason = loop.RunNothing, "nothing to do: no open issue is ready to claim"
	case len(res.Stuck) > 0:
		res.Outcome, res.Reason = loop.RunHalted, "the failing issues wait for a person: "+strings.Join(res.Stuck, ", ")
	case len(res.Merged) == len(res.Worked):
		res.Outcome, res.Reason = loop.RunPassed, fmt.Sprintf("every issue worked was merged into %s: %s", p.land.Rev(), strings.Join(res.Merged, ", "))
	default:
		res.Outcome, res.Reason = loop.RunGatesFailed, fmt.Sprintf("%d of %d issues merged into %s", len(res.Merged), len(res.Worked), p.land.Rev())
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	herr := p.w.AppendHistory(hctx, analytics.Event{Time: p.opt.Now(), RunID: res.RunID, Event: analytics.EventRunEnd,
		Outcome: res.Outcome, DurationMS: res.ElapsedMS,
		Detail: fmt.Sprintf("%s; agents=%d merged=%d agent_ms=%d", res.Reason, p.opt.Agents, len(res.Merged), res.AgentTimeMS)})
	if len(p.errs) > 0 {
		return errors.Join(append(p.errs, herr)...)
	}
	return herr
}

// agentTime is the time an agent's loops took: its agent runs and gates.
func agentTime(wk *loop.Worked) int64 {
	if wk.RunResult == nil {
		return 0
	}
	var ms int64
	for _, a := range wk.Agents {
		ms += a.Duration.Milliseconds()
	}
	return ms
}
