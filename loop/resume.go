package loop

import (
	"context"
	"strings"
)

// leftTree is the tree as the last agent left it, for the resume prompt:
// a resumed agent is told the workspace is unchanged only when it is.
type leftTree struct {
	state TreeState
	ok    bool // state was read: a git repository
}

// noteLeft notes the tree as the agent that just ran left it, when a later
// loop may resume it.
func (r *runner) noteLeft(ctx context.Context) {
	if r.cfg.Agent.ResumeCommand == "" || !r.start.git {
		return
	}
	r.left.state, r.left.ok = r.w.gitTreeState(ctx)
}

// resumeState fills in what a resumed agent is told of its workspace:
// unchanged since it stopped, or the files changed meanwhile (by the
// gates, a formatter, a person); neither outside a git repository, where
// it cannot be told.
func (r *runner) resumeState(ctx context.Context, d *PromptData) {
	if !r.left.ok {
		return
	}
	cur, ok := r.w.gitTreeState(ctx)
	switch {
	case !ok:
	case cur == r.left.state:
		d.Unchanged = true
	default:
		d.ChangedSince = "files outside git's view"
		if cur.Tree != "" && r.left.state.Tree != "" {
			if out, err := r.w.git(ctx, "diff", "--name-only", r.left.state.Tree, cur.Tree); err == nil {
				if names := strings.Fields(out); len(names) > 0 {
					d.ChangedSince = listSome(names, 10)
				}
			}
		}
		if cur.Head != r.left.state.Head {
			d.ChangedSince += " (and HEAD moved)"
		}
	}
}
