package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// TestLockWaitSaysWhoAndGivesUp holds the workspace's lock while a command
// wants it: after a second it says who holds it, and at the configured
// time it gives up with a clear error, having written nothing.
func TestLockWaitSaysWhoAndGivesUp(t *testing.T) {
	t.Parallel()
	bin := orchestrateBin(t)
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	cleanupAnalytics(t, ws)
	if out, err := exec.Command(bin, "--dir", ws, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	before, _ := os.ReadFile(filepath.Join(ws, "issue_queue.md"))
	unlock, err := fsx.Lock(context.Background(), filepath.Join(ws, ".lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	cmd := exec.Command(bin, "--dir", ws, "issue", "add", "--summary", "waits")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_LOCK_TIMEOUT=1500ms")
	out, err := cmd.CombinedOutput()
	holder := "held by pid " + strconv.Itoa(os.Getpid()) + " ("
	for _, want := range []string{
		"orchestrate: waiting for " + filepath.Join(ws, ".lock") + ": " + holder,
		"gave up waiting for the lock after 1.5s; it is held by pid " + strconv.Itoa(os.Getpid()),
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if exitOf(err) != 1 {
		t.Errorf("exit: %v; want 1", err)
	}
	if after, _ := os.ReadFile(filepath.Join(ws, "issue_queue.md")); string(after) != string(before) {
		t.Error("the queue changed")
	}

	cmd = exec.Command(bin, "--dir", ws, "issue", "add", "--summary", "waits")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_LOCK_TIMEOUT=soon")
	if out, err := cmd.CombinedOutput(); exitOf(err) != 1 || !strings.Contains(string(out), `ORCHESTRATE_LOCK_TIMEOUT="soon": not a duration`) {
		t.Errorf("a bad ORCHESTRATE_LOCK_TIMEOUT: %v\n%s", err, out)
	}
}
