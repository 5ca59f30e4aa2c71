package pool

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// train is the merge queue of run --agents, run as a merge train: one
// integrator, the train, merges the issues whose gates pass into the
// integration branch in the order they come. A car (an issue's work,
// whose gates passed in its worktree or never ran on it) joins at the
// end: it is rebased onto the car before it (the first onto the branch),
// and its gates run at once, on all the work before it and its own. The
// last car's check covers the cars ahead whose checks are not in: theirs
// are stopped when a car boards behind them (see schedule), and when the
// last one's passes, judged by each of their issues, they are all merged
// at once, one fast-forward (see batch): on a machine whose processors
// the checks share, N cars that all pass cost one check, not N. When it
// fails, the cars ahead are each checked on their own, to learn whose
// work fails; a car whose issue learns its tests from its check is never
// covered (alone). The branch is fast-forwarded in the cars' order. A car
// whose gates fail leaves with its failure recorded against its issue;
// the cars after it were checked with work that will not be merged, so
// they are put onto the car before it and checked again, with no failure
// of their own. The branch moving under the train (a person's commit)
// rebuilds it the same way.
//
// A car that conflicts with the work of cars ahead, not yet merged, waits
// for them to land or leave and boards again: sent back at once, its
// agent would rebase onto a branch without that work, and conflict again
// (a second attempt spent on nothing). Only a conflict with the branch
// itself goes back to the agent.
type train struct {
	repo *worktree.Repo
	land landing // the integration branch
	// bases, when set, are the results of the commits the cars go onto:
	// each car is judged by its issue against its own base's (see
	// judge); nil judges a car by its gates alone.
	bases *baselines

	mu   sync.Mutex
	base string // the branch's head under the first car; "" until a car comes
	cars []*car // in order, none merged yet
	// left is closed, and made anew, each time cars leave the train
	// (merged, failed, gone); nil until a car waits for it.
	left chan struct{}
	// warn tells the person what the train waits for (races for the
	// branch lost to commits not its own); nil: no one.
	warn func(error)
	// beforeAdvance, when set (by tests), runs before a car's
	// fast-forward, told whether the car was carried onto commits without
	// its gates running again (see lostRace): a commit there makes the
	// train lose the race.
	beforeAdvance func(carried bool)
}

// car is one issue's passing work on the train.
type car struct {
	tree *worktree.Tree
	// upstream, once the car was put onto another car's work, is that
	// work's head: its own commits are those after it.
	upstream string
	// check runs the gates again in its worktree, recording
	// nothing; record records their failure against its issue; fence,
	// just before the merge, refuses a claim that was taken over.
	check  func(context.Context) (*loop.GateRun, error)
	record func(context.Context, *loop.GateRun) error
	fence  func(context.Context) error
	// judge, when set, judges a check by the car's issue against the
	// results of the commit under it; last is the loop's last evaluation,
	// the results of a car that boarded where it was.
	judge func(*loop.GateRun, []results.Report) error
	last  *loop.GateRun
	// fresh: its gates never ran on its work (see loop.ChecksOnLanding),
	// so it is checked even where it boards unmoved.
	fresh bool
	// alone: fresh, and its issue learns its tests from what its work
	// turns green (see loop.Workspace.Learns): it is checked and judged on
	// its own, never covered by the car behind it.
	alone bool
	done  chan carResult

	head    string        // where its branch is on the train
	gen     int           // bumped when it is put onto other work: older checks do not count
	stop    func()        // ends the check under way, if any
	running chan struct{} // closed when the check under way ends
	checked bool          // its check for gen is in
	gr      *loop.GateRun // and its result: nil when it had no need to run
	err     error
	// own: checked on its own, not covered by the check of a car behind
	// it, since that check failed or could not merge it (see batch); until
	// it is put onto other work.
	own     bool
	lost    int  // the races for the branch it lost (see lostRace)
	carried bool // put onto commits that change none of its files, its check kept
}

// carResult is how a car's merge ended.
type carResult struct {
	merged   string                  // the commit the branch is at with it; "" when not merged
	conflict *worktree.ConflictError // the rebase conflicted
	ahead    []*car                  // the cars it was put behind when it did
	failed   *loop.GateRun           // the gates failed after the rebase, recorded
	// gr, when merged, is the check it was merged on, judged by its issue;
	// nil when none ran on the train.
	gr *loop.GateRun
	// verdict is how the merged car's work was judged by its issue; nil
	// when it was not (its gates' runners not known, no issue).
	verdict *results.Verdict
	err     error
}

