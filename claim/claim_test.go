package claim

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

func parse(t *testing.T, issues ...string) *queue.Queue {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Issue Queue\n")
	for i, fields := range issues {
		fmt.Fprintf(&b, "\n## ISSUE-20260102-%03d\n\n| Field | Value |\n|-------|-------|\n", i+1)
		for _, kv := range strings.Split(fields, ";") {
			if kv = strings.TrimSpace(kv); kv != "" {
				k, v, _ := strings.Cut(kv, "=")
				fmt.Fprintf(&b, "| %s | %s |\n", k, v)
			}
		}
	}
	q := queue.Parse([]byte(b.String()))
	if len(q.Problems) > 0 {
		t.Fatal(q.Problems)
	}
	return q
}

func open(is *queue.Issue) bool { return is.Status() == queue.StatusPending || is.Status() == "" }

func ids(list []*queue.Issue) string {
	var out []string
	for _, is := range list {
		out = append(out, is.ID[len(is.ID)-3:])
	}
	return strings.Join(out, " ")
}

// Ready: priority, then age, then ID; skips closed, claimed, and issues
// whose Touches overlap a claimed one's.
func TestReadyOrder(t *testing.T) {
	q := parse(t,
		"Priority=low;Created=2026-01-01T00:00:00Z",
		"Priority=high;Created=2026-01-02T00:00:00Z",
		"Priority=high;Created=2026-01-01T00:00:00Z",
		"Priority=critical;Status=resolved",
		"Priority=critical;Claimed-By=x;Lease-Epoch=1;Lease-Until=2026-01-02T11:00:00Z;Touches=[src/api/*]",
		"Priority=critical;Touches=[src/api/handler.go]",
		"Priority=critical;Touches=[docs/**]",
		"Priority=weird",
		"",
	)
	if got, want := ids(Ready(q, t0, open)), "007 003 002 009 001 008"; got != want {
		t.Errorf("Ready = %s, want %s", got, want)
	}
}

// Ready: of two issues of one priority and age, the one whose ID sorts
// first, wherever the file has it.
func TestReadyTiesByID(t *testing.T) {
	issue := func(id string) string {
		return "\n## " + id + "\n\n| Field | Value |\n|-------|-------|\n| Priority | high |\n| Created | 2026-01-01T00:00:00Z |\n"
	}
	q := queue.Parse([]byte("# Issue Queue\n" + issue("ISSUE-20260102-002") + issue("ISSUE-20260102-001")))
	if len(q.Problems) > 0 {
		t.Fatal(q.Problems)
	}
	if got := ids(Ready(q, t0, open)); got != "001 002" {
		t.Errorf("Ready = %s, want 001 002", got)
	}
}

// A lease lapses at Until exactly, not a second later or earlier.
func TestLapsedBoundary(t *testing.T) {
	l := Lease{Holder: "a", Epoch: 1, Until: t0}
	if l.Lapsed(t0.Add(-time.Nanosecond)) {
		t.Error("lapsed before its end")
	}
	if !l.Lapsed(t0) {
		t.Error("not lapsed at its end")
	}
	if (Lease{Holder: "a"}).Lapsed(t0.Add(1000 * time.Hour)) {
		t.Error("a lease without an end lapsed")
	}
}

func TestTakeRenewRelease(t *testing.T) {
	q := parse(t, "Status=pending")
	is := q.Issues[0]
	me := Holder("a1", os.Getpid()) // alive: this test
	l, err := Take(is, me, t0, time.Minute, false)
	if err != nil || l.Epoch != 1 || !l.Until.Equal(t0.Add(time.Minute)) || !l.Since.Equal(t0) {
		t.Fatalf("Take = %+v, %v", l, err)
	}
	// Again: a renewal at the same epoch.
	if l, err = Take(is, me, t0.Add(30*time.Second), time.Minute, false); err != nil || l.Epoch != 1 || !l.Until.Equal(t0.Add(90*time.Second)) {
		t.Fatalf("Take again = %+v, %v", l, err)
	}
	// Another holder: refused while the lease runs, and after it lapsed
	// too while the holder's process lives.
	var held *HeldError
	for _, at := range []time.Time{t0, t0.Add(time.Hour)} {
		if _, err := Take(is, Holder("a2", os.Getpid()), at, time.Minute, false); !errors.As(err, &held) {
			t.Fatalf("Take by another at %v: %v", at, err)
		}
	}
	if _, err := Renew(is, me, 2, t0, time.Minute); !errors.Is(err, ErrFenced) {
		t.Errorf("Renew at a wrong epoch: %v", err)
	}
	if _, err := Renew(is, "someone", 1, t0, time.Minute); !errors.Is(err, ErrFenced) {
		t.Errorf("Renew by another: %v", err)
	}
	// force: a person's reassignment takes it with the next epoch.
	if l, err = Take(is, "boss", t0, 0, true); err != nil || l.Epoch != 2 || !l.Until.IsZero() {
		t.Fatalf("forced Take = %+v, %v", l, err)
	}
	if err := Fence(is, 1); !errors.Is(err, ErrFenced) {
		t.Errorf("Fence(1) at epoch 2: %v", err)
	}
	if err := Fence(is, 2); err != nil {
		t.Errorf("Fence(2) at epoch 2: %v", err)
	}
	if _, err := Release(is, 1); !errors.Is(err, ErrFenced) {
		t.Errorf("Release by the old holder: %v", err)
	}
	if _, err := Release(is, 2); err != nil {
		t.Fatal(err)
	}
	if l := Of(is); l.Holder != "" || l.Epoch != 2 || !l.Until.IsZero() || !l.Since.IsZero() {
		t.Errorf("after Release: %+v", l)
	}
	// Released, the issue refuses its last holder's writes too, at the
	// very epoch they carry.
	if err := Fence(is, 2); !errors.Is(err, ErrFenced) {
		t.Errorf("Fence(2) after the release of epoch 2: %v", err)
	}
	if l, _ = Take(is, me, t0, time.Minute, false); l.Epoch != 3 {
		t.Errorf("the next holder's epoch = %d, want 3", l.Epoch)
	}
}

