package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"

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

// localBranch is a branch of the repository (see worktree.Repo.Advance),
// the one its checkout is on. A move that neither the train nor a person
// in that checkout made is refused (see worktree.Repo.Moved): Head fails
// with it, and goes on failing.
type localBranch struct {
	repo   *worktree.Repo
	branch string

	mu   sync.Mutex
	seen string // the head last taken: the run's first, the train's or a person's
	bad  error  // the foreign move seen, if any
}

func (l *localBranch) Head(ctx context.Context) (string, error) {
	// Read under the lock that Advance holds: a head read before a merge
	// and judged after it would pass for a move back.
	l.mu.Lock()
	defer l.mu.Unlock()
	head, err := l.repo.Head(ctx, "refs/heads/"+l.branch)
	if err != nil {
		return "", err
	}
	if l.bad == nil && l.seen != "" && head != l.seen {
		l.bad = l.repo.Moved(ctx, l.branch, l.seen, head)
	}
	if l.bad != nil {
		return "", l.bad
	}
	l.seen = head
	return head, nil
}

func (l *localBranch) Advance(ctx context.Context, old, new string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.repo.Advance(ctx, l.branch, old, new)
	if err == nil {
		l.seen = new
	}
	return err
}

func (l *localBranch) Rev() string { return l.branch }

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
