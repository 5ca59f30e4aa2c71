package loop

import (
	"context"
	"math/rand/v2"
	"time"
)

// A push lost to another machine's (remote.ErrLost) is tried again: the
// queue's sync merges again on the version that won, claim --next fetches
// the claims again. Machines that lost together and tried again at once
// would race again, in step, and the slowest of them, whose fetch-to-push
// takes longest, would lose each time to the others' next pushes. So each
// waits first, a random while in a window that doubles with each loss in
// a row: the burst of pushes it lost to passes, and those that lost
// together try again apart.

const (
	// syncTries is how many pushes in a row SyncQueue makes, each lost to
	// another machine's, before it gives up. With the pauses between them
	// (lostPause), the last is made some 10 s after the first.
	syncTries = 20
	// nextRounds is how many times claim --next on a remote fetches the
	// claims when every push it made was lost to another machine's; and
	// how many times it tries, a sync of the queue between two tries, when
	// each finds an issue let go since the last sync (see Next).
	nextRounds = 10
	// lostPauseMin and lostPauseMax bound the window of the pause after a
	// lost push: the first, doubled with each loss in a row up to the
	// second.
	lostPauseMin = 10 * time.Millisecond
	lostPauseMax = time.Second
)

// pauseAfterLost waits before the next try after the n-th push in a row
// (from 0) lost to another machine's, for lostPause; ctx's end ends it,
// with ctx's cause. (A variable, for the tests that count the pauses.)
var pauseAfterLost = func(ctx context.Context, n int) error {
	t := time.NewTimer(lostPause(n, rand.Float64()))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// lostPause is the pause after the n-th push in a row (from 0) lost to
// another machine's: in the upper half of a window of lostPauseMin
// doubled n times, at most lostPauseMax, at r (in [0, 1)) of that half.
// The upper half: the pauses grow with the losses, whatever the draws.
func lostPause(n int, r float64) time.Duration {
	w := lostPauseMax
	if n >= 0 && n < 16 {
		w = min(lostPauseMin<<n, lostPauseMax)
	}
	return w/2 + time.Duration(r*float64(w/2))
}
