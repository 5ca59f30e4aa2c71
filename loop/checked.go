package loop

import (
	"context"
	"slices"
	"time"
)

// CheckedDir names the directory under runs/ of the baseline that a check
// of the gates outside a Stop hook leaves (an agent's gates call through
// the MCP server, mid-turn): where the repository stood when every gate
// passed.
const CheckedDir = "checked"

// RecordChecked records where the repository stands as the place where
// every gate just passed, outside a Stop hook. A Stop hook that finds the
// tree still there, with no issue of its session's own to work on, lets
// the agent stop at once: the gates do not run twice on an unchanged tree.
// It records nothing outside a git work tree.
func (w Workspace) RecordChecked(ctx context.Context, now time.Time, by string) error {
	return w.recordBaseline(ctx, now, CheckedDir, "", "", by)
}

// unchanged reports whether a Stop hook's session has nothing to check:
// no issue of its own to work on, and the tree where the session began,
// where its gates last passed, or where a check's gates last all passed
// (RecordChecked).
func (w Workspace) unchanged(ctx context.Context, dirName, session string) bool {
	var bases []TreeState
	for _, d := range []string{dirName, CheckedDir} {
		if b, ok := w.readBaseline(d); ok {
			bases = append(bases, b.TreeState)
		}
	}
	if len(bases) == 0 || w.sessionWorking(session) {
		return false
	}
	cur, ok := w.treeState(ctx)
	return ok && slices.Contains(bases, cur)
}
