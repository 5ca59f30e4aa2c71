package loop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// queueWrites counts the times issue_queue.md is put in place in a
// workspace while fn runs: each replace (an exchange or a rename onto it)
// and each creation, as inotify sees them in the workspace directory.
func queueWrites(t *testing.T, w Workspace, fn func()) int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, w.Dir, unix.IN_MOVED_TO|unix.IN_CREATE); err != nil {
		t.Fatal(err)
	}
	fn()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(fd, buf)
		if err == unix.EAGAIN || k <= 0 {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				t.Fatal("inotify's queue overflowed")
			}
			if string(bytes.TrimRight(name, "\x00")) == QueueFile {
				n++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// TestStopHookWritesQueueOnce: a Stop hook whose two gates fail writes the
// queue once, whether it files their issues (the first stop) or records
// against them (the next ones, up to the halt): the records, the retry and
// the halt are one write, which leaves the queue as one write after another
// would (the command's scripts hold its bytes).
func TestStopHookWritesQueueOnce(t *testing.T) {
	t.Parallel()
	cfg := "gates:\n" +
		"  - name: unit\n    command: 'echo \"unit: got 3, want 4\"; exit 1'\n" +
		"  - name: lint\n    command: 'echo \"lint: x.go:3: unused variable y\"; exit 1'\n" +
		"  - name: build\n    command: 'true'\n"
	// Others' issues around the session's, one of them the build gate's.
	var others strings.Builder
	others.WriteString("# Queue\n\n")
	for i := 1; i <= 20; i++ {
		others.WriteString(issueText(fmt.Sprintf("ISSUE-20241212-%03d", i),
			"Status", "pending", "Auto-Retry", "true", "Retry-Count", "2", "Session", "other"))
	}
	w := ruleWorkspace(t, cfg, others.String())
	now := func() time.Time { return ruleNow }
	for stop, want := range []string{HookBlocked, HookBlocked, HookExhausted} {
		var res *HookResult
		n := queueWrites(t, w, func() {
			var err error
			if res, err = w.StopHook(context.Background(), now, "s"); err != nil {
				t.Fatal(err)
			}
		})
		if res.Outcome != want {
			t.Fatalf("stop %d: %s; want %s", stop+1, res.Outcome, want)
		}
		if n != 1 {
			t.Errorf("stop %d (%s, two gates failing): the queue was written %d times; want once", stop+1, res.Outcome, n)
		}
		q, err := queue.Load(w.Path(QueueFile))
		if err != nil || len(q.Problems) > 0 {
			t.Fatalf("stop %d: the queue: %v %v", stop+1, err, q.Problems)
		}
		for _, gate := range []string{"unit", "lint"} {
			a, ok := res.Gates.Issues[gate]
			if !ok {
				t.Fatalf("stop %d: no issue of %s", stop+1, gate)
			}
			is := q.Issue(a.ID)
			if want == HookBlocked && (is.Int(queue.FieldRetryCount, -1) != stop+1 || is.Status() != queue.StatusInProgress) {
				t.Errorf("stop %d: %s's issue %s: Retry-Count %d, %s; want %d, in_progress", stop+1, gate, a.ID, is.Int(queue.FieldRetryCount, -1), is.Status(), stop+1)
			}
			if want == HookExhausted && (!is.Bool(queue.FieldHalted, false) || !is.Bool(FieldEscalated, false)) {
				t.Errorf("stop %d: %s's issue %s not halted and escalated at the third identical failure", stop+1, gate, a.ID)
			}
		}
	}
	// A passing stop resolves both in one write too.
	if err := os.WriteFile(w.Path(ConfigFile), []byte("gates:\n  - name: unit\n    command: 'true'\n  - name: lint\n    command: 'true'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res *HookResult
	n := queueWrites(t, w, func() {
		var err error
		if res, err = w.StopHook(context.Background(), now, "s"); err != nil {
			t.Fatal(err)
		}
	})
	if res.Outcome != HookPassed || len(res.Gates.Resolved) != 2 || n != 1 {
		t.Errorf("the passing stop: %s, resolved %v, %d writes of the queue; want passed, 2, once", res.Outcome, res.Gates.Resolved, n)
	}
}
