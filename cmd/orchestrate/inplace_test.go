package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// TestInPlaceSaveSurvivesAClaim saves the queue as a program that writes
// in place does (VS Code, a script's open and write): it truncates the
// file, writes it up to an issue's boundary, and pauses there while a
// claim --next runs. The claim must not take the part written so far for
// the queue: every issue and the person's edit are in the file at the end,
// and the claim too.
func TestInPlaceSaveSurvivesAClaim(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a save in place is noticed by a read lease, which Linux gives")
	}
	bin := orchestrateBin(t)
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	cleanupAnalytics(t, ws)
	orch := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
		return cmd
	}
	if out, err := orch("init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	const issues = 6
	for i := range issues {
		if out, err := orch("issue", "add", "--summary", fmt.Sprint("seed ", i)).CombinedOutput(); err != nil {
			t.Fatalf("issue add: %v\n%s", err, out)
		}
	}
	path := filepath.Join(ws, "issue_queue.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const note = "A note the person typed at the end."
	saved := append(bytes.Clone(data), "\n"+note+"\n"...)
	cut := bytes.Index(saved, []byte("## ISSUE-20241213-004"))

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(saved[:cut]); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	claim := orch("claim", "--next", "--as", "agent-1")
	claim.Stdout, claim.Stderr = &out, &out
	if err := claim.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the pause between two writes of the save
	if _, err := f.Write(saved[cut:]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := claim.Wait(); err != nil {
		t.Fatalf("claim --next: %v\n%s", err, &out)
	}

	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	q := queue.Parse(got)
	if len(q.Problems) > 0 || len(q.Issues) != issues {
		t.Errorf("the queue has %d issues and problems %v; want %d and none", len(q.Issues), q.Problems, issues)
	}
	if !bytes.Contains(got, []byte(note)) {
		t.Errorf("the person's edit %q is lost", note)
	}
	if !strings.Contains(string(got), "agent-1") {
		t.Errorf("the claim is not in the queue:\n%s", &out)
	}
	if t.Failed() {
		t.Logf("the queue after the save and the claim:\n%s", got)
	}
}
