package pool

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/worktree"
)

// cleanLeft removes the worktrees and branches a killed run left that
// hold nothing a merge has not kept, and returns those it keeps, each with
// the command to look at it. The run lock is held: no other run's agent
// works in them.
func cleanLeft(w loop.Workspace, ctx context.Context, repo *worktree.Repo, branch string) ([]string, error) {
	left, err := repo.Leftovers(ctx, branch)
	if err != nil {
		return nil, err
	}
	var kept []string
	for _, l := range left {
		if l.Unmerged == "" {
			if err := repo.Remove(ctx, l.Issue, false); err != nil {
				w.Warn(fmt.Errorf("removing the worktree of %s: %w", l.Issue, err))
			}
			continue
		}
		kept = append(kept, keptNote(repo, l.Issue, l.Unmerged))
	}
	return kept, nil
}

func keptNote(repo *worktree.Repo, issue, why string) string {
	dir := filepath.Join(repo.Dir(), issue)
	return fmt.Sprintf("%s: kept with %s: look with git -C %s status, git log %s; remove with git worktree remove --force %s && git branch -D %s",
		issue, why, dir, worktree.Branch(issue), dir, worktree.Branch(issue))
}

// tidy removes an issue's worktree and branch once merged, or when they
// hold nothing; otherwise it keeps them and says how to look.
func (p *pool) tidy(ctx context.Context, issue string, merged bool) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if !merged {
		left, err := p.repo.Leftovers(ctx, p.branch)
		if err == nil {
			for _, l := range left {
				if l.Issue == issue && l.Unmerged != "" {
					return keptNote(p.repo, issue, l.Unmerged)
				}
			}
		}
	}
	if err := p.repo.Remove(ctx, issue, false); err != nil {
		p.w.Warn(fmt.Errorf("removing the worktree of %s: %w", issue, err))
	}
	return ""
}
