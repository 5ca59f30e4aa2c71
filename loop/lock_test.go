package loop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// The workspace lock keeps the rules that span files: the compare-and-swap
// of each file keeps that file whole, but only the lock makes a check's
// read of session_state.md, its queue update and its history rows one
// step, and a record's queue update and its history row another. These
// tests run the steps at once, as a cron check, a Stop hook and recording
// gates do, and check the invariants between the files afterwards. They
// hold whatever the interleaving, so they cannot fail by timing; without
// the lock they fail.

// word spells n in letters: signature normalization keeps letters, so
// each n gives its own signature.
func word(n int) string {
	var b strings.Builder
	for {
		b.WriteByte(byte('a' + n%26))
		n /= 26
		if n == 0 {
			return b.String()
		}
	}
}

// historyOf reads history.csv: its text columns and the attempt of each
// row, by the names of its header.
func historyOf(t *testing.T, w Workspace) []analytics.Event {
	t.Helper()
	rows := historyRows(t, w)
	if len(rows) == 0 {
		t.Fatal("history.csv has no header")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var events []analytics.Event
	for i, r := range rows[1:] {
		e := analytics.Event{RunID: r[col["run_id"]], Event: r[col["event"]], IssueID: r[col["issue_id"]],
			Gate: r[col["gate"]], Outcome: r[col["outcome"]], Signature: r[col["signature"]], Detail: r[col["detail"]]}
		if a := r[col["attempt"]]; a != "" {
			n, err := strconv.Atoi(a)
			if err != nil {
				t.Fatalf("history.csv row %d: attempt %q", i+2, a)
			}
			e.Attempt = n
		}
		events = append(events, e)
	}
	return events
}

// TestLockGlobalCapConcurrentChecks: checks at once (a cron check while a
// run checks) never take total_auto_retries past global_cap, and each
// triggered check counts once in session_state.md, in history.csv and in
// the Retry-Counts of the queue. Each round starts one short of the cap and
// sends every worker's issue back to pending (as a gate's failure does)
// right before its check, so that each round is a race for the last retry.
func TestLockGlobalCapConcurrentChecks(t *testing.T) {
	t.Parallel()
	const workers, rounds, capacity = 6, 15, 3
	var b strings.Builder
	b.WriteString("# Queue\n\n")
	for i := 1; i <= workers; i++ {
		b.WriteString(issueText(fmt.Sprintf("ISSUE-20241213-%03d", i),
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "1000"))
	}
	w := ruleWorkspace(t, "retry:\n  global_cap: "+strconv.Itoa(capacity)+"\n  halt_after_identical: 1000\n", b.String())
	ctx := context.Background()

	triggered, retried := 0, 0
	for round := 0; round < rounds; round++ {
		if err := session.Update(w.Path(StateFile), func(s *session.State) error {
			s.Set(session.TotalAutoRetries, strconv.Itoa(capacity-1))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, workers)
		roundTriggered := 0
		for i := 1; i <= workers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				id := fmt.Sprintf("ISSUE-20241213-%03d", i)
				if _, err := w.Record(ctx, ruleNow, id, Failure{Output: []byte("failed " + word(round*100+i))}); err != nil {
					errs <- err
					return
				}
				res, err := w.Check(ctx, ruleNow)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if res.Outcome == CheckTriggered {
					roundTriggered++
					retried += len(res.Retried)
				}
				mu.Unlock()
			}(i)
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		s, err := session.Load(w.Path(StateFile))
		if err != nil {
			t.Fatal(err)
		}
		total := s.TotalAutoRetries()
		if total > capacity {
			t.Fatalf("global cap under concurrent checks, round %d: total_auto_retries %d; want at most global_cap %d", round+1, total, capacity)
		}
		if total != capacity-1+roundTriggered {
			t.Fatalf("round %d: total_auto_retries %d; want %d, one for each check that triggered", round+1, total, capacity-1+roundTriggered)
		}
		triggered += roundTriggered
		// Leave the issues in progress, as the agent would have them.
	}

	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, is := range q.Issues {
		sum += is.Int(queue.FieldRetryCount, 0)
	}
	rows, checkRows := 0, 0
	for _, e := range historyOf(t, w) {
		switch {
		case e.Event == analytics.EventRetryTriggered:
			rows++
		case e.Event == analytics.EventCheck && e.Outcome == CheckTriggered:
			checkRows++
		}
	}
	if sum != retried || rows != retried || checkRows != triggered {
		t.Errorf("Retry-Counts add up to %d, history has %d retry_triggered rows and %d triggered checks; want %d retries in %d checks",
			sum, rows, checkRows, retried, triggered)
	}
}

// TestLockRetryCountMatchesHistory: with records and checks at once on the
// same issues, history.csv tells each issue's story in the order the queue
// lived it: its retry_triggered rows count 1, 2, 3... up to its
// Retry-Count, each record row carries the Retry-Count of its time, and
// the repeat counts of a signature's records go 1, 2, 3... as
// Signature-Repeat-Count did.
func TestLockRetryCountMatchesHistory(t *testing.T) {
	t.Parallel()
	const issues, recorders, checkers, rounds = 2, 3, 2, 15
	var b strings.Builder
	b.WriteString("# Queue\n\n")
	for i := 1; i <= issues; i++ {
		b.WriteString(issueText(fmt.Sprintf("ISSUE-20241213-%03d", i),
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "1000"))
	}
	w := ruleWorkspace(t, "retry:\n  global_cap: 1000\n  halt_after_identical: 1000\n", b.String())
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make(chan error, (recorders+checkers)*rounds)
	for r := 0; r < recorders; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for k := 0; k < rounds; k++ {
				id := fmt.Sprintf("ISSUE-20241213-%03d", k%issues+1)
				// The same failure each time: Signature-Repeat-Count climbs.
				if _, err := w.Record(ctx, ruleNow, id, Failure{Output: []byte("unit: got 3, want 4")}); err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	for c := 0; c < checkers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < rounds; k++ {
				if _, err := w.Check(ctx, ruleNow); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	type story struct{ attempt, repeat, records int }
	seen := map[string]*story{}
	for i, e := range historyOf(t, w) {
		if e.IssueID == "" {
			continue
		}
		st := seen[e.IssueID]
		if st == nil {
			st = &story{}
			seen[e.IssueID] = st
		}
		switch e.Event {
		case analytics.EventRetryTriggered:
			if e.Attempt != st.attempt+1 {
				t.Errorf("history row %d: %s retry_triggered attempt %d after attempt %d; want %d (history out of the queue's order)",
					i+2, e.IssueID, e.Attempt, st.attempt, st.attempt+1)
			}
			st.attempt = e.Attempt
		case analytics.EventRecord:
			st.records++
			if e.Attempt != st.attempt {
				t.Errorf("history row %d: %s record at attempt %d after retry_triggered %d; want %d (history out of the queue's order)",
					i+2, e.IssueID, e.Attempt, st.attempt, st.attempt)
			}
			if want := "repeat=" + strconv.Itoa(st.repeat+1); e.Detail != want {
				t.Errorf("history row %d: %s record %q after repeat=%d; want %q (history out of the queue's order)",
					i+2, e.IssueID, e.Detail, st.repeat, want)
			}
			st.repeat++
		}
	}
	for i := 1; i <= issues; i++ {
		id := fmt.Sprintf("ISSUE-20241213-%03d", i)
		is, st := q.Issue(id), seen[id]
		if st == nil {
			t.Errorf("%s has no history", id)
			continue
		}
		if rc := is.Int(queue.FieldRetryCount, -1); rc != st.attempt {
			t.Errorf("%s: Retry-Count %d in the queue; history.csv's last retry_triggered says %d", id, rc, st.attempt)
		}
		if n := is.Int(queue.FieldSignatureRepeatCount, -1); n != st.records {
			t.Errorf("%s: Signature-Repeat-Count %d in the queue; history.csv has %d records", id, n, st.records)
		}
	}
}

// TestLockHeldWaits: every read-modify-write of the workspace waits for
// the lock. With the lock held elsewhere (another process's check), each
// gives up when its context ends, and no file has changed: the outcome
// does not depend on how long anything takes.
func TestLockHeldWaits(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'exit 1'\n", "# Queue\n\n"+issueText("ISSUE-20241213-001",
		"Status", "pending", "Auto-Retry", "true", "Retry-Count", "0", "Max-Retries", "10", "Session", "s"))
	files := []string{QueueFile, StateFile, HistoryFile}
	before := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(w.Path(f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = string(data)
	}
	unlock, err := w.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for _, op := range []struct {
		name string
		fn   func(ctx context.Context) error
	}{
		{"check", func(ctx context.Context) error { _, err := w.Check(ctx, ruleNow); return err }},
		{"record", func(ctx context.Context) error {
			_, err := w.Record(ctx, ruleNow, "ISSUE-20241213-001", Failure{Output: []byte("x")})
			return err
		}},
		{"a Stop hook's batch", func(ctx context.Context) error {
			b, err := w.beginBatch(ctx)
			if err == nil {
				b.unlock()
			}
			return err
		}},
		{"issue retry", func(ctx context.Context) error { return w.Retry(ctx, ruleNow, "ISSUE-20241213-001") }},
		{"issue skip", func(ctx context.Context) error { return w.Skip(ctx, ruleNow, "ISSUE-20241213-001") }},
		{"session start", func(ctx context.Context) error { _, err := w.StartSession(ctx, ruleNow); return err }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := op.fn(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with the workspace lock held elsewhere: %v; want it to wait for the lock until its context ends", op.name, err)
		}
	}
	for _, f := range files {
		if data, _ := os.ReadFile(w.Path(f)); string(data) != before[f] {
			t.Errorf("%s changed while the lock was held elsewhere", f)
		}
	}
}

// TestRunLockOfAGoneRun: a run killed while it starts a process leaves its
// lock's file open in that process for a moment (until its program runs):
// the next run waits that moment out when the run the lock names is gone,
// and refuses at once when it lives.
func TestRunLockOfAGoneRun(t *testing.T) {
	t.Parallel()
	w := ruleWorkspace(t, "gates:\n  - name: unit\n    command: 'exit 1'\n", "# Queue\n\n")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		pid   int
		taken bool
	}{{"gone", gone.Process.Pid, true}, {"alive", os.Getpid(), false}} {
		t.Run(c.name, func(t *testing.T) {
			f, err := os.OpenFile(w.Path(RunLockFile), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(f, "%d orchestrate run\n", c.pid)
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			// The process that keeps the file open: it lets go soon.
			time.AfterFunc(300*time.Millisecond, func() { f.Close() })
			h, err := w.runLock()
			if taken := err == nil; taken != c.taken {
				t.Fatalf("the lock of a run %s: taken %v (%v); want %v", c.name, taken, err, c.taken)
			}
			if h != nil {
				h.Unlock()
			}
			if !c.taken && !errors.Is(err, ErrRunning) {
				t.Errorf("the lock of a run that lives: %v; want ErrRunning", err)
			}
			time.Sleep(400 * time.Millisecond) // the file let go
		})
	}
}
