package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// Diff writes the change under review in the repository at root to w: what
// `git diff base` shows of the working tree, with the untracked files that
// .gitignore does not ignore included as new files, and the paths of
// exclude (relative to root, such as the workspace directory) left out. With
// stat, it writes `git diff --stat` instead. Only root's subtree is shown.
//
// The repository's index is never written: untracked files are marked
// (git add --intent-to-add) in a copy of it. A repository without commits
// is compared with the empty tree when base is HEAD.
//
// The diff never trusts the cached stat of a file: each tracked file is
// compared by content (see distrustStat), so a same-size edit in the second
// of the commit is not missed however the copy's mtime falls ("racy git").
func Diff(ctx context.Context, root, base string, exclude []string, stat bool, w io.Writer) error {
	if root == "" {
		root = "."
	}
	g := gitIn{ctx: ctx, dir: root}
	tmp, cleanup, err := g.copyIndex()
	if err != nil {
		return err
	}
	defer cleanup()
	env := []string{"GIT_INDEX_FILE=" + tmp, "GIT_OPTIONAL_LOCKS=0"}
	// Neither the file system monitor nor the untracked cache: both let git
	// skip looking at files on the strength of what it saw before.
	noCache := []string{"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"}

	var excluded []string
	for _, ex := range exclude {
		if ex != "" && ex != "." {
			excluded = append(excluded, filepath.ToSlash(ex))
		}
	}
	// git add fails on an exclude that names an ignored path; an ignored
	// path is not added anyway.
	addExcluded := g.notIgnored(env, excluded)
	if err := g.run(env, io.Discard, append(append(noCache, "add", "--intent-to-add"), pathspecs(addExcluded)...)...); err != nil {
		return err
	}
	// After git add, which may have written the copy: dated before it, the
	// smudging of racy entries on that write would read every file once
	// more. git add changes no entry's stat without reading the file.
	if err := distrustStat(tmp); err != nil {
		return err
	}
	if base == "HEAD" {
		if base, err = g.headOrEmptyTree(); err != nil {
			return err
		}
	}
	args := append(noCache, "-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "--no-textconv")
	if stat {
		args = append(args, "--stat")
	}
	args = append(args, base)
	return g.run(env, w, append(args, pathspecs(excluded)...)...)
}

// pathspecs are the paths of a diff: root's subtree, but the excluded
// paths, taken literally.
func pathspecs(excluded []string) []string {
	paths := []string{"--", "."}
	for _, ex := range excluded {
		paths = append(paths, ":(exclude,literal)"+ex)
	}
	return paths
}

// gitIn runs git in a directory. A command is bounded by ctx alone: a
// diff reads every tracked file, and its length grows with the tree.
type gitIn struct {
	ctx context.Context
	dir string
}

// run runs git with args, env added to the environment and its stdout to
// out. Its error is a *git.Error: the command and what git said.
func (g gitIn) run(env []string, out io.Writer, args ...string) error {
	return g.runner(env).Run(g.ctx, nil, out, args...)
}

func (g gitIn) runner(env []string) git.Runner {
	return git.Runner{Dir: g.dir, Env: env, Timeout: git.NoTimeout}
}

// copyIndex copies the repository's index, for git to write in place of
// it; cleanup removes the copy.
func (g gitIn) copyIndex() (path string, cleanup func(), err error) {
	var gitIndex bytes.Buffer
	if err := g.run(nil, &gitIndex, "rev-parse", "--git-path", "index"); err != nil {
		return "", nil, err
	}
	index := strings.TrimSpace(gitIndex.String())
	if !filepath.IsAbs(index) {
		index = filepath.Join(g.dir, index)
	}
	// Beside the index, in the git directory: git never takes what is there
	// for a file of the working tree, as it may a temporary directory.
	tmpDir, err := os.MkdirTemp(filepath.Dir(index), "orchestrate-index-*")
	if err != nil {
		return "", nil, fmt.Errorf("copying the git index: %w", err)
	}
	cleanup = func() { os.RemoveAll(tmpDir) }
	tmp := filepath.Join(tmpDir, "index")
	if err := copyFile(index, tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		cleanup()
		return "", nil, fmt.Errorf("copying the git index: %w", err)
	}
	return tmp, cleanup, nil
}

// notIgnored returns the paths that .gitignore (and git's other ignore
// files) do not ignore. When git cannot tell, it returns them all: git add
// will say what is wrong.
func (g gitIn) notIgnored(env []string, paths []string) []string {
	if len(paths) == 0 {
		return nil
	}
	// One record per path, in order: source, line, pattern, path; the
	// pattern empty when none matched, "!…" when one un-ignores the path.
	out, err := g.runner(env).Input(g.ctx, strings.Join(paths, "\x00")+"\x00", "check-ignore", "--stdin", "-z", "--verbose", "--non-matching")
	if err != nil {
		return paths // exit 1: none is ignored
	}
	fields := strings.Split(out, "\x00")
	if len(fields) < 4*len(paths) {
		return paths
	}
	var keep []string
	for i, p := range paths {
		if pattern := fields[4*i+2]; pattern == "" || strings.HasPrefix(pattern, "!") {
			keep = append(keep, p)
		}
	}
	return keep
}

// headOrEmptyTree returns "HEAD", or the empty tree in a repository
// without commits, where everything is new.
func (g gitIn) headOrEmptyTree() (string, error) {
	if g.run(nil, io.Discard, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") == nil {
		return "HEAD", nil
	}
	empty, err := g.runner(nil).Input(g.ctx, "", "hash-object", "-t", "tree", "--stdin")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(empty), nil
}

// distrustStat makes git compare every file of the index at path by
// content. git trusts a file's cached stat (size, mtime, inode) only when
// the file's mtime is older than the index's own: an entry as new as the
// index is "racily clean" and its content is checked. A copy of the index
// has a new mtime, so an edit made in the second of the last commit, of the
// same size, would pass for unchanged. Dating the index to the first second
// of 1970 makes every entry racy (a zero mtime would turn the check off), so
// the diff never depends on when the files or the index were written. The
// price is reading every tracked file once per diff.
func distrustStat(path string) error {
	epoch := time.Unix(1, 0)
	if err := os.Chtimes(path, epoch, epoch); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("copying the git index: %w", err)
	}
	return nil
}

// copyFile copies the file src to dst, a new file.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
