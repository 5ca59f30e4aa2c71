package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// Remote is a git remote of a repository, where the claims are kept.
type Remote struct {
	dir  string // a directory of the repository: where git runs
	name string // the remote's name, as git remote lists it
	tree string // the empty tree, once written

	// Clock is this machine's clock (time.Now when nil): the time of each
	// record pushed, and the time the records read are compared with.
	Clock func() time.Time
}

var remoteName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$`)

// New returns the remote called name of the repository that holds dir.
// The name is a remote's (git remote add NAME URL), not a URL: this clone's
// view of the claims is kept under a ref named after it.
func New(dir, name string) (*Remote, error) {
	if !remoteName.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return nil, fmt.Errorf("--remote %q: want the name of a git remote, such as origin (git remote add NAME URL)", name)
	}
	return &Remote{dir: dir, name: name}, nil
}

// Name is the remote's name.
func (r *Remote) Name() string { return r.name }

// now reads this machine's clock.
func (r *Remote) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}

// Check says when the remote does not exist in this repository (no round
// trip).
func (r *Remote) Check(ctx context.Context) error {
	if _, err := r.git(ctx, nil, "remote", "get-url", r.name); err != nil {
		return fmt.Errorf("there is no remote %s in this repository (git remote add %s URL)", r.name, r.name)
	}
	return nil
}

// ErrLost matches every LostError.
var ErrLost = errors.New("the claim moved on the remote")

// LostError is returned by Push when the claim's ref on the remote is no
// longer the one the change was made from: another changed it meanwhile.
type LostError struct {
	Ref, Remote string
	Said        string // what the remote said, if anything: ": …"
}

func (e *LostError) Error() string {
	return fmt.Sprintf("pushing %s to %s: the claim moved on the remote meanwhile (another machine changed it)%s", e.Ref, e.Remote, e.Said)
}

func (e *LostError) Is(target error) bool { return target == ErrLost }

// pushRef moves ref on the remote from the commit from ("" when there is
// to be no ref yet) to sha, in one compare-and-swap push: a LostError
// when the ref on the remote is not from.
func (r *Remote) pushRef(ctx context.Context, ref, from, sha string) error {
	out, err := r.git(ctx, nil, "push", "--porcelain", "--atomic", "--no-verify", "--force-with-lease="+ref+":"+from, r.name, sha+":"+ref)
	if err != nil {
		// The porcelain line of the ref: "!\tSRC:DST\t[rejected] (stale info)".
		for _, line := range strings.Split(out, "\n") {
			if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[0] == "!" && strings.HasSuffix(f[1], ":"+ref) {
				reason := strings.TrimSpace(f[2])
				switch said := remoteSaid(err); {
				case strings.Contains(reason, "(stale info)"):
					// The ref the remote showed is not from.
					return &LostError{Ref: ref, Remote: r.name}
				case strings.Contains(reason, "(atomic transaction failed)"):
					// The remote's check, under its lock of the ref: the
					// ref moved after it showed it, or another push held
					// its lock.
					return &LostError{Ref: ref, Remote: r.name, Said: said}
				default:
					err = errors.New("refused: " + reason + said)
				}
			}
		}
		return r.remoteError("pushing", ref, "to", err)
	}
	return nil
}

// remoteSaid is what the remote said in err, git's error (its "remote: "
// lines), as ": what it said", or "".
func remoteSaid(err error) string {
	var gerr *git.Error
	if !errors.As(err, &gerr) || len(gerr.RemoteSaid()) == 0 {
		return ""
	}
	return ": " + strings.Join(gerr.RemoteSaid(), "; ")
}

// remoteError is err of git doing op ("fetching") on ref from or to the
// remote, on one line: what, where, and why (what git said). A remote that
// does not exist is said so.
func (r *Remote) remoteError(op, ref, prep string, err error) error {
	if _, gerr := r.git(context.Background(), nil, "remote", "get-url", r.name); gerr != nil {
		return fmt.Errorf("%s %s %s %s: there is no remote %s in this repository (git remote add %s URL)", op, ref, prep, r.name, r.name, r.name)
	}
	if gerr := (*git.Error)(nil); errors.As(err, &gerr) {
		return fmt.Errorf("%s %s %s %s: %s", op, ref, prep, r.name, gerr.Said())
	}
	return fmt.Errorf("%s %s %s %s: %w", op, ref, prep, r.name, err)
}

// fetch fetches refspec from the remote; prune removes this clone's view
// of the refs it matches that the remote no longer has. This process's
// fetches of one refspec into one repository are made one at a time (see
// fetchSlot). A fetch that failed while what it checks or writes changed
// under it is made again: git's check of what it fetched walks every
// worktree's HEAD, and a worktree that an agent's run makes or removes
// meanwhile fails it ("bad object worktrees/…/HEAD"); and a fetch of
// another process that updated the same refs first makes this one's
// update fail ("cannot lock ref …: is at … but expected …").
func (r *Remote) fetch(ctx context.Context, prune bool, refspec string) error {
	slot := fetchSlot(r.dir, refspec)
	select {
	case slot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-slot }()
	args := []string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-maintenance", "--no-recurse-submodules"}
	if prune {
		args = append(args, "--prune")
	}
	args = append(args, r.name, refspec)
	var err error
	for range fetchTries {
		before := r.fetchState(ctx, refspec)
		if _, err = r.git(ctx, nil, args...); err == nil || r.fetchState(ctx, refspec) == before {
			return err
		}
	}
	return err
}

// fetchSlots holds a slot per repository directory and refspec (see
// fetchSlot).
var fetchSlots sync.Map

// fetchSlot is the slot that this process's fetches of refspec into the
// repository at dir take in turn: two at once update the same refs, and
// the one that comes second finds them moved under it ("cannot lock ref
// 'refs/remotes/origin/main': is at … but expected …") and fails.
func fetchSlot(dir, refspec string) chan struct{} {
	slot, _ := fetchSlots.LoadOrStore(filepath.Clean(dir)+"\x00"+refspec, make(chan struct{}, 1))
	return slot.(chan struct{})
}

// fetchState is what a fetch of refspec depends on in this clone: the
// repository's worktrees, each with its HEAD, and the refs the fetch
// writes. Two states differ when a worktree was made or removed, or one of
// those refs was updated, between them. Where the repository keeps its
// refs as files (git's own way, but for reftable), it is read from them:
// each fetch is two git processes less.
func (r *Remote) fetchState(ctx context.Context, refspec string) string {
	_, dst, _ := strings.Cut(refspec, ":")
	prefix := strings.TrimSuffix(strings.TrimSuffix(dst, "*"), "/")
	if common := commonDir(ctx, r.dir); common != "" {
		if state, ok := filesState(common, prefix); ok {
			return state
		}
	}
	wt, _ := r.git(ctx, nil, "worktree", "list", "--porcelain")
	refs, _ := r.git(ctx, nil, "for-each-ref", "--format=%(objectname) %(refname)", prefix)
	return wt + "\x00" + refs
}

// commonDirs are the repositories' common directories (commonDir), by
// the directory asked from.
var commonDirs sync.Map

// commonDir is the common directory of the repository that holds dir
// (where its refs and the list of its worktrees are), asked of git once
// for each dir; "" where git cannot tell.
func commonDir(ctx context.Context, dir string) string {
	dir = filepath.Clean(dir)
	if c, ok := commonDirs.Load(dir); ok {
		return c.(string)
	}
	out, err := git.In(dir).Output(ctx, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return ""
	}
	common := strings.TrimSpace(out)
	commonDirs.Store(dir, common)
	return common
}

// filesState is fetchState read from the files of the repository whose
// common directory is common: each worktree's name and HEAD (and the
// branch it names, where that is a file), the main worktree's, the refs
// below prefix, each with its commit, and which packed-refs file there is.
// ok is false where the refs are not kept as files.
func filesState(common, prefix string) (state string, ok bool) {
	if _, err := os.Lstat(filepath.Join(common, "reftable")); !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	var b strings.Builder
	// Each file is read as git would write it, a few bytes, and nothing
	// else is: not through a link, not a FIFO, and not past stateMax.
	file := func(path string) []byte {
		data, _, err := fsx.ReadFileMax(path, stateMax)
		fmt.Fprintf(&b, "%s\x00%q\x00%v\x00", path, data, err)
		return data
	}
	head := func(dir string) {
		data := file(filepath.Join(dir, "HEAD"))
		if ref, found := strings.CutPrefix(strings.TrimSpace(string(data)), "ref: "); found && !strings.Contains(ref, "..") {
			file(filepath.Join(common, filepath.FromSlash(ref)))
		}
	}
	head(common)
	// The directories that hold the worktrees' entries, by their times:
	// a worktree made and removed again while one fetch ran (a baseline's,
	// taken beside the agents) leaves the entries as they were, not the
	// times, and git's check of that fetch walked its HEAD as it was made.
	for _, d := range []string{common, filepath.Join(common, "worktrees")} {
		if fi, err := os.Lstat(d); err == nil {
			fmt.Fprintf(&b, "%s\x00%d\x00", d, fi.ModTime().UnixNano())
		}
	}
	worktrees, err := os.ReadDir(filepath.Join(common, "worktrees"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	for _, w := range worktrees {
		head(filepath.Join(common, "worktrees", w.Name()))
	}
	b.WriteString("\x00refs\x00")
	err = filepath.WalkDir(filepath.Join(common, filepath.FromSlash(prefix)), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			file(path)
		}
		return nil
	})
	if err != nil {
		return "", false
	}
	// packed-refs is replaced whole (a lock file renamed over it): a new
	// file each time the refs packed in it change.
	if fi, err := os.Stat(filepath.Join(common, "packed-refs")); err == nil {
		var ino uint64
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = uint64(st.Ino)
		}
		fmt.Fprintf(&b, "packed\x00%d\x00%d\x00%d", ino, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String(), true
}

// stateMax is the most filesState reads of one file: a ref or a HEAD is
// one line of a few dozen bytes.
const stateMax = 4 << 10

// fetchTries is how many times fetch tries, what it depends on changing
// under it.
const fetchTries = 5

// identity is who writes orchestrate's commits on the remote, whatever
// the clone's git config says (a CI machine has none).
var identity = []string{"GIT_AUTHOR_NAME=orchestrate", "GIT_AUTHOR_EMAIL=orchestrate@localhost",
	"GIT_COMMITTER_NAME=orchestrate", "GIT_COMMITTER_EMAIL=orchestrate@localhost"}

func (r *Remote) git(ctx context.Context, stdin *strings.Reader, args ...string) (string, error) {
	return r.gitEnv(ctx, nil, stdin, args...)
}

// gitEnv runs git in the repository, with env added to its environment
// and stdin as its input (none when nil), and returns its stdout. Each
// command may talk to the remote: it is bounded by git.NetworkTimeout.
func (r *Remote) gitEnv(ctx context.Context, env []string, stdin *strings.Reader, args ...string) (string, error) {
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	var out strings.Builder
	err := git.Runner{Dir: r.dir, Env: env, Timeout: git.NetworkTimeout}.Run(ctx, in, &out, args...)
	return out.String(), err
}