// verdict is how c's work was last judged by its issue: on the train, or
// where it was checked before it boarded; nil when it was not.
func (c *car) verdict() *results.Verdict {
	for _, gr := range []*loop.GateRun{c.gr, c.last} {
		if gr != nil && gr.Verdict != nil {
			return gr.Verdict
		}
	}
	return nil
}

// merge puts c on the train and waits for its merge. A conflict with the
// work of cars ahead waits for them to land or leave, and boards again.
func (t *train) merge(ctx context.Context, c *car) carResult {
	for {
		r := t.ride(ctx, c)
		if r.conflict == nil || len(r.ahead) == 0 {
			return r
		}
		if err := t.waitGone(ctx, r.ahead); err != nil {
			return carResult{err: err}
		}
	}
}

// waitGone waits until none of cars is on the train.
func (t *train) waitGone(ctx context.Context, cars []*car) error {
	for {
		t.mu.Lock()
		on := slices.ContainsFunc(t.cars, func(x *car) bool { return slices.Contains(cars, x) })
		if t.left == nil {
			t.left = make(chan struct{})
		}
		left := t.left
		t.mu.Unlock()
		if !on {
			return nil
		}
		select {
		case <-left:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// gone notes that cars left the train; t.mu is held.
func (t *train) gone() {
	if t.left != nil {
		close(t.left)
		t.left = nil
	}
}

// ride is one boarding of c, and its wait for the merge.
func (t *train) ride(ctx context.Context, c *car) carResult {
	c.done = make(chan carResult, 1)
	bg := context.WithoutCancel(ctx) // the train outlives a car that stops waiting
	t.mu.Lock()
	if len(t.cars) == 0 {
		head, err := t.land.Head(bg)
		if err != nil {
			t.mu.Unlock()
			return carResult{err: err}
		}
		t.base = head
	}
	c.own = false
	if err := t.board(bg, c, t.tip()); err != nil {
		ahead := slices.Clone(t.cars)
		t.mu.Unlock()
		return carResult{conflict: asConflict(err, t.land.Rev()), ahead: ahead, err: notConflict(err)}
	}
	t.cars = append(t.cars, c)
	t.schedule(bg)
	t.mu.Unlock()
	select {
	case r := <-c.done:
		return r
	case <-ctx.Done():
		return t.leave(bg, c, ctx.Err())
	}
}

// leave takes c off the train when its agent stops waiting (interrupted,
// its claim taken over): its check ends, and the cars behind it are put
// back without its work. A car already merged or failed says so.
func (t *train) leave(ctx context.Context, c *car, err error) carResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case r := <-c.done:
		return r
	default:
	}
	if i := slices.Index(t.cars, c); i >= 0 {
		if c.running != nil {
			t.stopCheck(c)
		}
		t.cars = slices.Delete(t.cars, i, i+1)
		t.gone()
		t.rebuild(ctx, i)
	}
	return carResult{err: err}
}

// tip is what the next car goes onto: the last car's work, or the branch.
func (t *train) tip() string {
	if n := len(t.cars); n > 0 {
		return t.cars[n-1].head
	}
	return t.base
}

// board puts c onto onto, its check to be run when the rebase moved it
// (see schedule); t.mu is held.
func (t *train) board(ctx context.Context, c *car, onto string) error {
	// Put back onto the same work (a car ahead that left had no commits),
	// it is not rebased: its tree does not change, and its check goes on.
	// Even a rebase that changes nothing checks out another head for a
	// moment, under a check that reads it.
	same := c.upstream != "" && onto == c.upstream
	stopped := c.running != nil && !same
	if stopped {
		// A check of where it was: ended, and waited for, before its tree
		// changes under it.
		t.stopCheck(c)
	}
	before, err := t.repo.Head(ctx, c.tree.Branch)
	if err != nil {
		return err
	}
	if !same {
		if err := c.tree.RebaseOnto(ctx, onto, c.upstream); err != nil {
			return err
		}
	}
	if c.head, err = t.repo.Head(ctx, c.tree.Branch); err != nil {
		return err
	}
	c.upstream = onto
	if c.head == before {
		if c.gen == 0 {
			// Boarding where it was: its gates passed on this very tree,
			// unless they never ran on it.
			c.gen, c.checked = 1, !c.fresh
		}
		// Otherwise it was put back where it was: its check stands, or,
		// covered, it still waits for one; one cut short runs again (see
		// schedule), what it ran to not counting.
		if stopped {
			c.gen++
		}
		go t.advance(ctx)
		return nil
	}
	c.gen++
	c.checked, c.gr, c.err, c.carried, c.own = false, nil, nil, false, false
	return nil
}

// schedule starts the checks the cars need and stops those no longer
// needed, after cars boarded or left; t.mu is held. The last car is
// checked, on all the work before it and its own, and so is a car to be
// checked on its own; the check of any other car not checked yet is
// stopped, or never started: the last car's covers it (see batch).
func (t *train) schedule(ctx context.Context) {
	for i, c := range t.cars {
		if c.checked {
			continue
		}
		mine := c.own || c.alone || i == len(t.cars)-1
		switch {
		case mine && c.running == nil:
			t.start(ctx, c)
		case !mine && c.running != nil:
			t.stopCheck(c)
			c.gen++ // what it ran to does not count
		}
	}
}

// start runs c's check; t.mu is held.
func (t *train) start(ctx context.Context, c *car) {
	gen := c.gen
	cctx, stop := context.WithCancel(ctx)
	running := make(chan struct{})
	c.stop, c.running = stop, running
	go func() {
		gr, err := c.check(cctx)
		stop()
		close(running) // before the lock, which board may hold waiting for it
		t.mu.Lock()
		if c.gen == gen {
			c.checked, c.gr, c.err = true, gr, err
			c.running = nil
		}
		t.mu.Unlock()
		t.advance(ctx)
	}()
}

// stopCheck ends c's check under way, and waits for it; t.mu is held.
func (t *train) stopCheck(c *car) {
	c.stop()
	<-c.running
	c.running = nil
}

// advance merges the cars at the front whose checks are in, in order.
func (t *train) advance(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.cars) > 0 {
		c := t.cars[0]
		if !c.checked {
			if t.batch(ctx) {
				continue
			}
			return
		}
		if c.err == nil && c.fence != nil {
			c.err = c.fence(ctx)
		}
		if c.err == nil && !c.carried {
			// A car carried onto commits that change none of its files
			// was judged before, on the base it was checked on.
			c.err = t.judge(ctx, c, c.gr)
		}
		if c.err == nil && (c.gr == nil || c.gr.Passed()) {
			if t.beforeAdvance != nil {
				t.beforeAdvance(c.carried)
			}
			err := t.land.Advance(ctx, t.base, c.head)
			if errors.Is(err, worktree.ErrMoved) {
				head, herr := t.land.Head(ctx)
				if herr == nil && head != t.base {
					// Someone else moved the branch: the whole train goes
					// onto where it is now, or c lands without it (see
					// lostRace).
					if t.lostRace(ctx, c, head) {
						continue
					}
					return
				}
				if herr != nil {
					err = herr
				}
			}
			if err != nil {
				c.err = err
			} else {
				t.merged(c)
				t.base, t.cars = c.head, t.cars[1:]
				t.gone()
				c.done <- carResult{merged: c.head, verdict: c.verdict(), gr: c.gr}
				continue
			}
		}
		t.cars = t.cars[1:]
		t.gone()
		if c.err != nil {
			c.done <- carResult{err: c.err}
		} else if err := c.record(ctx, c.gr); err != nil {
			c.done <- carResult{err: err}
		} else {
			c.done <- carResult{failed: c.gr}
		}
		t.rebuild(ctx, 0)
		return
	}
}

