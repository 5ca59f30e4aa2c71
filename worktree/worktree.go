// Package worktree gives each claimed issue a git worktree of its own,
// outside the working tree, on the branch orchestrate/<issue>: by default
// in the user's data directory ($XDG_DATA_HOME/orchestrate/worktrees/
// <repository>-<hash>/<issue>, ~/.local/share when unset), not under .git/,
// where agent CLIs refuse to edit files (Claude Code: "a sensitive file").
// It makes them, merges them back (Rebase, then Advance: a fast-forward by
// compare-and-swap), removes them with every process under them, and finds
// what a killed run left. It runs git through internal/git, and imports
// no other package of the module.
package worktree

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// BranchPrefix starts the branch of every issue's worktree.
const BranchPrefix = "orchestrate/"

// Repo is a git repository seen from its main worktree.
type Repo struct {
	Root   string // the main worktree
	Common string // the git common directory (.git)
	// Base is the directory the issues' worktrees go in (see DefaultBase).
	Base string

	// mu makes the worktree commands (add, remove, prune) one at a time:
	// git's are not safe against each other (a prune drops a worktree
	// another add is making).
	mu sync.Mutex
}

// ErrNotRepo says a directory is not in a git work tree, or git is missing.
var ErrNotRepo = errors.New("not a git repository")

// Open finds the repository of dir. A linked worktree's repository is its
// main worktree's.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if !git.Installed() {
		return nil, fmt.Errorf("%w: git is not installed (it is needed to run several agents, each in its own worktree)", ErrNotRepo)
	}
	out, err := gitIn(dir).Output(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: %w (several agents work in git worktrees: run git init, and commit)", dir, ErrNotRepo)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return nil, fmt.Errorf("%s: %w: git rev-parse said %q", dir, ErrNotRepo, out)
	}
	r := &Repo{Common: lines[0], Root: lines[1]}
	if main := MainRoot(r.Root); main != "" {
		r.Root = main
	}
	r.Base = DefaultBase(r.Common)
	return r, nil
}

// DefaultBase is where the worktrees of the repository whose git common
// directory is common go: $XDG_DATA_HOME/orchestrate/worktrees/<name>-<hash
// of common>, or ~/.local/share/… when XDG_DATA_HOME is unset; under the
// common directory when there is no home.
func DefaultBase(common string) string {
	data := os.Getenv("XDG_DATA_HOME")
	if data == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return filepath.Join(common, "orchestrate", "worktrees")
		}
		data = filepath.Join(home, ".local", "share")
	}
	sum := sha256.Sum256([]byte(common))
	name := filepath.Base(filepath.Dir(common))
	return filepath.Join(data, "orchestrate", "worktrees", name+"-"+hex.EncodeToString(sum[:4]))
}

// MainRoot returns the main worktree of the linked worktree whose root is
// dir, read from its .git file and the commondir file it points to, without
// running git (the Stop hook calls it on every stop); "" when dir is not
// the root of a linked worktree, or its main worktree is bare.
func MainRoot(dir string) string {
	data, err := readSmall(filepath.Join(dir, ".git"))
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	common, err := readSmall(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitdir, c)
	}
	c = filepath.Clean(c)
	if filepath.Base(c) != ".git" {
		return "" // a bare repository, or a separate git dir: no main worktree to find
	}
	return filepath.Dir(c)
}

// readSmall reads a file of at most 4 KiB that is not a link.
func readSmall(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, fmt.Errorf("%s: not a small regular file", path)
	}
	return os.ReadFile(path)
}

// Dir is the directory of the worktrees orchestrate makes.
func (r *Repo) Dir() string { return r.Base }

// Branch is the branch of an issue's worktree.
func Branch(issue string) string { return BranchPrefix + issue }

// Tree is one worktree of an issue.
type Tree struct {
	Issue  string
	Dir    string
	Branch string

	made    fs.FileInfo // its directory as made: its device and inode
	gitFile string      // its .git file as made
	gitdir  string      // its git directory, which that file names
}

// TempDir is the worktree's own temporary directory, beside it (never in
// its tree, where git would see it).
func (r *Repo) TempDir(issue string) string {
	return filepath.Join(r.Dir(), issue+".tmp")
}

