package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ForeignMoveError says the integration branch moved to a commit that
// neither orchestrate's merges nor a person in its checkout made: an
// agent's, most likely. Nothing is to be built on it.
type ForeignMoveError struct {
	Branch, Root string
	From, To     string // the commits, full
	Subject      string // To's subject
	Why          string // what shows it is no person's
}

func (e *ForeignMoveError) Error() string {
	return fmt.Sprintf("%s moved from %.12s to %.12s (%s), which no merge of orchestrate's made, nor a commit in the checkout %s: %s. "+
		"orchestrate builds nothing on it: look at it (git log %.12s..%.12s), then put %s back (git update-ref refs/heads/%s %s %s), "+
		"or, if it is yours, bring the checkout to it (git reset --keep %.12s), and run again",
		e.Branch, e.From, e.To, e.Subject, e.Root, e.Why, e.From, e.To, e.Branch, e.Branch, e.From, e.To, e.To)
}

// settle is how long a check of a move waits for a git command under way
// in the checkout (its index.lock) to end: a commit there moves the branch
// an instant before it writes the index.
const settle = 2 * time.Second

// Moved judges a move of branch, which the main worktree has checked out,
// from old to new, made by neither orchestrate's merges (Advance) nor this
// check's caller: a *ForeignMoveError when it shows a person did not make
// it. A person moves the branch in its checkout (a commit, a merge, a
// pull, a reset), whose index then follows; an agent moves it from its
// worktree (git update-ref), and the checkout's index stays old's. So a
// move is foreign when the checkout's index is still old's while new's
// files differ from old's. Whose commits new holds says nothing: an agent
// may rebase its own work onto a person's commit. When the checkout is on
// another branch, no move is judged foreign.
func (r *Repo) Moved(ctx context.Context, branch, old, new string) error {
	if cur, _ := r.CurrentBranch(ctx); cur != branch {
		return nil
	}
	r.waitIndex(ctx)
	_, same := r.git(ctx, "diff-tree", "--quiet", old, new)
	_, stale := r.git(ctx, "diff-index", "--cached", "--quiet", old, "--")
	if same == nil || stale != nil {
		return nil
	}
	e := &ForeignMoveError{Branch: branch, Root: r.Root, From: old, To: new,
		Why: "the checkout did not move with it (its index is still " + branch + " as it was)"}
	if out, err := r.git(ctx, "log", "-1", "--format=%s", new); err == nil {
		e.Subject = strings.TrimSpace(out)
	}
	return e
}

// waitIndex waits, up to settle, while a git command holds the index of
// the main worktree.
func (r *Repo) waitIndex(ctx context.Context) {
	lock := filepath.Join(r.Common, "index.lock")
	for end := time.Now().Add(settle); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(lock); err != nil {
			return
		}
	}
}
