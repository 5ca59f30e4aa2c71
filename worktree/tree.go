package worktree

import (
	"context"
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

// InTheWayError says a file or directory that orchestrate did not make is
// where it would put the worktree of an issue, or its temporary
// directory: it is someone's, and stays as it is.
type InTheWayError struct {
	Issue string
	Path  string
}

func (e *InTheWayError) Error() string {
	return fmt.Sprintf("%s is in the way of the worktree of %s: orchestrate did not make it, and leaves it as it is; move it away, or set agents.worktrees to a directory of orchestrate's own",
		e.Path, e.Issue)
}

// ours reports whether dir is a directory that holds a worktree of the
// repository whose git common directory is common: its .git file names a
// git directory of common's worktrees. git may know it (a worktree made)
// or have forgotten it (a worktree a killed run was making). Anything else
// is someone else's.
func ours(dir, common string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	data, err := readSmall(filepath.Join(dir, ".git"))
	if err != nil {
		return false
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	gitdir = strings.TrimSpace(gitdir)
	return ok && filepath.IsAbs(gitdir) && filepath.Dir(realPath(gitdir)) == filepath.Join(realPath(common), "worktrees")
}

// clear makes room for the worktree of issue at dir: nothing is there, an
// empty directory, what is left of a worktree of the repository's that
// git forgot, or a link an agent put in its worktree's place (the link,
// never what it points to, as Remove does), all of which go: removed
// says whether something went. Anything else is in the way (an
// *InTheWayError).
func (r *Repo) clear(issue, dir string) (removed bool, err error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return true, os.Remove(dir)
	case ours(dir, r.Common):
		return true, os.RemoveAll(dir)
	case fi.IsDir() && os.Remove(dir) == nil: // empty
		return true, nil
	}
	return false, &InTheWayError{Issue: issue, Path: dir}
}

// clearPruned is clear, then a prune of what git knew of what it removed
// (its registration, now stale): the caller pruned before, so where
// nothing was in the way there is nothing more to prune, and no git runs.
func (r *Repo) clearPruned(ctx context.Context, issue, dir string) error {
	removed, err := r.clear(issue, dir)
	if err == nil && removed {
		r.prune(ctx)
	}
	return err
}

// tempMark is the file that marks a temporary directory as orchestrate's:
// only a directory that holds it is removed.
const tempMark = ".orchestrate-tmpdir"

// makeTemp makes the temporary directory of issue, marked as
// orchestrate's, or finds it made. An empty directory there is taken (a
// run killed between the making and the mark leaves one, and it holds
// nothing of anyone's); one that holds files but not the mark is in the
// way.
func (r *Repo) makeTemp(issue string) error {
	dir := r.TempDir(issue)
	err := os.Mkdir(dir, 0o755)
	if fi, lerr := os.Lstat(dir); errors.Is(err, fs.ErrExist) && lerr == nil && fi.IsDir() && !madeTemp(dir) && os.Remove(dir) == nil {
		err = os.Mkdir(dir, 0o755)
	}
	if err == nil {
		return os.WriteFile(filepath.Join(dir, tempMark), nil, 0o644)
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if !madeTemp(dir) {
		return &InTheWayError{Issue: issue, Path: dir}
	}
	return nil
}

// madeTemp reports whether dir is a temporary directory orchestrate made.
func madeTemp(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	fi, err = os.Lstat(filepath.Join(dir, tempMark))
	return err == nil && fi.Mode().IsRegular()
}

// addLock is what git worktree add writes in the locked file of the
// worktree it makes, until it is made (git runs with LC_ALL=C).
const addLock = "initializing"

// prune forgets the worktrees whose directories are gone (git worktree
// prune), first undoing what a git worktree add killed midway left in
// orchestrate's directory: its worktree, locked "initializing", which git
// worktree prune keeps, git worktree add refuses ("a missing but locked
// worktree") and git branch -D refuses to delete the branch of ("checked
// out"). Such a worktree never got its files (Add writes them once it is
// made), so it holds no one's work: its lock goes, and so does its
// directory, which the next Add makes again. A lock of anyone else's (a
// person's git worktree lock), and the lock of a worktree whose files were
// written, are kept. The caller holds r.mu and the run lock: no git
// worktree add of orchestrate's is under way.
func (r *Repo) prune(ctx context.Context) {
	locks, _ := filepath.Glob(filepath.Join(r.Common, "worktrees", "*", "locked"))
	for _, locked := range locks {
		if reason, err := readSmall(locked); err != nil || strings.TrimSpace(string(reason)) != addLock {
			continue
		}
		admin := filepath.Dir(locked)
		back, err := readSmall(filepath.Join(admin, "gitdir"))
		if err != nil {
			continue
		}
		dotGit := filepath.Clean(strings.TrimSpace(string(back)))
		dir := filepath.Dir(dotGit)
		if filepath.Base(dotGit) != ".git" || realPath(filepath.Dir(dir)) != realPath(r.Dir()) {
			continue
		}
		if t := (&Tree{Dir: dir}); t.identify(r.Common) == nil && realPath(t.gitdir) == realPath(admin) {
			// Its files written (an index), it is no killed add's: an
			// agent may work there, whoever wrote the lock.
			if !neverCheckedOut(t) || os.RemoveAll(dir) != nil {
				continue
			}
		}
		os.Remove(locked)
	}
	r.git(ctx, "worktree", "prune")
}