// Add makes the worktree of issue on a new branch at base (a commit). The
// work a killed run left on the issue is taken up again: its worktree as
// it is, or its branch in a new worktree.
func (r *Repo) Add(ctx context.Context, issue, base string) (*Tree, error) {
	t := &Tree{Issue: issue, Dir: filepath.Join(r.Dir(), issue), Branch: Branch(issue)}
	if err := os.MkdirAll(r.Dir(), 0o755); err != nil {
		return nil, err
	}
	if err := r.makeTemp(issue); err != nil {
		return nil, err
	}
	// Registered one at a time, with no files (--no-checkout); the files
	// are written after, each worktree's at once with the others'.
	r.mu.Lock()
	r.prune(ctx)
	r.unlockBranch(t.Branch)
	_, branchErr := r.Head(ctx, "refs/heads/"+t.Branch)
	checkout := true
	var err error
	// Its worktree as a killed run left it, when it is one: a link in its
	// place, or a directory git does not know as it, is not.
	switch left := t.identify(r.Common); {
	case left == nil && branchErr == nil:
		checkout = false // its worktree, as a killed run left it
		t.recover(ctx)
	case branchErr == nil:
		if err = r.clearPruned(ctx, issue, t.Dir); err == nil {
			_, err = r.git(ctx, "worktree", "add", "--quiet", "--no-checkout", t.Dir, t.Branch)
		}
	default:
		if err = r.clearPruned(ctx, issue, t.Dir); err == nil {
			_, err = r.git(ctx, "worktree", "add", "--quiet", "--no-checkout", "-b", t.Branch, t.Dir, base)
		}
	}
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := t.identify(r.Common); err != nil {
		return nil, err
	}
	if !checkout && neverCheckedOut(t) {
		// Left by a run killed before its files were written: no agent
		// worked there, and the work committed would delete every file.
		checkout = true
	}
	if checkout {
		if _, err := t.git().Output(ctx, "reset", "--quiet", "--hard"); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// unlockBranch removes the lock file of branch that a git killed while it
// held it (a crash, a kill of git itself) left: git refuses every change
// of the branch while it is there. The caller holds the run lock and
// r.mu: no git of orchestrate's holds it now.
func (r *Repo) unlockBranch(branch string) {
	os.Remove(filepath.Join(r.Common, "refs", "heads", filepath.FromSlash(branch)+".lock"))
}

// neverCheckedOut reports whether the worktree t has no index: made
// (git worktree add --no-checkout) but its files never written, or not
// all of them (the index is written last).
func neverCheckedOut(t *Tree) bool {
	_, err := os.Lstat(filepath.Join(t.gitdir, "index"))
	return errors.Is(err, fs.ErrNotExist)
}

// recover undoes what a git command killed in the worktree t, as a killed
// run left it, left behind: its lock files (index.lock, HEAD.lock, …; its
// branch's, see unlockBranch, are gone already), a rebase half done. The
// caller holds the run lock: no git command of orchestrate's works in it
// now.
func (t *Tree) recover(ctx context.Context) {
	locks, _ := filepath.Glob(filepath.Join(t.gitdir, "*.lock"))
	for _, l := range locks {
		os.Remove(l)
	}
	t.endRebase(ctx)
}

// endRebase ends a rebase under way in the worktree: aborted, or, where
// git cannot abort it, dropped (see dropRebase). Its git runs in the
// worktree's git directory as made (see git): the worktree's .git file is
// the agent's to rewrite.
func (t *Tree) endRebase(ctx context.Context) {
	for _, d := range []string{"rebase-merge", "rebase-apply"} {
		state := filepath.Join(t.gitdir, d)
		if _, err := os.Stat(state); err != nil {
			continue
		}
		if _, err := t.git().Output(ctx, "rebase", "--abort"); err != nil {
			t.dropRebase(ctx, state)
		}
		return
	}
}

// dropRebase ends a rebase that git cannot abort, whose state is in the
// directory state: one killed before it wrote what an abort reads (its
// head-name), which leaves every later rebase refused. A rebase moves its
// branch only at its end, and begins on a clean tree: its state is
// removed, and a HEAD it detached is put back on the branch, with the
// branch's tree.
func (t *Tree) dropRebase(ctx context.Context, state string) {
	os.RemoveAll(state)
	if _, err := t.git().Output(ctx, "symbolic-ref", "-q", "HEAD"); err == nil {
		return
	}
	if _, err := t.git().Output(ctx, "symbolic-ref", "HEAD", "refs/heads/"+t.Branch); err == nil {
		t.git().Output(ctx, "reset", "--quiet", "--hard")
	}
}

// Head returns the commit a ref names.
func (r *Repo) Head(ctx context.Context, ref string) (string, error) {
	out, err := r.git(ctx, "rev-parse", "--verify", "-q", ref+"^{commit}")
	return strings.TrimSpace(out), err
}

// CurrentBranch returns the branch the main worktree is on; an error when
// its HEAD is detached.
func (r *Repo) CurrentBranch(ctx context.Context) (string, error) {
	out, err := r.git(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	if err != nil {
		return "", fmt.Errorf("%s: HEAD is not on a branch: check out the branch the agents' work is to be merged into", r.Root)
	}
	return strings.TrimSpace(out), nil
}

// Commit commits everything in the worktree (untracked files included)
// with message, and returns the new commit; "" when there was nothing to
// commit.
func (t *Tree) Commit(ctx context.Context, message string) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	if _, err := t.git().Output(ctx, "add", "-A"); err != nil {
		return "", err
	}
	if _, err := t.git().Output(ctx, "diff", "--cached", "--quiet"); err == nil {
		return "", nil
	}
	if _, err := t.git().Output(ctx, "-c", "user.name=orchestrate", "-c", "user.email=orchestrate@localhost",
		"commit", "--quiet", "--no-verify", "-m", message); err != nil {
		return "", err
	}
	out, err := t.git().Output(ctx, "rev-parse", "HEAD")
	return strings.TrimSpace(out), err
}

// Uncommit undoes the branch's last commit, its changes kept in the
// worktree, staged (git reset --soft HEAD~1).
func (t *Tree) Uncommit(ctx context.Context) error {
	if err := t.Check(); err != nil {
		return err
	}
	_, err := t.git().Output(ctx, "reset", "--quiet", "--soft", "HEAD~1")
	return err
}

// Newest returns the newest commit of base..branch (a branch's name) whose
// message match accepts; "" when none does.
func (r *Repo) Newest(ctx context.Context, base, branch string, match func(message string) bool) (string, error) {
	out, err := r.git(ctx, "log", "-z", "--topo-order", "--format=%H%n%B", base+"..refs/heads/"+branch)
	if err != nil {
		return "", err
	}
	for _, rec := range strings.Split(out, "\x00") {
		hash, msg, _ := strings.Cut(strings.TrimLeft(rec, "\n"), "\n")
		if hash != "" && match(msg) {
			return hash, nil
		}
	}
	return "", nil
}

// Touched returns the files the commits base..branch change under path.
func (r *Repo) Touched(ctx context.Context, base, branch, path string) ([]string, error) {
	out, err := r.git(ctx, "diff", "--name-only", base+"..."+branch, "--", path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// ConflictError is a rebase that stopped on conflicts, undone.
type ConflictError struct {
	Onto  string
	Files []string // the conflicting files, sorted
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("merge conflict rebasing onto %s in %s", e.Onto, strings.Join(e.Files, ", "))
}

// RebaseOnto rebases the worktree's branch onto onto (a branch or
// commit): the commits after upstream only (git rebase --onto onto
// upstream), for a branch that was put onto another's work which it is now
// to leave; with an empty upstream, those not in onto. A conflict is
// undone (the branch stays as it was) and returned as a *ConflictError.
func (t *Tree) RebaseOnto(ctx context.Context, onto, upstream string) error {
	if err := t.Check(); err != nil {
		return err
	}
	args := []string{"-c", "user.name=orchestrate", "-c", "user.email=orchestrate@localhost", "rebase", "--quiet"}
	if upstream != "" {
		args = append(args, "--onto", onto, upstream)
	} else {
		args = append(args, onto)
	}
	_, err := t.git().Output(ctx, args...)
	if err == nil {
		return nil
	}
	out, _ := t.git().Output(ctx, "diff", "--name-only", "--diff-filter=U")
	files := strings.Fields(out)
	t.endRebase(ctx)
	if len(files) == 0 {
		return err
	}
	slices.Sort(files)
	return &ConflictError{Onto: onto, Files: files}
}

// Reapply puts the worktree's branch onto onto (a branch or commit) with
// its work on top, not committed: the commits after upstream (with an
// empty upstream, those not in onto) taken as one change and merged there
// as git cherry-pick merges, nothing staged. It returns the files whose
// changes conflict with onto's, marked in them as git marks a conflict
// (<<<<<<< … >>>>>>>), for whoever works in the worktree to resolve by
// editing them, which needs no git command; none when the work applies
// cleanly. The worktree is to be clean (its work committed). On an error
// the branch stays as it was. label names the work in the markers.
func (t *Tree) Reapply(ctx context.Context, onto, upstream, label string) ([]string, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	ident := []string{"-c", "user.name=orchestrate", "-c", "user.email=orchestrate@localhost"}
	out, err := t.git().Output(ctx, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, err
	}
	head, base := strings.TrimSpace(out), upstream
	if base == "" {
		if out, err = t.git().Output(ctx, "merge-base", head, onto); err != nil {
			return nil, err
		}
		base = strings.TrimSpace(out)
	}
	// The work as one commit on base, whose change is base..head.
	if out, err = t.git().Output(ctx, append(ident, "commit-tree", head+"^{tree}", "-p", base, "-m", label)...); err != nil {
		return nil, err
	}
	work := strings.TrimSpace(out)
	if _, err := t.git().Output(ctx, "reset", "--quiet", "--hard", onto); err != nil {
		return nil, err
	}
	_, pickErr := t.git().Output(ctx, append(ident, "cherry-pick", "--no-commit", work)...)
	out, _ = t.git().Output(ctx, "diff", "--name-only", "--diff-filter=U")
	files := strings.Fields(out)
	t.git().Output(ctx, "cherry-pick", "--quit")
	if pickErr != nil && len(files) == 0 {
		t.git().Output(ctx, "reset", "--quiet", "--hard", head)
		return nil, pickErr
	}
	// Nothing staged: the work is the worktree's changes, as an agent
	// leaves its own.
	if _, err := t.git().Output(ctx, "reset", "--quiet"); err != nil {
		t.git().Output(ctx, "reset", "--quiet", "--hard", head)
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// Snapshot writes the worktree's files as they are, untracked ones
// included (not those git ignores), as a commit on its HEAD, without
// touching its index or its branch: its work as it stands, for another
// machine to take up (see Reapply).
func (t *Tree) Snapshot(ctx context.Context, message string) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "orchestrate-index-")
	if err != nil {
		return "", err
	}
	f.Close()
	defer os.Remove(f.Name())
	index := []string{"GIT_INDEX_FILE=" + f.Name()}
	if _, err := t.git(index...).Output(ctx, "read-tree", "HEAD"); err != nil {
		return "", err
	}
	if _, err := t.git(index...).Output(ctx, "add", "-A"); err != nil {
		return "", err
	}
	tree, err := t.git(index...).Output(ctx, "write-tree")
	if err != nil {
		return "", err
	}
	out, err := t.git().Output(ctx, "-c", "user.name=orchestrate", "-c", "user.email=orchestrate@localhost",
		"commit-tree", strings.TrimSpace(tree), "-p", "HEAD", "-m", message)
	return strings.TrimSpace(out), err
}

// Marked returns those of files (relative to the worktree) that still hold
// a conflict marker: a line that starts with <<<<<<< or >>>>>>>. A file
// that is gone holds none.
func (t *Tree) Marked(files []string) []string {
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(t.Dir, filepath.FromSlash(f)))
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if bytes.HasPrefix(line, []byte("<<<<<<<")) || bytes.HasPrefix(line, []byte(">>>>>>>")) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// ErrMoved says the integration branch moved while a merge was under way.
var ErrMoved = errors.New("the branch moved meanwhile")

// Advance moves branch from old to new, which must descend from it (a
// fast-forward), by compare-and-swap: ErrMoved when branch is no longer at
// old. When the main worktree has branch checked out, its files follow
// (git merge --ff-only, which refuses to overwrite a person's changes);
// otherwise the main worktree is not touched.
func (r *Repo) Advance(ctx context.Context, branch, old, new string) error {
	if _, err := r.git(ctx, "merge-base", "--is-ancestor", old, new); err != nil {
		return fmt.Errorf("%s is not a fast-forward of %s", new, branch)
	}
	cur, _ := r.CurrentBranch(ctx)
	if cur == branch {
		head, err := r.Head(ctx, "refs/heads/"+branch)
		if err != nil {
			return err
		}
		if head != old {
			return fmt.Errorf("%s: %w (at %.12s, not %.12s)", branch, ErrMoved, head, old)
		}
		if _, err := r.git(ctx, "merge", "--quiet", "--ff-only", new); err != nil {
			return fmt.Errorf("fast-forwarding the checkout %s of %s: %w", r.Root, branch, err)
		}
		return nil
	}
	if _, err := r.git(ctx, "update-ref", "-m", "orchestrate: merge", "refs/heads/"+branch, new, old); err != nil {
		if head, herr := r.Head(ctx, "refs/heads/"+branch); herr == nil && head != old {
			return fmt.Errorf("%s: %w: %v", branch, ErrMoved, err)
		}
		return err // a lock, a permission: not a move
	}
	return nil
}

// Remove removes the worktree of issue, its branch and its temporary
// directory. Every process whose working directory is in it is killed
// first (see killUnder). keep says to leave the branch.
func (r *Repo) Remove(ctx context.Context, issue string, keepBranch bool) error {
	dir := filepath.Join(r.Dir(), issue)
	own := ours(dir, r.Common)
	if own {
		killUnder(dir)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A link an agent put in its worktree's place: the link goes, never
		// what it points to.
		if err := os.Remove(dir); err != nil {
			errs = append(errs, err)
		}
	} else if own {
		if _, err := r.git(ctx, "worktree", "remove", "--force", "--force", dir); err != nil && !ours(dir, r.Common) {
			errs = append(errs, err)
		} else if err != nil {
			// A worktree git forgot: what is left of it.
			if err := os.RemoveAll(dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	r.prune(ctx)
	r.unlockBranch(Branch(issue))
	if !keepBranch {
		if _, err := r.Head(ctx, "refs/heads/"+Branch(issue)); err == nil {
			if _, err := r.git(ctx, "branch", "-D", "--quiet", Branch(issue)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if madeTemp(r.TempDir(issue)) {
		if err := os.RemoveAll(r.TempDir(issue)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Left is a worktree a run left.
type Left struct {
	Issue string
	Dir   string // "" when only the branch is left
	// Unmerged says why it is kept: changes not committed, or commits not
	// in base; "" when nothing would be lost.
	Unmerged string
}

// Leftovers lists the worktrees and branches of orchestrate's issues in
// the repository, with what removing each would lose against base. A
// worktree directory someone deleted by hand is pruned first.
func (r *Repo) Leftovers(ctx context.Context, base string) ([]Left, error) {
	r.mu.Lock()
	r.prune(ctx)
	r.mu.Unlock()
	out, err := r.git(ctx, "for-each-ref", "--format=%(refname:short)", "refs/heads/"+BranchPrefix)
	if err != nil {
		return nil, err
	}
	issues := map[string]bool{}
	for _, b := range strings.Fields(out) {
		issues[strings.TrimPrefix(b, BranchPrefix)] = true
	}
	// In the directory, only what orchestrate made: a directory of
	// someone else's is no issue's, whatever its name.
	if ents, err := os.ReadDir(r.Dir()); err == nil {
		for _, e := range ents {
			path := filepath.Join(r.Dir(), e.Name())
			if issue, ok := strings.CutSuffix(e.Name(), ".tmp"); ok && madeTemp(path) {
				issues[issue] = true
			} else if !ok && ours(path, r.Common) {
				issues[e.Name()] = true
			}
		}
	}
	var left []Left
	for issue := range issues {
		l := Left{Issue: issue}
		dir := filepath.Join(r.Dir(), issue)
		if (&Tree{Issue: issue, Dir: dir, Branch: Branch(issue)}).identify(r.Common) == nil {
			l.Dir = dir
			if st, err := gitIn(dir).Output(ctx, "status", "--porcelain", "--untracked-files=all"); err == nil && strings.TrimSpace(st) != "" {
				l.Unmerged = "uncommitted changes"
			}
		}
		if l.Unmerged == "" {
			if n, err := r.git(ctx, "rev-list", "--count", base+".."+"refs/heads/"+Branch(issue)); err == nil && strings.TrimSpace(n) != "0" {
				l.Unmerged = strings.TrimSpace(n) + " commit(s) not merged into " + base
			}
		}
		left = append(left, l)
	}
	slices.SortFunc(left, func(a, b Left) int { return strings.Compare(a.Issue, b.Issue) })
	return left, nil
}

func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	return gitIn(r.Root).Output(ctx, args...)
}

// gitIn runs git in dir, with env added to the environment. A command
// is bounded by ctx alone: a checkout's length grows with the tree.
func gitIn(dir string, env ...string) git.Runner {
	return git.Runner{Dir: dir, Env: env, Timeout: git.NoTimeout}
}

// Checkouts returns the roots of every checkout of the repository whose
// worktree (main or linked) is at root: the main worktree and each linked
// one, from the files git keeps (the .git file, commondir, each
// worktrees/*/gitdir), without running git: a failure's signature masks
// them all, so that the same failure in two checkouts is one. nil outside
// a repository.
func Checkouts(root string) []string {
	common := filepath.Join(root, ".git")
	if fi, err := os.Lstat(common); err != nil {
		return nil
	} else if !fi.IsDir() {
		main := MainRoot(root)
		if main == "" {
			return nil
		}
		common = filepath.Join(main, ".git")
	}
	out := []string{filepath.Dir(common)}
	ents, _ := os.ReadDir(filepath.Join(common, "worktrees"))
	for _, e := range ents {
		data, err := readSmall(filepath.Join(common, "worktrees", e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		if p := strings.TrimSpace(string(data)); filepath.IsAbs(p) {
			out = append(out, filepath.Dir(p))
		}
	}
	return out
}
