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
// for its baseline once, not once per agent. It is taken beside the
// agents' work (start), not before it: an attempt is judged against it
// only once its gates have run, and an agent does not wait, before it
// begins, for a whole run of the project's tests.
type baselines struct {
	w    loop.Workspace
	repo *worktree.Repo
	now  func() time.Time
	// ctx is what the takes run in (nil: context.Background()), and not
	// the context of the agent that asks first: an agent stopped (its
	// claim taken over) does not end the others' baseline.
	ctx context.Context

	mu     sync.Mutex
	by     map[string]*baseline
	taking sync.Mutex     // one take at a time: they share a worktree's name
	takes  sync.WaitGroup // the takes under way (see wait)
}

// baseline is one commit's, taken or being taken: ready is closed once r
// or err is set.
type baseline struct {
	ready chan struct{}
	r     *loop.BaseResults
	err   error
}

// of returns the baseline of commit, taking it when there is none yet;
// the agents that ask meanwhile wait for it, or for ctx to end.
func (b *baselines) of(ctx context.Context, commit string) (*loop.BaseResults, error) {
	bl := b.start(commit)
	select {
	case <-bl.ready:
		return bl.r, bl.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// start begins taking the baseline of commit, unless it is taken or being
// taken, and returns it: ready once taken. A take that fails is not kept:
// the next to ask takes it again.
func (b *baselines) start(commit string) *baseline {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bl, ok := b.by[commit]; ok {
		return bl
	}
	if b.by == nil {
		b.by = map[string]*baseline{}
	}
	bl := &baseline{ready: make(chan struct{})}
	b.by[commit] = bl
	b.takes.Add(1)
	go func() {
		defer b.takes.Done()
		ctx := b.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		bl.r, bl.err = b.find(ctx, commit)
		if bl.err != nil {
			b.mu.Lock()
			if b.by[commit] == bl {
				delete(b.by, commit)
			}
			b.mu.Unlock()
		}
		close(bl.ready)
	}()
	return bl
}

// wait returns once no take is under way: the caller ended their context
// first, or the takes end as the gates do.
func (b *baselines) wait() { b.takes.Wait() }

// find is the baseline kept for commit's tree, or one taken now.
func (b *baselines) find(ctx context.Context, commit string) (*loop.BaseResults, error) {
	tree, err := git.In(b.repo.Root).Output(ctx, "rev-parse", "--verify", "-q", commit+"^{tree}")
	if err != nil {
		return nil, fmt.Errorf("the tree of %.12s: %w", commit, err)
	}
	tree = strings.TrimSpace(tree)
	if r, ok := b.w.KeptBaseline(tree); ok {
		return r, nil
	}
	b.taking.Lock()
	defer b.taking.Unlock()
	r, err := b.take(ctx, commit, tree)
	if err != nil {
		return nil, fmt.Errorf("taking the baseline of %.12s: %w", commit, err)
	}
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
	bl := &baseline{ready: make(chan struct{}), r: &loop.BaseResults{Reports: reports}}
	close(bl.ready)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by == nil {
		b.by = map[string]*baseline{}
	}
	b.by[commit] = bl
}