// judge judges gr, a check of c's work, by c's issue against the results
// of the branch under the train, t.base: the car merged before it, the
// run's baseline, or one taken now; t.mu is held.
func (t *train) judge(ctx context.Context, c *car, gr *loop.GateRun) error {
	if gr == nil || c.judge == nil || t.bases == nil {
		return nil
	}
	base, err := t.bases.of(ctx, t.base)
	if err != nil {
		return err
	}
	return c.judge(gr, base.Reports)
}

// batch merges the cars at the front whose checks were covered (see
// schedule) with the first car behind them whose check is in, at once:
// that check ran on all their work, and each of their issues judges it
// (each car its own copy of it). It reports whether it merged them; t.mu
// is held. When that check fails, or a car's issue or fence refuses it, or
// the fast-forward fails, the cars ahead are each checked on their own,
// and merged or failed one by one. The branch moved under the train is a
// race lost, as for one car (see lostRace).
func (t *train) batch(ctx context.Context) bool {
	k := slices.IndexFunc(t.cars, func(c *car) bool { return c.checked })
	if k < 1 || slices.ContainsFunc(t.cars[:k], func(c *car) bool { return c.own || c.alone || c.running != nil }) {
		return false
	}
	tip, cars := t.cars[k], t.cars[:k+1]
	judged, ok := t.judgeAll(ctx, cars, tip)
	if ok {
		if t.beforeAdvance != nil {
			t.beforeAdvance(false)
		}
		err := t.land.Advance(ctx, t.base, tip.head)
		if errors.Is(err, worktree.ErrMoved) && cars[0].lost+1 < maxLostRaces {
			if head, herr := t.land.Head(ctx); herr == nil && head != t.base {
				t.lostRace(ctx, cars[0], head) // the train goes onto head
				return false
			}
		}
		ok = err == nil
	}
	if !ok {
		for _, c := range cars[:k] {
			c.own = true
		}
		t.schedule(ctx)
		return false
	}
	t.merged(tip)
	t.base, t.cars = tip.head, t.cars[k+1:]
	t.gone()
	for i, c := range cars {
		// What its own work fixed is told by its own check, where it was
		// before it boarded: judged here, the fixes of the cars ahead
		// would count as its own too. A car never checked before tells
		// them once, on the last car, whose check found them.
		v := c.verdict()
		if v == nil && judged[i].Verdict != nil {
			jv := *judged[i].Verdict
			if c != tip {
				jv.Fixed = nil
			}
			v = &jv
		}
		c.done <- carResult{merged: c.head, verdict: v, gr: judged[i]}
	}
	return true
}

