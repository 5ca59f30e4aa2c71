package loop

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
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
//
// It shares this machine's history.csv too, as its host's in the shared
// queue's tree (see remote.OwnHistory): what was appended since the last
// sync is pushed with the queue, and every other host's history is kept
// as the remote has it. A history that cannot be shared is a warning: the
// queue is synced all the same.
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
	if sha, err := r.SeenQueue(ctx); err == nil && sha != "" && sha != base.Sha {
		// A sync killed after its push and the file's write, before its
		// note: the file is the queue it pushed, which is the base. (Read
		// only then: most syncs find the two the same.)
		seen, err := r.LastQueue(ctx)
		if cur, _, rerr := fsx.ReadSettled(path); err == nil && rerr == nil && bytes.Equal(cur, seen.Data) {
			base = seen
		}
	}
	given, err := w.givenEpochs()
	if err != nil {
		return err
	}
	spent, err := w.countedLaunches()
	if err != nil {
		return err
	}
	host := w.historyHost(ctx, r)
	for try := range syncTries {
		if try > 0 {
			if err := pauseAfterLost(ctx, try-1); err != nil {
				return err
			}
		}
		theirs, err := r.FetchQueue(ctx)
		if err != nil {
			return err
		}
		if err := checkShared(r, theirs); err != nil {
			return err
		}
		// Read once no program is saving it in place: the part of a save
		// written so far, pushed, would delete the issues not yet written
		// on every machine, or wedge them all on a row cut short.
		ours, _, err := fsx.ReadSettled(path)
		if err != nil {
			return err
		}
		stale := staleSince(base.Data, ours, given)
		mine := raiseCounts(w.unfenced(path, ours, base.Data, stale, given), spent)
		merged, err := w.mergeQueue(path, r, base, mine, theirs)
		if err != nil {
			return err
		}
		own := w.ownHistory(ctx, r, base, theirs, &host)
		synced := theirs
		if theirs.Sha == "" || !bytes.Equal(merged, theirs.Data) || own.Changed {
			synced, err = r.PushQueue(ctx, theirs, merged, own, "orchestrate: the queue, from "+cmp.Or(host, "a machine"))
			if errors.Is(err, remote.ErrLost) {
				continue
			}
			if err != nil {
				return err
			}
		}
		return w.keepSynced(ctx, r, ours, base, theirs, synced, spent)
	}
	return fmt.Errorf("syncing the queue with %s: every push lost to another machine's, %d times over: try again", r.Name(), syncTries)
}

// keepSynced makes the queue synced, the remote's now, this machine's:
// its file (ours, as read; a person's edit since, merged in), the counts
// it brought (see learnCounts; base and theirs, the queue at the last
// sync and the remote's before the push, tell another machine's retry),
// then the note of the sync. The file first: killed between the two, the
// next sync merges from the older base again, which the file and the
// remote both hold the changes of. The other way round, it would take
// the file for one that undid them. spent is LaunchesFile as the sync
// read it, under the lock it holds.
func (w Workspace) keepSynced(ctx context.Context, r *remote.Remote, ours []byte, base, theirs, synced remote.Queue, spent map[string]counted) error {
	err := fsx.Transform(w.Path(QueueFile), func(cur []byte, _ bool) ([]byte, error) {
		if bytes.Equal(cur, ours) {
			return synced.Data, nil
		}
		// A person's edit since the read: kept, on the merge, for the
		// next sync to push.
		return queue.Merge3(ours, cur, synced.Data)
	})
	if err != nil {
		return err
	}
	if err := w.learnCounts(spent, retriedOn(base.Data, theirs.Data), synced.Data); err != nil {
		return err
	}
	return r.Synced(ctx, synced)
}

// unfenced is ours without the changes made since the last sync (base)
// to the issues stale, whose claim was taken over elsewhere (see
// staleHere): their old holder wrote them, fenced. Each issue put back is
// said.
func (w Workspace) unfenced(path string, ours, base []byte, stale []string, gs map[string]given) []byte {
	if len(stale) == 0 {
		return ours
	}
	kept, back := queue.Revert(ours, base, stale)
	for _, id := range back {
		w.warn(fmt.Errorf("%s: %s: the changes made here since the last sync are undone, not shared: its claim was taken over (epoch %d, %s), and they were written by the holder it was taken from", path, id, gs[id].epoch, gs[id].holder))
	}
	return kept
}

