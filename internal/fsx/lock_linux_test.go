package fsx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A command started while this process waits for a lock does not inherit
// the waiter's descriptor of the lock file. Inherited, it shared the open
// file, so that the lock, once the wait got it, stayed held while the
// command ran, after this process died holding it: the next run waited
// minutes for a lock no living orchestrate held.
func TestLockWaitNotInherited(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waited := make(chan error, 1)
	go func() {
		release, err := Lock(ctx, path)
		if err == nil {
			release()
		}
		waited <- err
	}()
	// Three descriptors of the lock file are open here: the holder's, the
	// waiter's own, and the one it waits on.
	for deadline := time.Now().Add(time.Minute); openedHere(t, path) < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the wait never opened the lock file")
		}
	}
	out, err := exec.Command("sh", "-c", "ls -l /proc/$$/fd").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(string(out), path) {
		t.Errorf("a command started during the wait holds the lock file open:\n%s", out)
	}
	cancel()
	<-waited
}

// openedHere counts this process's descriptors open on path.
func openedHere(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
