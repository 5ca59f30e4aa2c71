package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// The claims on a git remote (see package remote), for agents on several
// machines: the remote's ref is the claim, and the queue's fields mirror
// it, so that status shows it and the writes of a holder taken over are
// refused here too. Each step runs under the workspace's lock, as the
// local claims do: the agents of one machine take turns, and the remote
// settles the races between machines. A step the remote refuses, or that
// cannot reach it, changes nothing in the queue.
//
// A ref that holds no record orchestrate wrote (remote.BadRecordError) is
// neither free nor held: claim --next skips its issue and says so
// (Notify), a step on that one issue fails. A record whose times show
// clocks further apart than remote.Margin (remote.SkewError) is skipped
// so by claim --next, and refuses a claim of its issue; one that shows
// this machine's clock ahead stops the claims, which judge leases by it.
// A renewal or a release goes on, and says so.

// remoteClaims are the claims on the git remote r, mirrored into w's
// queue.
type remoteClaims struct {
	w Workspace
	// released is the workspace a release is made in: w, but for a
	// holder's claims (Fenced), w without the holder's fence.
	released Workspace
	r        *remote.Remote
}

// Next finds the next ready issue and claims it for holder on the remote:
// the claims are fetched (one round trip) and mirrored into the queue; the
// first issue ready (see localClaims.Next), or the one holder holds, is
// claimed with a compare-and-swap push (one round trip); a push lost to
// another machine tries the next issue, and when every one was lost the
// claims are fetched again. nil when none is ready; skip, if set, leaves
// issues out. An open issue whose ref holds no record orchestrate wrote,
// or one written ahead of this machine's clock, is skipped, and Notify
// told so; a record that shows this machine's clock ahead refuses the
// claim (a remote.SkewError).
//
// An issue whose holder let it go on the remote since this machine's last
// sync of the queue is not claimed on the queue as that sync left it: its
// holder shared what it did (a halt, a resolution, the launches it spent)
// before it let go, and the queue here does not know it yet. When no other
// issue is ready, the queue is synced again, which brings what the holder
// shared, and the claim tried once more (see errReleasedSince). That sync
// brings what was shared before the claims were last fetched, not after:
// an issue let go after that fetch (its record another than the one the
// fetch brought) is left out of the next try as well, and another sync
// made for it, up to nextRounds tries in all; then the claim gives up,
// saying so, as it does when every push is lost.
func (c remoteClaims) Next(ctx context.Context, now time.Time, holder string, ttl time.Duration, skip func(*queue.Issue) bool) (*Claimed, error) {
	var synced map[string]string // none yet: every issue let go since the last sync is left out
	for try := range nextRounds {
		got, fetched, err := c.next(ctx, now, holder, ttl, skip, synced)
		if !errors.Is(err, errReleasedSince) {
			return got, err
		}
		if try == nextRounds-1 {
			break // no sync that no try follows
		}
		if err := c.w.SyncQueue(ctx, c.r); err != nil {
			return nil, err
		}
		synced = fetched
	}
	return nil, fmt.Errorf("claiming the next issue on %s: an issue let go on the remote after each sync of the queue, %d times over: try again", c.r.Name(), nextRounds)
}

// errReleasedSince says that no issue was claimed, and that one was let go
// on the remote since the queue's last sync: synced again, it may be ready.
var errReleasedSince = errors.New("an issue was let go on the remote since the last sync")

