package loop

import (
	"context"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// queueBatch is the one write of the queue a Stop hook makes: once its
// gates have run (beginBatch), it takes the workspace's lock and reads the
// queue, and keeps both until endBatch. In between, every change to the
// queue (the record of each failing gate, the issues filed and resolved,
// the retry of the session) is made in memory, each as its own write would
// have made it (see queue.Batch), and every read sees them; the history
// rows they append are held. endBatch writes the queue once, then appends
// the rows, and lets the lock go. A failing Stop hook on a big queue so
// reads and writes it once, not once for each gate and once more for the
// retry; and no crash leaves the gates' records without the retry.
type queueBatch struct {
	b      *queue.Batch // nil until begun
	unlock func()
	rows   []analytics.Event
	done   bool
}

// batching reports whether the workspace's changes to the queue go to a
// batch begun and not yet ended.
func (w Workspace) batching() bool {
	return w.batch != nil && w.batch.b != nil && !w.batch.done
}

// beginBatch takes the lock and reads the queue for the workspace's batch,
// if it has one not yet begun.
func (w Workspace) beginBatch(ctx context.Context) error {
	if w.batch == nil || w.batch.b != nil || w.batch.done {
		return nil
	}
	unlock, err := w.Lock(ctx)
	if err != nil {
		return err
	}
	var needles []string
	if w.session != "" {
		needles = w.queueNeedles()
	}
	b, err := queue.ReadBatch(w.Path(QueueFile), needles...)
	if err != nil {
		unlock()
		return err
	}
	w.batch.b, w.batch.unlock = b, unlock
	return nil
}

// endBatch writes the queue as the batch's changes left it (nothing when
// they changed nothing), appends their history rows, and lets the lock
// go. Once ended, a batch holds nothing: the workspace reads and writes
// the files again.
func (w Workspace) endBatch() error {
	if w.batch == nil || w.batch.done {
		return nil
	}
	qb := w.batch
	qb.done = true
	if qb.b == nil {
		return nil
	}
	defer qb.unlock()
	if err := qb.b.Write(); err != nil {
		return err
	}
	return w.appendHistory(qb.rows...)
}

// queueNeedles are what a Stop hook's workspace reads of the queue (see
// updateQueue): the pieces that hold its session's key, or the IDs of its
// day, for the issues it files, or the claim's issue of a fenced one.
func (w Workspace) queueNeedles() []string {
	needles := []string{w.session, "ISSUE-" + w.day + "-"}
	if w.fence != nil {
		needles = append(needles, w.fence.id) // the fence reads its issue
	}
	return needles
}