// judgeAll judges tip's check, which ran on the work of every car of
// cars, by each one's issue; it reports whether each let it pass, and
// their fences too.
func (t *train) judgeAll(ctx context.Context, cars []*car, tip *car) ([]*loop.GateRun, bool) {
	if tip.err != nil || tip.gr == nil {
		return nil, false
	}
	judged := make([]*loop.GateRun, len(cars))
	for i, c := range cars {
		if c.fence != nil && c.fence(ctx) != nil {
			return nil, false
		}
		gr := *tip.gr
		if err := t.judge(ctx, c, &gr); err != nil || !gr.Passed() {
			return nil, false
		}
		judged[i] = &gr
	}
	return judged, true
}

// merged notes the results of c, merged, as those of its commit: the base
// of the car after it.
func (t *train) merged(c *car) {
	gr := c.gr
	if gr == nil {
		gr = c.last
	}
	if t.bases != nil && gr != nil && gr.Reports != nil {
		t.bases.note(c.head, gr.Reports)
	}
}

// rebuild puts the cars from i on again, each onto the one before it (the
// first onto the branch), after a car left or the branch moved; t.mu is
// held. A car that now conflicts leaves.
func (t *train) rebuild(ctx context.Context, i int) {
	cars := t.cars[i:]
	t.cars = t.cars[:i]
	for _, c := range cars {
		if err := t.board(ctx, c, t.tip()); err != nil {
			c.done <- carResult{conflict: asConflict(err, t.land.Rev()), ahead: slices.Clone(t.cars), err: notConflict(err)}
			t.gone()
			continue
		}
		t.cars = append(t.cars, c)
	}
	t.schedule(ctx)
}

// asConflict returns err's conflict, said against the branch (and the
// work of the cars before it), or nil.
func asConflict(err error, branch string) *worktree.ConflictError {
	var conflict *worktree.ConflictError
	if errors.As(err, &conflict) {
		conflict.Onto = branch
		return conflict
	}
	return nil
}

// notConflict returns err unless it is a conflict.
func notConflict(err error) error {
	var conflict *worktree.ConflictError
	if errors.As(err, &conflict) {
		return nil
	}
	return err
}