// next is one try of Next on the queue as it is here. synced holds the
// records (their commits, by issue) fetched before the queue's last sync,
// nil when Next made none: an issue let go since that sync is left out
// (see releasedSince) unless its record is the one synced holds, whose
// holder shared what it did before that sync. It returns with the claim
// the records it fetched last.
func (c remoteClaims) next(ctx context.Context, now time.Time, holder string, ttl time.Duration, skip func(*queue.Issue) bool, synced map[string]string) (*Claimed, map[string]string, error) {
	w, r := c.w, c.r
	open, err := w.openToClaim()
	if err != nil {
		return nil, nil, err
	}
	open = without(open, skip)
	var got *Claimed
	var fetched map[string]string
	err = w.claimStep(ctx, now, nil, func(q *queue.Queue) (*queue.Issue, error) {
		got = nil
		told := map[string]bool{}
		for round := range nextRounds {
			if round > 0 {
				if err := pauseAfterLost(ctx, round-1); err != nil {
					return nil, err
				}
			}
			recs, err := r.Fetch(ctx)
			if err != nil {
				return nil, err
			}
			if skew := skipSkewed(recs); skew != nil {
				return nil, skew
			}
			w.noteBad(q, recs, open, told)
			let := releasedSince(q, recs, synced)
			endLapsed(ctx, r, q, recs, now)
			fetched = map[string]string{} // with the claims endLapsed ended
			for id, rec := range recs {
				fetched[id] = rec.Sha
			}
			mirror(q, recs, let)
			is, l, err := claimFirst(ctx, r, q, recs, now, holder, ttl, func(is *queue.Issue) bool { return open(is) && !let[is.ID] })
			if is != nil {
				got = &Claimed{ID: is.ID, Summary: summaryOf(is), Lease: l, Remote: r.Name(), Ref: remote.Ref(is.ID)}
				return is, nil
			}
			if err == nil && len(let) > 0 {
				return nil, errReleasedSince
			}
			if !errors.Is(err, remote.ErrLost) {
				return nil, err
			}
		}
		return nil, fmt.Errorf("claiming the next issue on %s: every push lost to another machine's, %d times over: try again", r.Name(), nextRounds)
	})
	return got, fetched, err
}

// releasedSince returns the issues whose ref on the remote shows them let
// go since this machine's last sync of the queue: at an epoch the queue
// here has not seen (claimed and let go since), or at the epoch the queue
// here shows held. An issue whose record is the one synced holds for it
// (fetched before that sync, which brought what its holder shared) is
// not one.
func releasedSince(q *queue.Queue, recs map[string]remote.Record, synced map[string]string) map[string]bool {
	since := map[string]bool{}
	for _, is := range q.Issues {
		rec, ok := recs[is.ID]
		if !ok || rec.Err != nil || rec.Holder != "" {
			continue
		}
		if sha, ok := synced[is.ID]; ok && sha == rec.Sha {
			continue
		}
		if cur := claim.Of(is); rec.Epoch > cur.Epoch || rec.Epoch == cur.Epoch && cur.Holder != "" {
			since[is.ID] = true
		}
	}
	return since
}

// noteBad tells Notify, once each (told), of the open issues whose ref on
// the remote holds no record orchestrate wrote, or one written ahead of
// this machine's clock (see skipSkewed): claim --next skips them.
func (w Workspace) noteBad(q *queue.Queue, recs map[string]remote.Record, open func(*queue.Issue) bool, told map[string]bool) {
	for _, is := range q.Issues {
		rec, ok := recs[is.ID]
		if !ok || rec.Err == nil || told[is.ID] || !open(is) {
			continue
		}
		var bad *remote.BadRecordError
		var skew *remote.SkewError
		line := ""
		switch {
		case errors.As(rec.Err, &bad):
			line = bad.Skipped()
		case errors.As(rec.Err, &skew):
			line = fmt.Sprintf("%s; %s skipped", skew, remote.Ref(is.ID))
		default:
			continue
		}
		told[is.ID] = true
		if w.Notify != nil {
			w.Notify(line)
		}
	}
}

// skipSkewed makes each record of recs whose times show a clock apart
// (remote.SkewError) one that claim --next skips, as it skips a record
// orchestrate did not write: a record from the future (a clock behind
// here, or ahead there, or a record made by hand) wedges no claim. A
// record that says this machine's clock is ahead is returned instead:
// every lease is judged by that clock, and the claims stop.
func skipSkewed(recs map[string]remote.Record) *remote.SkewError {
	for id, rec := range recs {
		if rec.Skew == nil || rec.Err != nil {
			continue
		}
		if rec.Skew.Replaced && rec.Skew.Here {
			return rec.Skew
		}
		rec.Err = rec.Skew
		recs[id] = rec
	}
	return nil
}

