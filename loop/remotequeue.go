package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/claim/remote"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// The queue shared by machines through a git remote (see remote.QueueRef):
// each machine keeps its issue_queue.md, read and written as always, and
// brings it in step with the remote's at the points where another machine
// must see its changes (before it claims, before each launch of an agent,
// when it lets an issue go). A sync merges what this machine changed since
// its last sync with what the others pushed meanwhile (queue.Merge3), pushes
// the merge with a compare-and-swap push, and, lost to another machine's
// push, merges again with that one. Each issue has one holder at a time,
// and its budgets (its retries, its signatures) are changed by its holder
// only, who publishes them before each launch: so the budgets stay exact
// across machines, as the claims make them on one.

// SyncQueue brings the queue in step with the shared queue on the remote
// r, under the workspace's lock: two round trips (a fetch, and a push when
// this machine changed something), more when another machine's push came
// first. A queue both changed in ways that cannot be merged is an error
// naming the issue, and nothing is written, here or there.
func (w Workspace) SyncQueue(ctx context.Context, r *remote.Remote) error {
	unlock, err := w.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	path := w.Path(QueueFile)
	base, err := r.SyncedQueue(ctx)
	if err != nil {
		return err
	}
	if base.Sha == "" {
		// Never synced: the queue as committed is what both sides started
		// from (a clone's), or else this one.
		base.Data = w.committedQueue(ctx)
	}
	for range syncTries {
		theirs, err := r.FetchQueue(ctx)
		if err != nil {
			return err
		}
		ours, _, err := fsx.ReadFile(path)
		if err != nil {
			return err
		}
		merged := ours
		if theirs.Sha != "" && !bytes.Equal(ours, theirs.Data) {
			if base.Sha == "" && base.Data == nil {
				return fmt.Errorf("%s: this clone never synced its queue with the one on %s, and no commit holds it: what each side changed cannot be told; commit the queue both started from, or take the remote's (git fetch %s %s && git show FETCH_HEAD:%s > %s)",
					path, r.Name(), r.Name(), remote.QueueRef, remote.QueueFile, path)
			}
			if merged, err = queue.Merge3(base.Data, ours, theirs.Data); err != nil {
				return syncError(path, r, err)
			}
		}
		synced := theirs
		if theirs.Sha == "" || !bytes.Equal(merged, theirs.Data) {
			synced, err = r.PushQueue(ctx, theirs, merged, "orchestrate: the queue, from "+hostname())
			if errors.Is(err, remote.ErrLost) {
				continue
			}
		} else {
			err = r.Synced(ctx, theirs)
		}
		if err != nil {
			return err
		}
		return fsx.Transform(path, func(cur []byte, _ bool) ([]byte, error) {
			if bytes.Equal(cur, ours) {
				return synced.Data, nil
			}
			// A person's edit since the read: kept, on the merge, for the
			// next sync to push.
			return queue.Merge3(ours, cur, synced.Data)
		})
	}
	return fmt.Errorf("syncing the queue with %s: every push lost to another machine's, %d times over: try again", r.Name(), syncTries)
}

// syncTries is how many times SyncQueue merges again after a push lost to
// another machine's.
const syncTries = 10

// syncError says where a merge of the queue with the remote's stopped.
func syncError(path string, r *remote.Remote, err error) error {
	var me *queue.MergeError
	if errors.As(err, &me) {
		return fmt.Errorf("%s:%d: %s: %s (the queue on %s is %s)", path, me.Line, strings.TrimPrefix(me.ID, "## "), me.Why, r.Name(), remote.QueueRef)
	}
	return err
}

// committedQueue is the queue as the repository's HEAD holds it; nil when
// it holds none. The workspace's directory may be relative (--dir's
// default), the repository's root is not.
func (w Workspace) committedQueue(ctx context.Context) []byte {
	abs, err := filepath.Abs(w.Path(QueueFile))
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(w.Root(), abs)
	if err != nil {
		return nil
	}
	out, err := w.git(ctx, "show", "HEAD:"+filepath.ToSlash(rel))
	if err != nil {
		return nil
	}
	return []byte(out)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "a machine"
	}
	return h
}
