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
	t.Parallel()
	bin := orchestrateBin(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, ".orchestrator")
	cleanupAnalytics(t, ws)
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
			case <-time.After(20 * time.Millisecond): // a fast typist, not a livelock
			}
			line := fmt.Sprintf("A note a person typed, number %d.", n)
			if err := editByHand(path, line); err != nil {
				errs <- fmt.Errorf("the person's edit %d, saved without the lock (fsx.Transform of %s): %w", n, path, err)
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
	if t.Failed() {
		t.Logf("the final %s:\n%s", path, data)
	}
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

// TestConcurrentRecordCheck runs record and check from several processes
// at once: every count in the files is exact afterwards.
func TestConcurrentRecordCheck(t *testing.T) {
	t.Parallel()
	bin := orchestrateBin(t)
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	cleanupAnalytics(t, ws)
	orch := func(stdin string, args ...string) (int, error) {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code != 10 && code != 11 {
			return code, fmt.Errorf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return code, nil
	}
	if _, err := orch("", "init"); err != nil {
		t.Fatal(err)
	}
	orch("", "session", "start")
	const issues, recorders, rounds, checkers, checks = 3, 3, 8, 2, 8
	for i := 0; i < issues; i++ {
		if _, err := orch("", "issue", "add", "--auto-retry", "true", "--max-retries", "1000", "--summary", fmt.Sprint("issue ", i)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	triggered := 0
	errs := make(chan error, 100)
	for r := 0; r < recorders; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for k := 0; k < rounds; k++ {
				id := fmt.Sprintf("ISSUE-20241213-%03d", k%issues+1)
				// Every output differs, so no issue ever halts.
				if _, err := orch(fmt.Sprintf("got %d-%d, want 0\n", r, k), "record", id); err != nil {
					errs <- err
				}
			}
		}(r)
	}
	for c := 0; c < checkers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < checks; k++ {
				code, err := orch("", "check")
				if err != nil {
					errs <- err
				}
				if code == 0 {
					mu.Lock()
					triggered++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	data, _ := os.ReadFile(filepath.Join(ws, "issue_queue.md"))
	q := queue.Parse(data)
	hist, _ := os.ReadFile(filepath.Join(ws, "history.csv"))
	rows := strings.Split(strings.TrimSpace(string(hist)), "\n")
	count := func(substr string) int {
		n := 0
		for _, r := range rows {
			if strings.Contains(r, substr) {
				n++
			}
		}
		return n
	}
	state, _ := os.ReadFile(filepath.Join(ws, "session_state.md"))
	if want := fmt.Sprintf("| total_auto_retries | %d |", triggered); !strings.Contains(string(state), want) {
		t.Errorf("session state lacks %q:\n%s", want, state)
	}
	if got := count(",check,,,,triggered,"); got != triggered {
		t.Errorf("history has %d triggered checks; want %d", got, triggered)
	}
	recorded := 0
	for i := 0; i < issues; i++ {
		id := fmt.Sprintf("ISSUE-20241213-%03d", i+1)
		is := q.Issue(id)
		n := count(",record," + id + ",")
		recorded += n
		// Each record brought a new signature: the ones before it are in
		// Previous-Signatures, the last is Failure-Signature.
		if got := len(is.List("Previous-Signatures")) + 1; got != n {
			t.Errorf("%s: %d signatures in the queue; want %d records", id, got, n)
		}
		if got, want := is.Int("Retry-Count", -1), count(",retry_triggered,"+id+","); got != want {
			t.Errorf("%s: Retry-Count %d; want %d retry_triggered rows", id, got, want)
		}
	}
	if recorded != recorders*rounds {
		t.Errorf("history has %d record rows; want %d", recorded, recorders*rounds)
	}
	t.Logf("%d records, %d checks of which %d triggered", recorded, checkers*checks, triggered)
}

// TestConcurrentStopHooks runs the Stop hooks of several agent sessions at
// once, each with two gates failing, while a person edits the queue by
// hand: each hook makes its records and its retry in one write of the
// queue, under the lock, so every session has its two issues with their
// exact counts, the history names the issues the queue has, and every edit
// of the person is kept.
func TestConcurrentStopHooks(t *testing.T) {
	t.Parallel()
	bin := orchestrateBin(t)
	root := t.TempDir()
	ws := filepath.Join(root, ".orchestrator")
	cleanupAnalytics(t, ws)
	orch := func(stdin string, args ...string) ([]byte, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	if _, err := orch("", "init"); err != nil {
		t.Fatal(err)
	}
	config := "gates:\n" +
		"  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n" +
		"  - name: lint\n    command: 'echo \"lint: x.go:3: y declared and not used\"; exit 1'\n"
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := orch("", "issue", "add", "--summary", "a person's"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, "issue_queue.md")
	const sessions, stops = 4, 2
	var wg sync.WaitGroup
	errs := make(chan error, sessions*stops+1)
	for s := 0; s < sessions; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			for k := 0; k < stops; k++ {
				in := fmt.Sprintf(`{"session_id":"s%d","cwd":%q,"hook_event_name":"Stop"}`, s, root)
				out, err := orch(in, "hook", "stop")
				if err == nil && !bytes.Contains(out, []byte(`"decision":"block"`)) {
					err = fmt.Errorf("session s%d, stop %d: %s; want a block", s, k+1, out)
				}
				if err != nil {
					errs <- err
				}
			}
		}(s)
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
			case <-time.After(20 * time.Millisecond):
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

	data, _ := os.ReadFile(path)
	q := queue.Parse(data)
	if len(q.Problems) > 0 {
		t.Fatalf("the queue has problems: %v", q.Problems)
	}
	if len(q.Issues) != 1+2*sessions {
		t.Errorf("the queue has %d issues; want %d", len(q.Issues), 1+2*sessions)
	}
	gateOf := map[string]string{}
	for s := 0; s < sessions; s++ {
		gates := map[string]bool{}
		for _, is := range q.Issues {
			if v, _ := is.Get("Session"); v != fmt.Sprintf("s%d", s) {
				continue
			}
			g, _ := is.Get("Gate")
			gates[g], gateOf[is.ID] = true, g
			if is.Int("Retry-Count", -1) != stops || is.Status() != "in_progress" || is.Int("Signature-Repeat-Count", -1) != stops {
				t.Errorf("%s (s%d, %s): Retry-Count %d, %s, Signature-Repeat-Count %d; want %d, in_progress, %d",
					is.ID, s, g, is.Int("Retry-Count", -1), is.Status(), is.Int("Signature-Repeat-Count", -1), stops, stops)
			}
		}
		if !gates["unit"] || !gates["lint"] || len(gates) != 2 {
			t.Errorf("session s%d's issues are of the gates %v; want unit and lint", s, gates)
		}
	}
	// The history tells of the issues the queue has: each filed once, by
	// its gate, and retried once a stop.
	hist, _ := os.ReadFile(filepath.Join(ws, "history.csv"))
	added, retried := map[string]int{}, map[string]int{}
	for _, row := range strings.Split(strings.TrimSpace(string(hist)), "\n")[1:] {
		c := strings.Split(row, ",")
		switch id := c[4]; c[3] {
		case "issue_add":
			if id != "ISSUE-20241213-001" && gateOf[id] != c[5] {
				t.Errorf("history: %s filed by the gate %q; the queue says %q", id, c[5], gateOf[id])
			}
			added[id]++
		case "retry_triggered":
			retried[id]++
		}
	}
	for id := range gateOf {
		if added[id] != 1 || retried[id] != stops {
			t.Errorf("history: %s filed %d times, retried %d; want once, %d", id, added[id], retried[id], stops)
		}
	}
	if len(added) != 1+2*sessions {
		t.Errorf("history files %d issues; want %d", len(added), 1+2*sessions)
	}
	if len(personEdits) == 0 {
		t.Fatal("the person made no edit")
	}
	for _, l := range personEdits {
		if !bytes.Contains(data, []byte(l)) {
			t.Errorf("the person's edit %q is lost", l)
		}
	}
	t.Logf("%d sessions × %d stops, %d hand edits", sessions, stops, len(personEdits))
}
