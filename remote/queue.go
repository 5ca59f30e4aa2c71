package remote

import (
	"context"
	"fmt"
	"strings"
)

// QueueRef is the ref on the remote that holds the shared queue: a commit
// whose tree holds QueueFile (and the machines' histories, HistoryDir),
// each change a commit on the one before, so that git log shows who
// changed the queue when.
const QueueRef = "refs/orchestrate/queue"

// QueueFile is the queue's file in QueueRef's tree.
const QueueFile = "issue_queue.md"

// queueSeen is where this clone keeps its view of the remote's queue, and
// queueSynced the queue as it was at this clone's last sync with it: what
// each side changed since is told from it.
func (r *Remote) queueSeen() string   { return "refs/orchestrate/remote/" + r.name + "/queue" }
func (r *Remote) queueSynced() string { return "refs/orchestrate/synced/" + r.name + "/queue" }

// Queue is a version of the shared queue: its commit ("" when there is
// none) and its file.
type Queue struct {
	Sha  string
	Data []byte
}

// FetchQueue fetches the remote's queue (one round trip).
func (r *Remote) FetchQueue(ctx context.Context) (Queue, error) {
	// A ref missing on the remote is no error with a pattern: nothing is
	// fetched, and the view of it is pruned.
	err := r.fetch(ctx, true, "+"+QueueRef+"*:"+r.queueSeen()+"*")
	if err != nil {
		return Queue{}, r.remoteError("fetching", QueueRef, "from", err)
	}
	return r.queueAt(ctx, r.queueSeen())
}

// SyncedQueue is the queue as it was at this clone's last sync; no Sha
// when it never synced.
func (r *Remote) SyncedQueue(ctx context.Context) (Queue, error) {
	return r.queueAt(ctx, r.queueSynced())
}

// LastQueue is the queue as this clone last saw it on the remote: last
// fetched, or last pushed (see SeenQueue).
func (r *Remote) LastQueue(ctx context.Context) (Queue, error) {
	return r.queueAt(ctx, r.queueSeen())
}

// queueAt reads the queue at the local ref.
func (r *Remote) queueAt(ctx context.Context, ref string) (Queue, error) {
	sha, err := r.git(ctx, nil, "for-each-ref", "--format=%(objectname)", ref)
	if err != nil {
		return Queue{}, err
	}
	if sha = strings.TrimSpace(sha); sha == "" {
		return Queue{}, nil
	}
	data, err := r.git(ctx, nil, "cat-file", "blob", sha+":"+QueueFile)
	if err != nil {
		return Queue{}, fmt.Errorf("%s on %s (%.12s) holds no %s: not a queue orchestrate wrote: %v", QueueRef, r.name, sha, QueueFile, err)
	}
	return Queue{Sha: sha, Data: []byte(data)}, nil
}

// PushQueue makes data the remote's queue, from the version from, in one
// compare-and-swap push: a LostError when another machine changed it
// since. Its tree holds own's history (see OwnHistory, made on from) and
// every other host's as from has it; with no own.Host, from's histories
// as they are. The caller notes the sync (Synced) once its own copy holds
// data.
func (r *Remote) PushQueue(ctx context.Context, from Queue, data []byte, own Own, message string) (Queue, error) {
	hist, err := r.historyTree(ctx, from, own)
	if err != nil {
		return Queue{}, err
	}
	blob, err := r.git(ctx, strings.NewReader(string(data)), "hash-object", "-w", "--stdin")
	if err != nil {
		return Queue{}, err
	}
	entries := "100644 blob " + strings.TrimSpace(blob) + "\t" + QueueFile + "\n"
	if hist != "" {
		entries += "040000 tree " + hist + "\t" + HistoryDir + "\n"
	}
	tree, err := r.git(ctx, strings.NewReader(entries), "mktree")
	if err != nil {
		return Queue{}, err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", message}
	if from.Sha != "" {
		args = append(args, "-p", from.Sha)
	}
	sha, err := r.gitEnv(ctx, identity, nil, args...)
	if err != nil {
		return Queue{}, err
	}
	sha = strings.TrimSpace(sha)
	if err := r.pushRef(ctx, QueueRef, from.Sha, sha); err != nil {
		return Queue{}, err
	}
	q := Queue{Sha: sha, Data: data}
	_, err = r.git(ctx, nil, "update-ref", r.queueSeen(), sha)
	return q, err
}

// Synced notes q as this clone's last sync with the remote's queue.
func (r *Remote) Synced(ctx context.Context, q Queue) error {
	for _, ref := range []string{r.queueSeen(), r.queueSynced()} {
		if _, err := r.git(ctx, nil, "update-ref", ref, q.Sha); err != nil {
			return err
		}
	}
	return nil
}

// SeenQueue is the commit of this clone's view of the remote's queue,
// as its last fetch or sync left it; "" when it has none. No round trip.
func (r *Remote) SeenQueue(ctx context.Context) (string, error) {
	sha, err := r.git(ctx, nil, "for-each-ref", "--format=%(objectname)", r.queueSeen())
	return strings.TrimSpace(sha), err
}