// claimFirst claims for holder the first of q's candidates it can (see
// claim.Candidates), from the remote's records recs: nil and a LostError
// when every push was lost, nil and nil when no issue is ready.
func claimFirst(ctx context.Context, r *remote.Remote, q *queue.Queue, recs map[string]remote.Record, now time.Time, holder string, ttl time.Duration, open func(*queue.Issue) bool) (*queue.Issue, claim.Lease, error) {
	var lost error
	for _, is := range claim.Candidates(q, holder, now, open) {
		rec := recs[is.ID]
		if rec.Err != nil || remote.CheckID(is.ID) != nil {
			continue // a record orchestrate cannot read, or no ref can be named after the issue: left to a person
		}
		l, err := onRemote(rec, is).Taken(is.ID, holder, now, ttl, false)
		if err != nil {
			continue
		}
		pushed, err := r.Push(ctx, is.ID, rec.Sha, l)
		if errors.Is(err, remote.ErrLost) {
			lost = err
			continue
		}
		if err != nil {
			return nil, claim.Lease{}, err
		}
		claim.Put(is, pushed.Lease)
		return is, pushed.Lease, nil
	}
	return nil, claim.Lease{}, lost
}

// Claim claims issue id for holder on the remote (force: whoever holds it
// now), and mirrors the claim into the queue. A record whose times show
// the clocks apart refuses the claim (a remote.SkewError).
func (c remoteClaims) Claim(ctx context.Context, now time.Time, id, holder string, ttl time.Duration, force bool) (Claimed, error) {
	return c.w.changeOn(ctx, c.r, now, id, func(rec remote.Record, is *queue.Issue) (claim.Lease, error) {
		if rec.Skew != nil {
			return rec.Lease, rec.Skew
		}
		return onRemote(rec, is).Taken(id, holder, now, ttl, force)
	})
}

// Renew extends holder's claim of id at epoch on the remote. A claim
// taken over there is refused with a claim.FencedError.
func (c remoteClaims) Renew(ctx context.Context, now time.Time, id, holder string, epoch int, ttl time.Duration) (Claimed, error) {
	return c.w.changeOn(ctx, c.r, now, id, func(rec remote.Record, is *queue.Issue) (claim.Lease, error) {
		return onRemote(rec, is).Renewed(id, holder, epoch, now, ttl)
	})
}

// Release ends the claim of id held at epoch on the remote; epoch 0 ends
// any (a person's release). The Claimed returned is the claim that ended.
//
// The released record stays on the remote, with no holder and the epoch
// of the claim that ended, rather than the ref being deleted: the epoch
// is the fencing token, and a deleted ref would start the next holder at
// epoch 1 again, where an old holder's writes would pass for its.
func (c remoteClaims) Release(ctx context.Context, now time.Time, id string, epoch int) (Claimed, error) {
	var ended claim.Lease
	got, err := c.released.changeOn(ctx, c.r, now, id, func(rec remote.Record, is *queue.Issue) (claim.Lease, error) {
		ended = onRemote(rec, is)
		return ended.Released(id, epoch)
	})
	if err == nil {
		got.Lease = ended
	}
	return got, err
}

// Fenced returns the claims as the holder of issue id's claim at epoch
// changes them: a renewal is refused once the claim was taken over, in the
// queue or on the remote. A release is refused only by the remote's
// record: the issue's resolution may have ended the claim in the queue
// already, and its ref is then ended at the claim's epoch.
func (c remoteClaims) Fenced(id string, epoch int) Claims {
	return remoteClaims{w: c.w.Fenced(id, epoch), released: c.w, r: c.r}
}

