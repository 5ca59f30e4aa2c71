package pool

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/git"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// baselineTree names the worktree a baseline is taken in, beside the
// issues' worktrees, removed once taken.
const baselineTree = "baseline"

// baselines are the gates' results on the commits the agents' work starts
// from, by commit: the branch's head when the first agent began, and each
// merge's, whose results are those of the car's check. A commit with none
// takes the one kept for its tree, or runs the gates once in a worktree
// of its own (see loop.Workspace.TakeBaseline): a run of N agents pays
// for its baseline once, not once per agent.
type baselines struct {
	w    loop.Workspace
	repo *worktree.Repo
	now  func() time.Time

	mu sync.Mutex
	by map[string]*loop.BaseResults
}

// of returns the baseline of commit, taking it when there is none yet;
// the agents that ask meanwhile wait for it.
func (b *baselines) of(ctx context.Context, commit string) (*loop.BaseResults, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.by[commit]; ok {
		return r, nil
	}
	tree, err := git.In(b.repo.Root).Output(ctx, "rev-parse", "--verify", "-q", commit+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("the tree of %.12s: %w", commit, err)
	}
	tree = strings.TrimSpace(tree)
	r, ok := b.w.KeptBaseline(tree)
	if !ok {
		if r, err = b.take(ctx, commit, tree); err != nil {
			return nil, fmt.Errorf("taking the baseline of %.12s: %w", commit, err)
		}
	}
	if b.by == nil {
		b.by = map[string]*loop.BaseResults{}
	}
	b.by[commit] = r
	return r, nil
}

// take runs the gates on commit in a worktree of its own, removed after.
func (b *baselines) take(ctx context.Context, commit, tree string) (*loop.BaseResults, error) {
	t, err := b.repo.Add(ctx, baselineTree, commit)
	if err != nil {
		return nil, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := b.repo.Remove(rctx, baselineTree, false); err != nil {
			b.w.Warn(fmt.Errorf("removing the worktree of the baseline: %w", err))
		}
	}()
	return b.w.TakeBaseline(ctx, b.now, tree, t.Dir)
}

// note keeps reports as the results of commit: a car's check, merged.
func (b *baselines) note(commit string, reports []results.Report) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[string]*loop.BaseResults{}
	}
	b.by[commit] = &loop.BaseResults{Reports: reports}
}
