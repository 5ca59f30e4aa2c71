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
	"github.com/orchestrate-dev/orchestrate/remote"
)

// TestInPlaceSaveSurvivesAClaim saves the queue as a program that writes
// in place does (VS Code, a script's open and write): it truncates the
// file, writes it up to an issue's boundary, and pauses there while a
// claim --next runs. The claim must not take the part written so far for
// the queue: every issue and the person's edit are in the file at the end,
// and the claim too.
func TestInPlaceSaveSurvivesAClaim(t *testing.T) {
	t.Parallel()
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

// TestInPlaceSaveTornInARow: a save in place paused in the middle of a
// table's row (the part written so far ends in "| Status | pend") while a
// command that reads or writes the queue runs. What was read is a torn
// part of the save, not a queue with a problem, nor one without the
// issues not yet written: the command waits for the save to end, then
// reads the whole file and does its write on it, and the person's edit
// stays.
func TestInPlaceSaveTornInARow(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("a save in place is noticed by a read lease, which Linux gives")
	}
	for _, args := range [][]string{
		{"claim", "--next", "--as", "agent-1"},
		{"issue", "set", "ISSUE-20241213-002", "Priority=high"},
		{"release", "ISSUE-20241213-001"},
		{"issue", "show", "ISSUE-20241213-003"},
		{"status", "--json"},
	} {
		t.Run(strings.Join(args[:2], "-"), func(t *testing.T) {
			ws, orch := claimWorkspace(t, t.TempDir(), 3)
			path := filepath.Join(ws, "issue_queue.md")
			if out, code := orch(nil, "claim", "ISSUE-20241213-001", "--as", "holder"); code != 0 {
				t.Fatal(out)
			}
			finish := tornSave(t, path)
			type result struct {
				out  string
				code int
			}
			done := make(chan result, 1)
			go func() {
				out, code := orch(nil, args...)
				done <- result{out, code}
			}()
			finish()
			if r := <-done; r.code != 0 {
				t.Errorf("%v during the save: exit %d\n%s", args, r.code, r.out)
			}
			got, _ := os.ReadFile(path)
			if q := queue.Parse(got); len(q.Problems) > 0 || len(q.Issues) != 3 || !bytes.Contains(got, []byte(tornNote)) {
				t.Errorf("after the save and %v: %d issues, problems %v, the note kept: %v", args, len(q.Issues), q.Problems, bytes.Contains(got, []byte(tornNote)))
			}
		})
	}
}

// TestInPlaceSaveTornInARowSynced: a save in place of a clone's queue,
// paused in an issue's heading, while run --agents --remote starts and
// syncs the queue with the remote's. What the sync pushes is the queue
// once the save ended: the shared queue has every issue, the person's
// edit and no problem, where it took the part written so far (a
// malformed ID, the issues not yet written deleted) and wedged every
// clone.
func TestInPlaceSaveTornInARowSynced(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("a save in place is noticed by a read lease, which Linux gives")
	}
	cfg := "agent:\n  command: 'id=${ORCHESTRATE_CLAIM%%:*}; echo \"$id\" > \"$id.txt\"'\n" +
		"gates:\n  - name: test\n    command: 'test -f \"$(git rev-parse --abbrev-ref HEAD | sed s,orchestrate/,,).txt\"'\n"
	bare, clones, orch := remoteProject(t, cfg, 3, 1)
	path := filepath.Join(clones[0], ".orchestrator", "issue_queue.md")
	finish := tornSave(t, path)
	run := orch[0]("run", "--agents", "1", "--remote", "origin", "--lease", "3s")
	var out syncBuffer
	run.Stdout, run.Stderr = &out, &out
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	finish()
	if err := run.Wait(); err != nil {
		t.Errorf("run --remote during the save: %v\n%s", err, out.String())
	}
	shared := gitRun(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)
	if q := queue.Parse([]byte(shared)); len(q.Problems) > 0 || len(q.Issues) != 3 || !strings.Contains(shared, tornNote) {
		t.Errorf("the shared queue: %d issues, problems %v, the note kept: %v\n%s", len(q.Issues), q.Problems, strings.Contains(shared, tornNote), out.String())
	}
}

// tornNote is what tornSave's person types above the first issue.
const tornNote = "A note the person typed at the start."

// tornSave starts a save in place of the queue at path, with tornNote above
// its first issue, as a program that writes in place does, and pauses it
// in the first issue's Status row: the file is open for writing and holds
// the part written so far. finish writes the rest after a pause (700 ms:
// what runs meanwhile meets the torn file) and closes it.
func tornSave(t *testing.T, path string) (finish func()) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := append([]byte(tornNote+"\n\n"), data...)
	cut := bytes.Index(saved, []byte("| Status | pend")) + len("| Status | pend")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(saved[:cut]); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		time.Sleep(700 * time.Millisecond) // the pause between two writes of the save
		if _, err := f.Write(saved[cut:]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
