package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// DefaultLease is the lease of the claims of run --agents, renewed
// every third of it while the agent works.
const DefaultLease = time.Minute

// renewEvery is how often an agent renews its claim: every third of its
// lease, so that a renewal that fails leaves time for another before the
// lease lapses.
func renewEvery(lease time.Duration) time.Duration { return lease / 3 }

// renew renews the claim (see renewEvery) until ctx ends: here, or on the
// remote. A claim taken over stops the agent (cancel with the refusal).
func (p *pool) renew(ctx context.Context, cancel context.CancelCauseFunc, w loop.Workspace, c loop.Claimed) {
	t := time.NewTicker(renewEvery(p.opt.Lease))
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
			w.Warn(fmt.Errorf("renewing the claim of %s: %w", c.ID, err))
		}
	}
}