// checkShared refuses the remote's queue when it has problems (an ID given
// twice, a malformed field: what validate reports), before it is merged:
// taken, it would leave this clone's queue refusing every write, and be
// pushed on by it. The error is one line, naming the ref and its first
// problem.
func checkShared(r *remote.Remote, theirs remote.Queue) error {
	if theirs.Sha == "" {
		return nil
	}
	q := queue.Parse(theirs.Data)
	if len(q.Problems) == 0 {
		return nil
	}
	p := q.Problems[0]
	p.File = remote.QueueFile
	more := ""
	if n := len(q.Problems) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return fmt.Errorf("%s on %s (%.12s) is not a valid queue, not taken: %s%s; this clone's queue is left as it is, and nothing was pushed (see it: git fetch %s %s && git show FETCH_HEAD:%s)",
		remote.QueueRef, r.Name(), theirs.Sha, p, more, r.Name(), remote.QueueRef, remote.QueueFile)
}

// mergeQueue merges what this machine changed in its queue (ours) since
// the last sync (base) with what the others pushed meanwhile (theirs).
// What both changed and one side lost is said, a warning each.
func (w Workspace) mergeQueue(path string, r *remote.Remote, base remote.Queue, ours []byte, theirs remote.Queue) ([]byte, error) {
	if theirs.Sha == "" || bytes.Equal(ours, theirs.Data) {
		return ours, nil
	}
	if base.Sha == "" && base.Data == nil {
		return nil, fmt.Errorf("%s: this clone never synced its queue with the one on %s, and no commit holds it: what each side changed cannot be told; commit the queue both started from, or take the remote's (git fetch %s %s && git show FETCH_HEAD:%s > %s)",
			path, r.Name(), r.Name(), remote.QueueRef, remote.QueueFile, path)
	}
	merged, notes, err := queue.Merge3Notes(base.Data, ours, theirs.Data)
	if err != nil {
		return nil, syncError(path, r, err)
	}
	for _, n := range notes {
		w.warn(fmt.Errorf("%s: merged with the queue on %s: %s", path, r.Name(), n))
	}
	return merged, nil
}

// historyHost is this clone's host name, given one at its first sync; ""
// when it cannot have one (a warning says why): its history is not shared.
func (w Workspace) historyHost(ctx context.Context, r *remote.Remote) string {
	host, err := r.Host(ctx)
	if err == nil && host == "" {
		host, err = r.NewHost(ctx)
	}
	if err != nil {
		w.warn(fmt.Errorf("%s is not shared on %s: %w", HistoryFile, r.Name(), err))
		return ""
	}
	return host
}

// ownHistory is this clone's history as the version theirs of the queue
// is to hold it (remote.OwnHistory). Another clone found writing under
// this clone's host name, this one takes a new name and says so, and
// shares its history under it. A history that cannot be shared is a
// warning, and the version's histories are kept as they are.
func (w Workspace) ownHistory(ctx context.Context, r *remote.Remote, base, theirs remote.Queue, host *string) remote.Own {
	if *host == "" {
		return remote.Own{}
	}
	own, err := r.OwnHistory(ctx, base, theirs, *host, w.Path(HistoryFile))
	if errors.Is(err, remote.ErrHostTaken) {
		var name string
		if name, err = r.NewHost(ctx); err == nil {
			w.warn(fmt.Errorf("%s/%s on %s: another clone has the host name %s: this clone is %s from now on (git config %s)",
				remote.HistoryDir, *host, r.Name(), *host, name, remote.HostConfig))
			*host = name
			own, err = r.OwnHistory(ctx, base, theirs, name, w.Path(HistoryFile))
		}
	}
	if err != nil {
		w.warn(fmt.Errorf("%s is not shared on %s: %w", HistoryFile, r.Name(), err))
		return remote.Own{}
	}
	return own
}

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
