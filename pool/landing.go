package pool

import (
	"context"
	"errors"
	"fmt"

	"github.com/orchestrate-dev/orchestrate/remote"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// landing is where the merge train lands the agents' work: the
// integration branch, in this repository or on a remote that the
// machines share.
type landing interface {
	// Head is the branch's head now: on a remote, fetched (one round
	// trip).
	Head(ctx context.Context) (string, error)
	// Advance moves the branch from old to new, a fast-forward, by
	// compare-and-swap: an error matching worktree.ErrMoved when it is no
	// longer at old.
	Advance(ctx context.Context, old, new string) error
	// Rev names the branch, for git (a rebase onto it) and for people.
	Rev() string
}

// localBranch is a branch of the repository (see worktree.Repo.Advance).
type localBranch struct {
	repo   *worktree.Repo
	branch string
}

func (l localBranch) Head(ctx context.Context) (string, error) {
	return l.repo.Head(ctx, "refs/heads/"+l.branch)
}

func (l localBranch) Advance(ctx context.Context, old, new string) error {
	return l.repo.Advance(ctx, l.branch, old, new)
}

func (l localBranch) Rev() string { return l.branch }

// remoteBranch is a branch on a remote, moved by compare-and-swap pushes
// (see remote.PushBranch); this clone's branches are not touched.
type remoteBranch struct {
	r      *remote.Remote
	branch string
}

func (b remoteBranch) Head(ctx context.Context) (string, error) {
	return b.r.FetchBranch(ctx, b.branch)
}

func (b remoteBranch) Advance(ctx context.Context, old, new string) error {
	err := b.r.PushBranch(ctx, b.branch, old, new)
	if errors.Is(err, remote.ErrBranchMoved) {
		return fmt.Errorf("%w: %v", worktree.ErrMoved, err)
	}
	return err
}

func (b remoteBranch) Rev() string { return b.r.Name() + "/" + b.branch }
