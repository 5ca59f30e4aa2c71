package remote

import (
	"context"
	"strings"
)

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
