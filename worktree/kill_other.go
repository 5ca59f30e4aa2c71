//go:build !linux

package worktree

// killUnder has no /proc to read here: the run kills its agents' process
// groups, and nothing else.
func killUnder(dir string) {}
