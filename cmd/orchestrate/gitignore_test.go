package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// TestInitGitignore runs init in a git repository and asks git itself which
// of the workspace's files it would track: the queue, the state, the config,
// the history and a person's files; not the locks, the temporary files, the
// runs or the regenerated page.
func TestInitGitignore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	git("init", "-q")
	dir := filepath.Join(repo, loop.DefaultDir)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"--dir", dir, "init"}, nil, &out, &errb); err != nil {
		t.Fatalf("init: %v %s", err, errb.String())
	}
	if !strings.Contains(out.String(), "wrote "+filepath.Join(dir, ".gitignore")) {
		t.Errorf("init did not say it wrote .gitignore:\n%s", out.String())
	}

	tracked := []string{loop.QueueFile, loop.StateFile, loop.ConfigFile, loop.HistoryFile, loop.TaskFile,
		loop.SentinelFile, loop.PromptsDir + "/feedback.md", ".gitignore"}
	ignored := []string{loop.LockFile, loop.RunLockFile, loop.AnalyticsLockFile, loop.AnalyticsStampFile, loop.AnalyticsFile, loop.AbortFile,
		loop.RunsDir + "/20241213-100000-1/gate-results.json", loop.RunsDir + "/20241213-100000-1/agent.log",
		"." + loop.QueueFile + ".tmp123456", "." + loop.HistoryFile + ".tmp9"}
	for _, f := range append(slices.Clone(tracked), ignored...) {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); err != nil {
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(git("status", "--porcelain", "--untracked-files=all")), "\n") {
		got = append(got, strings.TrimPrefix(strings.TrimPrefix(l, "?? "), loop.DefaultDir+"/"))
	}
	slices.Sort(got)
	slices.Sort(tracked)
	if !slices.Equal(got, tracked) {
		t.Errorf("git would track %q\nwant %q", got, tracked)
	}

	// A .gitignore of one's own is kept as it is.
	mine := []byte("# mine\n")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--dir", dir, "init"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); !bytes.Equal(b, mine) {
		t.Errorf("init overwrote .gitignore: %q", b)
	}
	if !strings.Contains(out.String(), "kept  "+filepath.Join(dir, ".gitignore")) {
		t.Errorf("init did not say it kept .gitignore:\n%s", out.String())
	}
}