// Gone: a process of this machine that runs is there; stopped, dead or
// never there, it is gone; a holder of another machine is left to its
// lease.
func TestGone(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	h := Holder("a", cmd.Process.Pid)
	if Gone(h) {
		t.Fatal("a running process is gone")
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
	waitFor(t, func() bool { return Gone(h) }, "a stopped process is not gone")
	syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
	waitFor(t, func() bool { return !Gone(h) }, "a continued process is gone")
	cmd.Process.Kill()
	cmd.Wait()
	if !Gone(h) {
		t.Error("a dead process is not gone")
	}
	for _, h := range []string{"alice", "a@elsewhere.invalid/1", "a@" + hostname() + "/x"} {
		if !Gone(h) {
			t.Errorf("Gone(%q) = false", h)
		}
	}
}

// A holder of this machine whose process died is free at once, under a
// lease of an hour; running or stopped, it is held until its lease lapses;
// a holder of another machine or a person is left to its lease.
func TestDeadFreeAtOnce(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	now := time.Now()
	l := Lease{Holder: Holder("a", cmd.Process.Pid), Epoch: 1, Until: now.Add(time.Hour)}
	if l.Free(now) {
		t.Fatal("a running holder's claim is free")
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGSTOP)
	waitFor(t, func() bool { return Gone(l.Holder) }, "a stopped process is not gone")
	if l.Free(now) || Dead(l.Holder) {
		t.Error("a stopped holder's claim is free before its lease lapsed")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !l.Free(now) {
		t.Error("a dead holder's claim is not free at once")
	}
	for _, h := range []string{"alice", "a@elsewhere.invalid/1"} {
		if (Lease{Holder: h, Epoch: 1, Until: now.Add(time.Hour)}).Free(now) {
			t.Errorf("%s's claim is free before its lease lapsed", h)
		}
	}
}

func hostname() string { h, _ := os.Hostname(); return h }

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(msg)
}

// Next: a holder's own open issue first (a no-op claim), else the first
// ready one; nil when nothing is.
func TestNext(t *testing.T) {
	q := parse(t, "Priority=low", "Priority=high")
	me := Holder("a1", os.Getpid())
	is, l, err := Next(q, me, t0, time.Minute, open)
	if err != nil || is == nil || is.ID != "ISSUE-20260102-002" || l.Epoch != 1 {
		t.Fatalf("Next = %v %+v %v", is, l, err)
	}
	if is2, l2, _ := Next(q, me, t0, time.Minute, open); is2 != is || l2.Epoch != 1 {
		t.Errorf("Next again = %v %+v", is2, l2)
	}
	other := Holder("a2", os.Getpid())
	if is, _, _ := Next(q, other, t0, time.Minute, open); is == nil || is.ID != "ISSUE-20260102-001" {
		t.Errorf("Next for another = %v", is)
	}
	if is, _, _ := Next(q, Holder("a3", os.Getpid()), t0, time.Minute, open); is != nil {
		t.Errorf("Next with nothing ready = %v", is.ID)
	}
}

// Candidates: the issue a holder holds first, then the ready ones in
// order, each once; the lease transitions leave the issue alone.
func TestCandidates(t *testing.T) {
	gone := "gone@elsewhere/1" // a holder on another machine: its lease decides
	q := parse(t, "Priority=low", "Priority=high", "Claimed-By="+gone+";Lease-Epoch=4;Lease-Until=2026-01-02T09:00:00Z")
	if got := ids(Candidates(q, "me", t0, open)); got != "002 003 001" {
		t.Errorf("Candidates for a holder of none = %s; want 002 003 001", got)
	}
	if got := ids(Candidates(q, gone, t0, open)); got != "003 002 001" {
		t.Errorf("Candidates for the holder of 003 = %s; want 003 002 001", got)
	}
	is := q.Issue("ISSUE-20260102-003")
	l, err := Of(is).Taken(is.ID, "me", t0, time.Minute, false)
	if err != nil || l.Epoch != 5 || l.Holder != "me" {
		t.Errorf("Taken = %+v, %v; want me at epoch 5", l, err)
	}
	if Of(is).Holder != gone {
		t.Errorf("Taken changed the issue: %+v", Of(is))
	}
	if r, err := l.Released(is.ID, 5); err != nil || r.Holder != "" || r.Epoch != 5 {
		t.Errorf("Released = %+v, %v; want no holder at epoch 5", r, err)
	}
	if _, err := l.Renewed(is.ID, "me", 4, t0, time.Minute); !errors.Is(err, ErrFenced) {
		t.Errorf("Renewed at an old epoch: %v; want ErrFenced", err)
	}
}

func TestGlobsMeet(t *testing.T) {
	for _, c := range []struct {
		x, y string
		want bool
	}{
		{"src/api/*", "src/api/handler.go", true},
		{"src/**", "src/x/y.go", true},
		{"./docs/a.md", "docs/a.md", true},
		{"docs/*", "src/*", false},
		{"*.go", "src/a.go", true}, // a leading wildcard may match anything
		{"a.go", "b.go", false},
	} {
		if got := globsMeet(c.x, c.y); got != c.want {
			t.Errorf("globsMeet(%q, %q) = %v", c.x, c.y, got)
		}
	}
}

// Choose keeps, from a look at each piece, every claimed issue, every piece
// it cannot read at a look, and the first max open issues in Ready's order,
// however the file orders them: checked against a sort of them all.
func TestChoose(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prios := []string{"critical", "high", "`medium`", "low", "", "HIGH"}
	statuses := []string{"pending", "in_progress", "resolved", "", "Pending", "stuck"}
	for trial := range 200 {
		var pieces [][]byte
		type want struct {
			head, created string
			rank          int
		}
		var open []want
		keepWant := map[string]bool{}
		var unreadable []bool
		n := rng.IntN(40)
		for i := range n {
			head := fmt.Sprintf("## ISSUE-20260102-%03d", rng.IntN(900)+i*1000)
			st, pr := statuses[rng.IntN(len(statuses))], prios[rng.IntN(len(prios))]
			created := fmt.Sprintf("2026-01-0%dT00:00:00Z", rng.IntN(3)+1)
			var b strings.Builder
			fmt.Fprintf(&b, "%s\n\n| Field | Value |\n|---|---|\n", head)
			if st != "" {
				fmt.Fprintf(&b, "| Status | %s |\n", st)
			}
			fmt.Fprintf(&b, "| Priority | %s |\n| Created | %s |\n", pr, created)
			claimed := rng.IntN(5) == 0
			if claimed {
				b.WriteString("| Claimed-By | a@h/1 |\n")
			}
			unread := rng.IntN(10) == 0
			if unread {
				b.Reset()
				fmt.Fprintf(&b, "%s\n\ntext before the table\n| Field | Value |\n|---|---|\n| Status | pending |\n", head)
			}
			pieces = append(pieces, []byte(b.String()+"\n"))
			unreadable = append(unreadable, unread)
			s := strings.ToLower(st)
			switch {
			case unread || claimed:
				keepWant[head] = true
			case s == "" || s == queue.StatusPending || s == queue.StatusInProgress:
				open = append(open, want{head: head, created: created, rank: rankOf(pr)})
			}
		}
		slices.SortStableFunc(open, func(a, b want) int {
			if c := a.rank - b.rank; c != 0 {
				return c
			}
			if c := strings.Compare(a.created, b.created); c != 0 {
				return c
			}
			return strings.Compare(a.head, b.head)
		})
		for _, max := range []int{0, 1, 2, 5, 16} {
			choose, more := Choose(max)
			var ids [][]byte
			keep := choose(func(look func([]byte) []byte) {
				for _, p := range pieces {
					ids = append(ids, look(p))
				}
			})
			wantKeep := maps.Clone(keepWant)
			for i := 0; i < len(open) && i < max; i++ {
				wantKeep[open[i].head] = true
			}
			for i, p := range pieces {
				head := string(queue.Heading(p))
				if keep(i) != wantKeep[head] {
					t.Fatalf("trial %d, max %d: %s kept %v, want %v (open in order: %v)", trial, max, head, keep(i), wantKeep[head], open)
				}
				// The look gives the ID of a piece read at a look, and
				// nothing of one it cannot read.
				if want := strings.TrimPrefix(head, "## "); unreadable[i] && ids[i] != nil || !unreadable[i] && string(ids[i]) != want {
					t.Fatalf("trial %d: the look at %s gave ID %q", trial, head, ids[i])
				}
			}
			if *more != (len(open) > max) {
				t.Fatalf("trial %d, max %d: more %v with %d open", trial, max, *more, len(open))
			}
		}
	}
}
