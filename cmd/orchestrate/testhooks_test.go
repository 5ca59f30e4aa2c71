package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// A release build (go build ./cmd/orchestrate, no tags) does not react to
// the test switches, which an agent client's project settings could set
// for its hooks: the clock stays the clock, a write is a write, and no
// step kills the command.
func TestReleaseBuildIgnoresTestSwitches(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "orchestrate")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws := t.TempDir()
	run := func(env string, args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NO_BACKGROUND=1", env)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("", "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	today := "ISSUE-" + time.Now().UTC().Format("20060102") + "-"
	for _, tc := range []struct{ env, why string }{
		{"ORCHESTRATE_NOW=1999-12-31T10:00:00Z", "forges the date of the issue's ID"},
		{"ORCHESTRATE_FAIL_WRITE=issue_queue.md", "fakes a full disk"},
		{"ORCHESTRATE_KILL_AT_STEP=1", "kills the command at its first write"},
	} {
		out, err := run(tc.env, "issue", "add", "--summary", "x")
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), today) {
			t.Errorf("%s: issue add = %q, %v; a release build %s", tc.env, out, err, tc.why)
		}
	}
	// The background refresh is not held at its start (the file it would
	// wait for never exists): the page is made.
	cmd := exec.Command(bin, "issue", "add", "--summary", "y")
	cmd.Dir, cmd.Env = ws, append(os.Environ(), "ORCHESTRATE_REFRESH_HOLD="+filepath.Join(ws, "never"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("issue add: %v\n%s", err, out)
	}
	w := loop.Workspace{Dir: filepath.Join(ws, loop.DefaultDir)}
	for start := time.Now(); refreshing(w) && time.Since(start) < 30*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	if !w.AnalyticsCurrent() {
		t.Errorf("ORCHESTRATE_REFRESH_HOLD: the page is not made; a release build holds its refresh")
	}
}
