package loop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHumanGateDiffHashRacyGit: an approval holds for the diff it was given
// on, by its hash. A same-size edit made in the second of the commit ("racy
// git": the file's stat matches what the index cached) must change the hash,
// or a person's approval would carry over to code they never saw.
func TestHumanGateDiffHashRacyGit(t *testing.T) {
	t.Parallel()
	dir, racyEdit := racyRepo(t)
	w := Workspace{Dir: filepath.Join(dir, DefaultDir)}
	before, _ := w.diffNow(context.Background(), "HEAD")
	if before == "" {
		t.Fatal("no diff hash for a clean tree")
	}

	racyEdit()
	after, stat := w.diffNow(context.Background(), "HEAD")
	if after == before {
		t.Errorf("the human gate's diff hash is unchanged (%s) after a same-size edit in the second of the commit (racy git)", after)
	}
	if !strings.Contains(stat, "a.txt") {
		t.Errorf("the human gate's diff stat misses the racy edit: %q", stat)
	}
}

// racyRepo makes a git repository whose a.txt, committed, has the same
// past mtime as the index, with ctime not trusted. racyEdit changes a.txt
// to a same-size content and gives it and the index that mtime back: "racy
// git", where only a comparison of contents sees the change.
func racyRepo(t *testing.T) (dir string, racyEdit func()) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir = t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	file := filepath.Join(dir, "a.txt")
	// A past mtime, shared by the file and the index; ctime cannot be set
	// back, so the repository does not trust it.
	mtime := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	git("init", "-q")
	git("config", "core.trustctime", "false")
	if err := os.WriteFile(file, []byte("version 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "v1")
	return dir, func() {
		t.Helper()
		if err := os.WriteFile(file, []byte("version 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{file, filepath.Join(dir, ".git", "index")} {
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
	}
}
