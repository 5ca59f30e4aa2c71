package loop

import "context"

// leftTree is the tree as the last agent left it, for the resume prompt:
// a resumed agent is told the workspace is unchanged only when it is.
type leftTree struct {
	state workState
	ok    bool // state was read: a git repository
}

// noteLeft notes the tree as the agent that just ran left it, when a later
// loop may resume it.
func (r *runner) noteLeft(ctx context.Context) {
	if r.cfg.Agent.ResumeCommand == "" || !r.start.git {
		return
	}
	r.left.state, r.left.ok = r.w.readWorkState(ctx)
}

// resumeState fills in what a resumed agent is told of its workspace:
// unchanged since it stopped, or the files changed meanwhile (by the
// gates, a formatter, a person); neither outside a git repository, where
// it cannot be told.
func (r *runner) resumeState(ctx context.Context, d *PromptData) {
	if !r.left.ok {
		return
	}
	cur, ok := r.w.readWorkState(ctx)
	r.settleGates(ctx, cur, ok) // the tree the gates left, looked at once
	if !ok {
		return
	}
	names := changedSince(r.left.state, cur)
	switch {
	case cur.head == r.left.state.head && len(names) == 0:
		d.Unchanged = true
	case cur.head == r.left.state.head:
		d.ChangedSince = listSome(names, 10)
	case len(names) == 0:
		d.ChangedSince = "HEAD moved"
	default:
		d.ChangedSince = listSome(names, 10) + " (and HEAD moved)"
	}
}
