package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// NotTreeError says the worktree of an issue is no longer the one Add
// made: gone (deleted), or something else in its place.
type NotTreeError struct {
	Issue string
	Dir   string
	// Gone says nothing is at Dir any more.
	Gone bool
	// Why says what is there instead, when something is.
	Why string
}

func (e *NotTreeError) Error() string {
	if e.Gone {
		return fmt.Sprintf("the worktree of %s, %s, is gone: it was deleted", e.Issue, e.Dir)
	}
	return fmt.Sprintf("the worktree of %s, %s, is no longer the one orchestrate made: %s", e.Issue, e.Dir, e.Why)
}

// identify notes what makes the worktree the one made: its directory (its
// device and inode, which os.SameFile compares), and its .git file,
// which names its git directory. It fails when the directory is not a
// worktree of the repository whose git common directory is common.
func (t *Tree) identify(common string) error {
	fi, err := os.Lstat(t.Dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: what(t.Dir, fi)}
	}
	data, err := readSmall(filepath.Join(t.Dir, ".git"))
	if err != nil {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "it has no .git file of a worktree"}
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	gitdir = filepath.Clean(strings.TrimSpace(gitdir))
	if !ok || !filepath.IsAbs(gitdir) || filepath.Dir(realPath(gitdir)) != filepath.Join(realPath(common), "worktrees") {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: fmt.Sprintf("its .git file does not name a worktree of %s", common)}
	}
	back, err := readSmall(filepath.Join(gitdir, "gitdir"))
	if err != nil || realPath(strings.TrimSpace(string(back))) != filepath.Join(realPath(t.Dir), ".git") {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "git does not know it as a worktree there"}
	}
	t.made, t.gitFile, t.gitdir = fi, string(data), gitdir
	return nil
}

// realPath is path with its links resolved, or path when it cannot be.
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	return filepath.Clean(path)
}

// what says what the file at path, which fi describes, is.
func what(path string, fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		to, _ := os.Readlink(path)
		return "a link to " + to
	}
	if fi.IsDir() {
		return "another directory in its place"
	}
	return "a file in its place"
}

// Check reports whether the worktree is still the one Add made: the same
// directory, by its device and inode and not by its path (a link put in
// its place, or another directory, is not it), whose .git file still
// names its own git directory, and whose HEAD is on its branch, or on none
// (never on another branch, the integration branch least of all). Its
// error is a *NotTreeError.
func (t *Tree) Check() error {
	fi, err := os.Lstat(t.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Gone: true}
	case err != nil:
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: err.Error()}
	case t.made == nil:
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "it was never made"}
	case !fi.IsDir() || !os.SameFile(t.made, fi):
		// By its type first: a link made once the directory is deleted
		// may get the directory's inode again.
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: what(t.Dir, fi)}
	}
	if data, err := readSmall(filepath.Join(t.Dir, ".git")); err != nil || string(data) != t.gitFile {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "its .git file was changed"}
	}
	head, err := readSmall(filepath.Join(t.gitdir, "HEAD"))
	if err != nil {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "its HEAD is gone"}
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref:"); ok && strings.TrimSpace(ref) != "refs/heads/"+t.Branch {
		return &NotTreeError{Issue: t.Issue, Dir: t.Dir, Why: "its HEAD is on " + strings.TrimSpace(ref) + ", not on " + t.Branch}
	}
	return nil
}

// git runs git in the worktree, pinned to its own git directory (the one
// its .git file named when it was made), with env added to the
// environment: whatever its .git file says now, a command here never works
// on another repository's HEAD or index.
func (t *Tree) git(env ...string) git.Runner {
	if t.gitdir != "" {
		env = append([]string{"GIT_DIR=" + t.gitdir, "GIT_WORK_TREE=" + t.Dir}, env...)
	}
	return gitIn(t.Dir, env...)
}
