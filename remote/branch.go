package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

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
