package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// What the machines share on the remote besides the claims: the queue, on
// a ref of its own, with their histories beside it (see history.go), and
// the integration branch their work lands on. Both move only by
// compare-and-swap pushes, as the claims do.

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

// fetch fetches refspec from the remote; prune removes this clone's view
// of the refs it matches that the remote no longer has. git's check of
// what it fetched walks every worktree's HEAD, and a worktree that an
// agent's run makes or removes meanwhile fails it ("bad object
// worktrees/…/HEAD"): a fetch that failed while the worktrees changed is
// made again.
func (r *Remote) fetch(ctx context.Context, prune bool, refspec string) error {
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", "--no-recurse-submodules"}
	if prune {
		args = append(args, "--prune")
	}
	args = append(args, r.name, refspec)
	var err error
	for range fetchTries {
		before := r.worktrees(ctx)
		if _, err = r.git(ctx, nil, args...); err == nil || r.worktrees(ctx) == before {
			return err
		}
	}
	return err
}

// worktrees lists the repository's worktrees, each with its HEAD: two
// lists differ when a worktree was made or removed between them.
func (r *Remote) worktrees(ctx context.Context) string {
	out, _ := r.git(ctx, nil, "worktree", "list", "--porcelain")
	return out
}

// fetchTries is how many times fetch tries, a worktree changing under it.
const fetchTries = 5

// identity is who writes orchestrate's commits on the remote, whatever
// the clone's git config says (a CI machine has none).
var identity = []string{"GIT_AUTHOR_NAME=orchestrate", "GIT_AUTHOR_EMAIL=orchestrate@localhost",
	"GIT_COMMITTER_NAME=orchestrate", "GIT_COMMITTER_EMAIL=orchestrate@localhost"}

// Tracking is this clone's view of branch on the remote: refs/remotes/NAME/BRANCH.
func (r *Remote) Tracking(branch string) string { return "refs/remotes/" + r.name + "/" + branch }

// FetchBranch fetches branch from the remote (one round trip) and returns
// its head.
func (r *Remote) FetchBranch(ctx context.Context, branch string) (string, error) {
	err := r.fetch(ctx, false, "+refs/heads/"+branch+":"+r.Tracking(branch))
	if err != nil {
		return "", r.remoteError("fetching", "refs/heads/"+branch, "from", err)
	}
	out, err := r.git(ctx, nil, "rev-parse", "--verify", "-q", r.Tracking(branch)+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%s on %s: no commit", branch, r.name)
	}
	return strings.TrimSpace(out), nil
}

// ErrBranchMoved is returned by PushBranch when the branch on the remote
// is no longer at old.
var ErrBranchMoved = errors.New("the branch moved on the remote")

// PushBranch moves branch on the remote from old to new, in one
// compare-and-swap push, and this clone's view of it: an error matching
// ErrBranchMoved when another machine moved it since.
func (r *Remote) PushBranch(ctx context.Context, branch, old, new string) error {
	ref := "refs/heads/" + branch
	if err := r.pushRef(ctx, ref, old, new); err != nil {
		if errors.Is(err, ErrLost) {
			return fmt.Errorf("%s on %s: %w", branch, r.name, ErrBranchMoved)
		}
		return err
	}
	_, err := r.git(ctx, nil, "update-ref", r.Tracking(branch), new)
	return err
}

// WorkPrefix is where the work of an issue not merged yet is kept on the
// remote, a commit per issue (see worktree.Tree.Snapshot): its holder's,
// for the machine that takes the issue over.
const WorkPrefix = "refs/orchestrate/work/"

// PushWork makes sha the work of issue id on the remote (one round trip).
// Its holder alone pushes it, fenced by its claim.
func (r *Remote) PushWork(ctx context.Context, id, sha string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if _, err := r.git(ctx, nil, "push", "--quiet", "--no-verify", "--force", r.name, sha+":"+WorkPrefix+id); err != nil {
		return r.remoteError("pushing", WorkPrefix+id, "to", err)
	}
	return nil
}

// FetchWork fetches the work of issue id from the remote (one round trip):
// its commit, "" when there is none.
func (r *Remote) FetchWork(ctx context.Context, id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	seen := "refs/orchestrate/remote/" + r.name + "/work/" + id
	if err := r.fetch(ctx, true, "+"+WorkPrefix+id+"*:"+seen+"*"); err != nil {
		return "", r.remoteError("fetching", WorkPrefix+id, "from", err)
	}
	out, err := r.git(ctx, nil, "for-each-ref", "--format=%(objectname)", seen)
	return strings.TrimSpace(out), err
}

// DropWork removes the work of issue id from the remote, once merged.
func (r *Remote) DropWork(ctx context.Context, id string) error {
	if err := CheckID(id); err != nil {
		return err
	}
	if _, err := r.git(ctx, nil, "push", "--quiet", "--no-verify", r.name, ":"+WorkPrefix+id); err != nil {
		return r.remoteError("deleting", WorkPrefix+id, "on", err)
	}
	return nil
}

// Check says when the remote does not exist in this repository (no round
// trip).
func (r *Remote) Check(ctx context.Context) error {
	if _, err := r.git(ctx, nil, "remote", "get-url", r.name); err != nil {
		return fmt.Errorf("there is no remote %s in this repository (git remote add %s URL)", r.name, r.name)
	}
	return nil
}
