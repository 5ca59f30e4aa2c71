package loop

import (
	"context"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// Claimed is an issue and its claim.
type Claimed struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
	claim.Lease
	// Remote and Ref name the claim's ref, for a claim on a git remote.
	Remote string `json:"remote,omitempty"`
	Ref    string `json:"ref,omitempty"`
}

// claimable says whether an issue is work an agent may claim: open
// (pending or in_progress), not waiting for a person (halted, stuck,
// retries spent), not an approval request or a human gate's.
func claimable(humanGates map[string]bool) func(*queue.Issue) bool {
	return func(is *queue.Issue) bool {
		st := is.Status()
		if st != queue.StatusPending && st != queue.StatusInProgress || is.Bool(queue.FieldHalted, false) || isApproval(is) {
			return false
		}
		if g, _ := is.Get(FieldGate); humanGates[g] {
			return false
		}
		ref := IssueRef{RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, queue.DefaultMaxRetries)}
		return needsPerson(is, ref) == ""
	}
}

// Claims are the claims of agents on the issues of a workspace's queue:
// kept in the queue (see claim), or on a git remote and mirrored into the
// queue (see remote.go). Each step runs under the workspace's lock, and
// notes in the history a claim that changed hands.
type Claims interface {
	// Next finds the next ready issue and claims it for holder; nil when
	// none is ready. skip, if not nil, leaves out the issues it is true
	// for.
	Next(ctx context.Context, now time.Time, holder string, ttl time.Duration, skip func(*queue.Issue) bool) (*Claimed, error)
	// Claim claims issue id for holder (force: whoever holds it now).
	Claim(ctx context.Context, now time.Time, id, holder string, ttl time.Duration, force bool) (Claimed, error)
	// Renew extends holder's claim of id at epoch.
	Renew(ctx context.Context, now time.Time, id, holder string, epoch int, ttl time.Duration) (Claimed, error)
	// Release ends the claim of id held at epoch; epoch 0 ends any (a
	// person's release). The Claimed returned is the claim that ended.
	Release(ctx context.Context, now time.Time, id string, epoch int) (Claimed, error)
	// Fenced returns the claims as the holder of issue id's claim at
	// epoch changes them (see Workspace.Fenced).
	Fenced(id string, epoch int) Claims
}

// Claims returns the workspace's claims: on the git remote r, or in the
// queue alone when r is nil.
func (w Workspace) Claims(r *remote.Remote) Claims {
	if r == nil {
		return localClaims{w}
	}
	return remoteClaims{w: w, released: w, r: r}
}

// localClaims are the claims kept in the queue, for agents on one
// machine.
type localClaims struct{ w Workspace }

// Next finds the next ready issue and claims it for holder, in one step
// under the lock (see claim.Next).
func (c localClaims) Next(ctx context.Context, now time.Time, holder string, ttl time.Duration, skip func(*queue.Issue) bool) (*Claimed, error) {
	w := c.w
	claimable, err := w.openToClaim()
	if err != nil {
		return nil, err
	}
	var got *Claimed
	next := func(q *queue.Queue) (*queue.Issue, error) {
		got = nil
		open := without(claimable, skip)
		is, l, err := claim.Next(q, holder, now, ttl, open)
		if is != nil && err == nil {
			got = &Claimed{ID: is.ID, Summary: summaryOf(is), Lease: l}
		}
		return is, err
	}
	// Most of a big queue is done with: the first look reads only the
	// claimed issues and the first open ones (claim.Choose); only when none
	// of those is ready is the whole queue read.
	choose, more := claim.Choose(chooseOpen)
	err = w.claimStep(ctx, now, choose, next)
	if err == nil && got == nil && *more {
		err = w.claimStep(ctx, now, nil, next)
	}
	return got, err
}

// without is open, less the issues skip leaves out (when not nil).
func without(open, skip func(*queue.Issue) bool) func(*queue.Issue) bool {
	if skip == nil {
		return open
	}
	return func(is *queue.Issue) bool { return open(is) && !skip(is) }
}

// chooseOpen is how many open issues the first look of Next reads.
const chooseOpen = 16

// Claim claims issue id for holder (force: whoever holds it now).
func (c localClaims) Claim(ctx context.Context, now time.Time, id, holder string, ttl time.Duration, force bool) (Claimed, error) {
	return c.w.claimOne(ctx, now, id, func(is *queue.Issue) (claim.Lease, error) {
		return claim.Take(is, holder, now, ttl, force)
	})
}

// Renew extends holder's claim of id at epoch.
func (c localClaims) Renew(ctx context.Context, now time.Time, id, holder string, epoch int, ttl time.Duration) (Claimed, error) {
	return c.w.claimOne(ctx, now, id, func(is *queue.Issue) (claim.Lease, error) {
		return claim.Renew(is, holder, epoch, now, ttl)
	})
}