// changeOn changes issue id's claim on the remote r to what change makes
// of its record (see remote.Change), and mirrors the result into the
// queue. The Claimed returned has the lease the claim is at, or the one
// that refused the change. A skew of the clocks that the record change
// was last asked about shows, and that change did not refuse for, is told
// Notify as a warning.
func (w Workspace) changeOn(ctx context.Context, r *remote.Remote, now time.Time, id string, change func(remote.Record, *queue.Issue) (claim.Lease, error)) (Claimed, error) {
	var skew *remote.SkewError
	c, err := w.claimOne(ctx, now, id, func(is *queue.Issue) (claim.Lease, error) {
		rec, err := r.Change(ctx, id, func(rec remote.Record) (claim.Lease, error) {
			skew = rec.Skew
			return change(rec, is)
		})
		var held *claim.HeldError
		if errors.As(err, &held) {
			held.Remote = r.Name()
		}
		if err == nil {
			claim.Put(is, rec.Lease)
		}
		return rec.Lease, err
	})
	c.Remote, c.Ref = r.Name(), remote.Ref(id)
	if skew != nil && !errors.Is(err, skew) && w.Notify != nil {
		w.Notify("warning: " + skew.Error())
	}
	var fenced *claim.FencedError
	if errors.As(err, &fenced) {
		// Taken over on the remote: this machine's queue may not know
		// yet. The epoch is noted, so that the old holder's writes are
		// refused here too, and its changes not shared (SyncQueue).
		if nerr := w.learnEpoch(ctx, id, fenced.Lease); nerr != nil {
			w.warn(nerr)
		}
	}
	return c, err
}

// onRemote is the lease an issue's record on the remote says, with the
// greater of its epoch and the queue's: epochs never go back, even over a
// ref a person deleted.
func onRemote(rec remote.Record, is *queue.Issue) claim.Lease {
	l := rec.Lease
	l.Epoch = max(l.Epoch, claim.Of(is).Epoch)
	return l
}

// mirror writes the remote's claims into the queue's issues, but those of
// except (let go since the last sync: mirrored, the queue would no longer
// show that it does not know what their holder shared). A record with an
// older epoch than the queue's is left out: the queue's claim is the
// later.
func mirror(q *queue.Queue, recs map[string]remote.Record, except map[string]bool) {
	for _, is := range q.Issues {
		rec, ok := recs[is.ID]
		if !ok || rec.Err != nil || except[is.ID] {
			continue
		}
		if cur := claim.Of(is); rec.Epoch >= cur.Epoch && !cur.Equal(rec.Lease) {
			claim.Put(is, rec.Lease)
		}
	}
}

// endLapsed ends, on the remote, the claims of issues the queue says are
// done whose lease lapsed or whose holder, on this machine, is gone: a run
// killed between an issue's resolution and the release of its ref left
// them so, and no one would claim the issue again to end them. A push lost
// to another machine is left to it.
func endLapsed(ctx context.Context, r *remote.Remote, q *queue.Queue, recs map[string]remote.Record, now time.Time) {
	for _, is := range q.Issues {
		rec, ok := recs[is.ID]
		if !ok || rec.Err != nil || rec.Holder == "" || !rec.Lapsed(now) && !claim.GoneHere(rec.Holder) {
			continue
		}
		if st, _ := is.Get(queue.FieldStatus); st != queue.StatusResolved && st != queue.StatusSkipped {
			continue
		}
		if pushed, err := r.Push(ctx, is.ID, rec.Sha, claim.Lease{Epoch: rec.Epoch}); err == nil {
			recs[is.ID] = pushed
		}
	}
}

// openToClaim is what an agent may claim in the workspace (see claimable).
func (w Workspace) openToClaim() (func(*queue.Issue) bool, error) {
	cfg, err := w.Config()
	if err != nil {
		return nil, err
	}
	humans := map[string]bool{}
	for _, g := range cfg.Gates {
		humans[g.Name] = g.IsHuman()
	}
	return claimable(humans), nil
}
