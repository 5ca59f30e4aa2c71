package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// TestConcurrentWriters runs several orchestrate processes that set fields
// and add issues at once, while a person edits the file by hand, without
// the lock, as an editor does: every change of everyone is in the final
// file.
func TestConcurrentWriters(t *testing.T) {
	bin, err := exec.LookPath("orchestrate")
	if err != nil {
		t.Skip("orchestrate is not on PATH:", err)
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, ".orchestrator")
	orch := func(args ...string) error {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := orch("init"); err != nil {
		t.Fatal(err)
	}
	const writers, rounds, issues = 4, 12, 3
	for i := 0; i < issues; i++ {
		if err := orch("issue", "add", "--summary", fmt.Sprintf("seed %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(ws, "issue_queue.md")

	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2+1)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				id := fmt.Sprintf("ISSUE-20241213-%03d", r%issues+1)
				if err := orch("issue", "set", id, fmt.Sprintf("W%d-R%d=%d", w, r, r)); err != nil {
					errs <- err
				}
				if r%4 == 0 {
					if err := orch("issue", "add", "--summary", fmt.Sprintf("by writer %d round %d", w, r)); err != nil {
						errs <- err
					}
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	var personEdits []string
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			line := fmt.Sprintf("A note a person typed, number %d.", n)
			if err := editByHand(path, line); err != nil {
				errs <- err
				return
			}
			personEdits = append(personEdits, line)
		}
	}()
	wg.Wait()
	close(stop)
	pwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	q := queue.Parse(data)
	if len(q.Problems) > 0 {
		t.Fatalf("final queue has problems: %v", q.Problems)
	}
	wantIssues := issues + writers*((rounds+3)/4)
	if len(q.Issues) != wantIssues {
		t.Errorf("final queue has %d issues; want %d", len(q.Issues), wantIssues)
	}
	for w := 0; w < writers; w++ {
		for r := 0; r < rounds; r++ {
			id := fmt.Sprintf("ISSUE-20241213-%03d", r%issues+1)
			name := fmt.Sprintf("W%d-R%d", w, r)
			if v, _ := q.Issue(id).Get(name); v != fmt.Sprint(r) {
				t.Errorf("%s %s = %q; want %d", id, name, v, r)
			}
		}
	}
	if len(personEdits) == 0 {
		t.Fatal("the person made no edit")
	}
	for _, l := range personEdits {
		if !bytes.Contains(data, []byte(l)) {
			t.Errorf("the person's edit %q is lost", l)
		}
	}
	t.Logf("%d issues, %d field sets, %d hand edits", len(q.Issues), writers*rounds, len(personEdits))
}

// editByHand adds a line to the preamble the way a careful editor saves:
// without the tool's lock, checking on save whether the file changed since
// it was read and, if so, making its edit again on what it found (as
// fsx.Transform does). A lost change is then the tool's doing.
func editByHand(path, line string) error {
	return fsx.Transform(path, func(data []byte, _ bool) ([]byte, error) {
		i := bytes.Index(data, []byte("\n## "))
		if i < 0 {
			return nil, fmt.Errorf("no issue heading in %s", path)
		}
		return append(append(append([]byte{}, data[:i+1]...), line+"\n"...), data[i+1:]...), nil
	})
}