// Release ends the claim of id held at epoch; epoch 0 ends any (a
// person's release). The Claimed returned is the claim that ended.
func (c localClaims) Release(ctx context.Context, now time.Time, id string, epoch int) (Claimed, error) {
	return c.w.claimOne(ctx, now, id, func(is *queue.Issue) (claim.Lease, error) {
		return claim.Release(is, epoch)
	})
}

// Fenced returns the claims as the holder of issue id's claim at epoch
// changes them: each step refused once the claim was taken over.
func (c localClaims) Fenced(id string, epoch int) Claims {
	return localClaims{c.w.Fenced(id, epoch)}
}

func (w Workspace) claimOne(ctx context.Context, now time.Time, id string, fn func(*queue.Issue) (claim.Lease, error)) (Claimed, error) {
	var c Claimed
	err := w.claimStep(ctx, now, nil, func(q *queue.Queue) (*queue.Issue, error) {
		is := q.Issue(id)
		if is == nil {
			return nil, &NoIssueError{Path: w.Path(QueueFile), ID: id}
		}
		l, err := fn(is)
		c = Claimed{ID: is.ID, Summary: summaryOf(is), Lease: l}
		return is, err
	})
	return c, err
}

// claimStep runs a claim's change on the queue under the lock, and notes
// in the history a claim that changed hands: taken (a new epoch) or
// released. Renewals leave no row.
//
// choose, when not nil, picks the pieces of the queue to read (see
// queue.UpdateChosen); nil reads the whole queue.
func (w Workspace) claimStep(ctx context.Context, now time.Time, choose queue.Chooser, fn func(*queue.Queue) (*queue.Issue, error)) error {
	unlock, err := w.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	given, err := w.givenEpochs()
	if err != nil {
		return err
	}
	var before, after claim.Lease
	var id string
	update := w.updateQueue
	if choose != nil {
		update = func(fn func(*queue.Queue) error) error { return queue.UpdateChosen(w.Path(QueueFile), choose, fn) }
	}
	err = update(func(q *queue.Queue) error {
		if len(q.Problems) > 0 {
			return &queue.ValidationError{Path: w.Path(QueueFile), Problems: q.Problems}
		}
		id = ""
		raiseEpochs(q, given)
		snap := map[string]claim.Lease{}
		for _, is := range q.Issues {
			snap[is.ID] = claim.Of(is)
		}
		is, err := fn(q)
		if is != nil && err == nil {
			id, before, after = is.ID, snap[is.ID], claim.Of(is)
			// Noted before the queue is written: an epoch noted and then
			// not written is skipped, never given twice.
			err = w.noteEpoch(given, id, after)
		}
		return err
	})
	if err != nil || id == "" {
		return err
	}
	ev := analytics.Event{Time: now, RunID: w.runID(), IssueID: id, Attempt: after.Epoch}
	switch {
	case after.Epoch != before.Epoch:
		ev.Event, ev.Detail = analytics.EventClaim, "holder="+after.Holder
		if before.Holder != "" {
			ev.Detail += " from=" + before.Holder
		}
	case after.Holder == "" && before.Holder != "":
		ev.Event, ev.Detail = analytics.EventRelease, "holder="+before.Holder
	default:
		return nil
	}
	return w.appendHistory(ev)
}

// Fenced returns the workspace seen by the holder of issue id's claim at
// epoch: every change it makes to the queue is refused once the claim was
// taken over (a greater epoch), with claim.ErrFenced.
func (w Workspace) Fenced(id string, epoch int) Workspace {
	w.fence = &fence{id: id, epoch: epoch}
	return w
}

// fence is the claim a workspace's writes carry (see Fenced).
type fence struct {
	id    string
	epoch int
}

// check refuses a change to q by a holder whose claim was taken over,
// given the epochs given to claims (see EpochsFile).
func (f *fence) check(q *queue.Queue, gs map[string]given) error {
	if f == nil {
		return nil
	}
	if is := q.Issue(f.id); is != nil {
		raiseEpochs(&queue.Queue{Issues: []*queue.Issue{is}}, gs)
		return claim.Fence(is, f.epoch)
	}
	return nil
}

// checkFenced is w.fence.check, with the epochs given read; the caller
// holds the lock.
func (w Workspace) checkFenced(q *queue.Queue) error {
	if w.fence == nil {
		return nil
	}
	given, err := w.givenEpochs()
	if err != nil {
		return err
	}
	return w.fence.check(q, given)
}

// checkFence refuses, without changing anything, a holder whose claim was
// taken over: the merge train asks just before it merges a car.
func (w Workspace) checkFence(ctx context.Context) error {
	if w.fence == nil {
		return nil
	}
	return w.withLock(ctx, func() error {
		q, err := queue.LoadSome(w.Path(QueueFile), w.fence.id)
		if err != nil {
			return err
		}
		if q.Issue(w.fence.id) == nil {
			return &NoIssueError{Path: w.Path(QueueFile), ID: w.fence.id}
		}
		return w.checkFenced(q)
	})
}
