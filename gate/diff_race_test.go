package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// racyRepo makes the "racy git" case deterministically: a.txt committed
// with an mtime in the past, then rewritten in place with the same size and
// given back that mtime, so that its stat matches what the index cached. The index's own
// mtime is set to that same instant, which is what git sees when the edit
// falls in the second of the commit: the entry is "racily clean" and git
// compares a.txt's content rather than trust its stat. ctime cannot be set
// back, so the repository does not trust it (core.trustctime=false); in the
// field the edit and the commit share the second and ctime matches anyway.
// With untracked, a new file makes the diff's git add --intent-to-add write
// its index.
func racyRepo(t *testing.T, untracked bool) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	file := filepath.Join(dir, "a.txt")
	git("init", "-q")
	git("config", "core.trustctime", "false")
	if err := os.WriteFile(file, []byte("version 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An instant in the past, so that nothing written while the test runs
	// shares its second by chance.
	mtime := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "v1")
	// In place (same inode), same size, same mtime: only the content differs.
	if err := os.WriteFile(file, []byte("version 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if untracked {
		if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(dir, ".git", "index")
	if err := os.Chtimes(index, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	// The setup is what git itself takes for racy: its own diff sees the edit.
	if out := git("diff", "--stat"); !strings.Contains(out, "a.txt") {
		t.Fatalf("setup: git's own diff misses the racy edit: %q", out)
	}
	return dir
}

// TestDiffRacyGit: the review diff and the human gate's diff hash both come
// from Diff, which works on a copy of the index. A same-size edit in the
// second of the commit must be in the diff however the copy's mtime falls.
func TestDiffRacyGit(t *testing.T) {
	for _, untracked := range []bool{false, true} {
		name := "tracked-only"
		if untracked {
			name = "with-untracked"
		}
		t.Run(name, func(t *testing.T) {
			dir := racyRepo(t, untracked)
			index := filepath.Join(dir, ".git", "index")
			before, err := os.Stat(index)
			if err != nil {
				t.Fatal(err)
			}
			var patch, stat strings.Builder
			if err := Diff(context.Background(), dir, "HEAD", nil, false, &patch); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(patch.String(), "-version 1\n+version 2\n") {
				t.Errorf("Diff misses a same-size edit made in the second of the commit (racy git):\n%s", patch.String())
			}
			if err := Diff(context.Background(), dir, "HEAD", nil, true, &stat); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stat.String(), "a.txt") {
				t.Errorf("Diff --stat misses the racy edit: %q", stat.String())
			}
			if untracked && !strings.Contains(patch.String(), "+++ b/new.txt") {
				t.Errorf("Diff misses the untracked file:\n%s", patch.String())
			}
			// The repository's index is left as it was, mtime included.
			after, err := os.Stat(index)
			if err != nil {
				t.Fatal(err)
			}
			if !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size() {
				t.Errorf("Diff changed the repository's index: mtime %v -> %v, size %d -> %d",
					before.ModTime(), after.ModTime(), before.Size(), after.Size())
			}
		})
	}
}

// TestDiffRacyGitStable: a diff that depends on stat timing gives a
// different answer for the same tree when the clock moves on. The same
// racy tree is diffed, the index's mtime moved a second later (as a copy
// made in the next second would have it), and diffed again: both equal.
func TestDiffRacyGitStable(t *testing.T) {
	dir := racyRepo(t, false)
	var first, second strings.Builder
	if err := Diff(context.Background(), dir, "HEAD", nil, false, &first); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, ".git", "index")
	st, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(index, later, later); err != nil {
		t.Fatal(err)
	}
	if err := Diff(context.Background(), dir, "HEAD", nil, false, &second); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() || first.String() == "" {
		t.Errorf("the diff of one tree depends on the index's mtime:\nfirst:\n%s\nsecond:\n%s", first.String(), second.String())
	}
}
