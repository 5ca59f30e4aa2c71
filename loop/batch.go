package loop

import (
	"context"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// queueTx is where a step reads and changes the queue, and where the
// history rows that tell of its changes go. The steps that file, record,
// resolve and retry issues each take one. A command's own is direct: each
// change takes the lock, reads the queue, writes it and appends its rows
// at once. A Stop hook's is its batch: the changes are made in memory, and
// written together when the batch commits.
type queueTx interface {
	// load reads the queue as the changes so far leave it (see
	// Workspace.loadQueue).
	load() (*queue.Queue, error)
	// some reads the issues whose text holds needle, for reading only (see
	// queue.LoadSome).
	some(needle string) (*queue.Queue, error)
	// change runs fn on the queue, under the lock (see
	// Workspace.updateQueue). Once fn succeeded, it appends the history
	// rows that rows returns; a nil rows appends none.
	change(ctx context.Context, fn func(*queue.Queue) error, rows func() []analytics.Event) error
	// history appends history rows that tell of changes already made.
	history(ctx context.Context, rows ...analytics.Event) error
}

// direct is the queue as a command changes it: each change takes the
// lock, reads the queue and writes it, then appends its history rows.
type direct struct{ w Workspace }

func (d direct) load() (*queue.Queue, error) { return d.w.loadQueue() }

func (d direct) some(needle string) (*queue.Queue, error) {
	return queue.LoadSome(d.w.Path(QueueFile), needle)
}

func (d direct) change(ctx context.Context, fn func(*queue.Queue) error, rows func() []analytics.Event) error {
	unlock, err := d.w.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := d.w.updateQueue(fn); err != nil || rows == nil {
		return err
	}
	return d.w.appendHistory(rows()...)
}

func (d direct) history(ctx context.Context, rows ...analytics.Event) error {
	return d.w.withLock(ctx, func() error { return d.w.appendHistory(rows...) })
}

// heldRows makes its changes through the queueTx it holds, and keeps
// their history rows in rows. A step that appends them all at its end
// (RunGates) so makes one append, one sync, of them.
type heldRows struct {
	queueTx
	rows *[]analytics.Event
}

func (h heldRows) change(ctx context.Context, fn func(*queue.Queue) error, rows func() []analytics.Event) error {
	if rows == nil {
		return h.queueTx.change(ctx, fn, nil)
	}
	return h.queueTx.change(ctx, fn, func() []analytics.Event {
		*h.rows = append(*h.rows, rows()...)
		return nil
	})
}

// batch is the one write of the queue a Stop hook makes. The hook begins
// it once its gates have run (beginBatch): it takes the workspace's lock
// and reads the queue, and keeps both until it commits. Every change made
// through it (the record of each failing gate, the issues filed and
// resolved, the retry of the session) is made in memory, each as its own
// write would have made it (see queue.Batch), and every read through it
// sees them; the history rows they append are held. commit writes the
// queue once, then appends the rows, and lets the lock go. A failing Stop
// hook on a big queue so reads and writes it once, not once for each gate
// and once more for the retry; and no crash leaves the gates' records
// without the retry.
type batch struct {
	w      Workspace
	q      *queue.Batch
	unlock func()
	rows   []analytics.Event
}

// beginBatch takes the workspace's lock and reads the queue for a batch of
// changes.
func (w Workspace) beginBatch(ctx context.Context) (*batch, error) {
	unlock, err := w.Lock(ctx)
	if err != nil {
		return nil, err
	}
	var needles []string
	if w.session != "" {
		needles = w.queueNeedles()
	}
	q, err := queue.ReadBatch(w.Path(QueueFile), needles...)
	if err != nil {
		unlock()
		return nil, err
	}
	// Let go with the lock, written or not.
	return &batch{w: w, q: q, unlock: func() { q.Release(); unlock() }}, nil
}

// load reads the queue as the batch's changes leave it, with the pieces
// the changes read: its readers keep to a session's issues by their
// Session field.
func (b *batch) load() (*queue.Queue, error) { return b.q.Queue(), nil }

func (b *batch) some(needle string) (*queue.Queue, error) { return b.q.Some(needle), nil }

// change makes the change in memory: the batch holds the lock.
func (b *batch) change(_ context.Context, fn func(*queue.Queue) error, rows func() []analytics.Event) error {
	if err := b.q.Update(b.w.fenced(fn)); err != nil || rows == nil {
		return err
	}
	b.rows = append(b.rows, rows()...)
	return nil
}

// history holds the rows until the batch commits, after its write.
func (b *batch) history(_ context.Context, rows ...analytics.Event) error {
	b.rows = append(b.rows, rows...)
	return nil
}

// commit writes the queue as the batch's changes left it (nothing when
// they changed nothing), appends their history rows, and lets the lock
// go.
func (b *batch) commit() error {
	defer b.unlock()
	if err := b.q.Write(); err != nil {
		return err
	}
	return b.w.appendHistory(b.rows...)
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
