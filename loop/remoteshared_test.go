package loop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

func gitInStdin(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// putSharedQueue makes data the shared queue on the bare remote, as a
// machine (or a person) that pushed it would: a commit whose tree holds it.
func putSharedQueue(t *testing.T, bare string, data []byte) string {
	t.Helper()
	blob := strings.TrimSpace(gitInStdin(t, bare, data, "hash-object", "-w", "--stdin"))
	tree := strings.TrimSpace(gitInStdin(t, bare, []byte("100644 blob "+blob+"\t"+remote.QueueFile+"\n"), "mktree"))
	args := []string{"commit-tree", tree, "-m", "a queue pushed by hand"}
	if old := strings.TrimSpace(gitIn(t, bare, "for-each-ref", "--format=%(objectname)", remote.QueueRef)); old != "" {
		args = append(args, "-p", old)
	}
	sha := strings.TrimSpace(gitIn(t, bare, args...))
	gitIn(t, bare, "update-ref", remote.QueueRef, sha)
	return sha
}

// TestSyncRefusesACorruptSharedQueue: a shared queue with problems (an ID
// given twice) is not taken: the sync is refused with a line naming the
// ref, the clone's own queue is left as it was, and nothing is pushed on.
func TestSyncRefusesACorruptSharedQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile) + "\n"
	i := strings.Index(shared, "## ISSUE-")
	corrupt := []byte(shared + "\n" + shared[i:])
	sha := putSharedQueue(t, bare, corrupt)

	addIssue(t, ws[1], ruleNow.Add(time.Minute), "machine 1")
	before, _ := os.ReadFile(ws[1].Path(QueueFile))
	err := ws[1].SyncQueue(ctx, rs[1])
	if err == nil || !strings.Contains(err.Error(), remote.QueueRef) || strings.Contains(strings.TrimSpace(err.Error()), "\n") {
		t.Fatalf("the sync with a corrupt shared queue: %v; want one line that names %s", err, remote.QueueRef)
	}
	after, _ := os.ReadFile(ws[1].Path(QueueFile))
	if !bytes.Equal(before, after) {
		t.Errorf("the clone's queue changed:\n%s\nwas\n%s", after, before)
	}
	if q := queue.Parse(after); len(q.Problems) > 0 {
		t.Errorf("the clone's queue has problems after the sync: %v", q.Problems)
	}
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", remote.QueueRef)); got != sha {
		t.Errorf("the shared queue moved to %s: the clone pushed on what it was refused", got)
	}
	// Once the remote holds a good queue again, the sync goes through.
	putSharedQueue(t, bare, []byte(shared))
	if err := ws[1].SyncQueue(ctx, rs[1]); err != nil {
		t.Fatalf("the sync once the shared queue is repaired: %v", err)
	}
}

// TestSyncKeepsAHandEditOfAnIssueWorkedElsewhere: a person changes a
// field and adds one, by hand, on clone 0, on an issue clone 1 worked
// meanwhile at a greater epoch (its claim, its counters and a section of
// its text). The sync merges the two by field name: the person's fields
// are kept, and so is clone 1's work, here and on the remote.
func TestSyncKeepsAHandEditOfAnIssueWorkedElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	syncQueue(t, ws[1], rs[1])
	const id = "ISSUE-20241213-001"
	if err := ws[1].updateIssue(ctx, id, func(is *queue.Issue) error {
		is.Set(queue.FieldClaimedBy, "agent@elsewhere/1")
		is.Set(queue.FieldLeaseEpoch, "3")
		is.Set(queue.FieldRetryCount, "2")
		is.Set(queue.FieldStatus, queue.StatusInProgress)
		is.SetSection("Last failure", "FAIL: TestX (worked on machine 1)")
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	syncQueue(t, ws[1], rs[1])

	// The person's edit on clone 0, by hand: a priority, and a new field.
	path := ws[0].Path(QueueFile)
	data, _ := os.ReadFile(path)
	edited := bytes.Replace(data, []byte("| Priority | medium |\n"), []byte("| Priority | critical |\n| Owner | alice |\n"), 1)
	if bytes.Equal(edited, data) {
		t.Fatalf("no Priority row in\n%s", data)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	syncQueue(t, ws[0], rs[0])

	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)
	for where, text := range map[string]string{"clone 0": mustRead(t, path), "the remote": shared} {
		q := queue.Parse([]byte(text))
		is := q.Issue(id)
		if is == nil {
			t.Fatalf("%s: no %s in\n%s", where, id, text)
		}
		for _, f := range []struct{ name, want string }{
			{queue.FieldPriority, "critical"}, {"Owner", "alice"}, // the person's
			{queue.FieldLeaseEpoch, "3"}, {queue.FieldRetryCount, "2"}, {queue.FieldStatus, queue.StatusInProgress}, // clone 1's
		} {
			if got, _ := is.Get(f.name); got != f.want {
				t.Errorf("%s: %s = %q; want %q", where, f.name, got, f.want)
			}
		}
		if !strings.Contains(text, "worked on machine 1") {
			t.Errorf("%s: clone 1's section is lost", where)
		}
		if t.Failed() {
			t.Logf("%s:\n%s", where, text)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSyncNeverReplacesAnIssueByAnotherOfItsID: on clone 0 a person
// deletes an issue by hand and files a new one, which is given the ID
// freed; clone 1 works the old issue meanwhile. The sync keeps both: the
// old issue as clone 1 left it, the new one under an ID of its own.
func TestSyncNeverReplacesAnIssueByAnotherOfItsID(t *testing.T) {
	t.Parallel()
	bare, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[1], ruleNow.Add(time.Minute), "clone 1's open issue")
	syncQueue(t, ws[1], rs[1])
	syncQueue(t, ws[0], rs[0])
	const id = "ISSUE-20241213-002"
	setStatus(t, ws[1], id, queue.StatusInProgress)
	syncQueue(t, ws[1], rs[1])

	path := ws[0].Path(QueueFile)
	data := mustRead(t, path)
	i := strings.Index(data, "## "+id)
	if i < 0 {
		t.Fatalf("no %s in\n%s", id, data)
	}
	if err := os.WriteFile(path, []byte(data[:i]), 0o644); err != nil {
		t.Fatal(err)
	}
	addIssue(t, ws[0], ruleNow.Add(2*time.Minute), "clone 0's new issue")
	if q, _ := queue.Load(path); q.Issue(id) == nil {
		t.Fatalf("the new issue did not get the freed ID %s:\n%s", id, mustRead(t, path))
	}
	syncQueue(t, ws[0], rs[0])
	syncQueue(t, ws[1], rs[1])

	for where, text := range map[string]string{
		"clone 0": mustRead(t, path), "clone 1": mustRead(t, ws[1].Path(QueueFile)),
		"the remote": gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile),
	} {
		q := queue.Parse([]byte(text))
		if len(q.Problems) > 0 {
			t.Errorf("%s: problems %v", where, q.Problems)
		}
		var old, fresh *queue.Issue
		for _, is := range q.Issues {
			switch s := is.Section(queue.SectionSummary); {
			case s != nil && strings.Contains(s.Body(), "clone 1's open issue"):
				old = is
			case s != nil && strings.Contains(s.Body(), "clone 0's new issue"):
				fresh = is
			}
		}
		switch {
		case old == nil || fresh == nil:
			t.Errorf("%s: the old issue %v, the new one %v; want both:\n%s", where, old != nil, fresh != nil, text)
		case old.ID != id || old.Status() != queue.StatusInProgress || fresh.ID == id:
			t.Errorf("%s: the old issue is %s (%s), the new one %s; want %s in_progress, and another ID", where, old.ID, old.Status(), fresh.ID, id)
		}
	}
}

// TestTakenOverOnTheRemoteFencedHere: machine 1 takes over machine 0's
// claim on the remote. Machine 0's holder, told so when it renews, is
// fenced in machine 0's queue too; and what it wrote there before it knew
// is not pushed by machine 0's next sync.
func TestTakenOverOnTheRemoteFencedHere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	syncQueue(t, ws[0], rs[0])
	syncQueue(t, ws[1], rs[1])
	const id = "ISSUE-20241213-001"
	now := ruleNow.Add(time.Minute)
	a, err := ws[0].Claims(rs[0]).Claim(ctx, now, id, "a1@elsewhere/1", time.Hour, false)
	if err != nil || a.Epoch != 1 {
		t.Fatalf("machine 0's claim: %+v, %v", a, err)
	}
	syncQueue(t, ws[0], rs[0])
	if b, err := ws[1].Claims(rs[1]).Claim(ctx, now, id, "b1@elsewhere/2", time.Hour, true); err != nil || b.Epoch != 2 {
		t.Fatalf("machine 1's takeover: %+v, %v", b, err)
	}
	old := ws[0].Fenced(id, 1)
	// Before it knows: a write at its epoch, which only the remote can
	// refuse.
	if err := old.updateIssue(ctx, id, func(is *queue.Issue) error { is.Set(queue.FieldRetryCount, "7"); return nil }, nil); err != nil {
		t.Fatalf("the old holder's write before it knew: %v", err)
	}
	if _, err := ws[0].Claims(rs[0]).Fenced(id, 1).Renew(ctx, now, id, "a1@elsewhere/1", 1, time.Hour); !errors.Is(err, claim.ErrFenced) {
		t.Fatalf("the old holder's renewal: %v; want it fenced", err)
	}
	err = old.updateIssue(ctx, id, func(is *queue.Issue) error { is.Set(queue.FieldStatus, queue.StatusResolved); return nil }, nil)
	if !errors.Is(err, claim.ErrFenced) {
		t.Errorf("the old holder's write once it knew: %v; want it fenced", err)
	}
	syncQueue(t, ws[0], rs[0])
	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)
	is := queue.Parse([]byte(shared)).Issue(id)
	if got, _ := is.Get(queue.FieldRetryCount); got == "7" || is.Status() == queue.StatusResolved {
		t.Errorf("the old holder's writes were pushed: Retry-Count %q, Status %q:\n%s", got, is.Status(), shared)
	}
}

// TestTakenOverHereSharesTheNewHoldersWrites: machine 1's holder claims
// an issue, syncs, and lets it go; machine 0 claims it next (epoch 2),
// and writes as its holder (a launch counted) before its next sync. That
// sync shares the write: machine 0's last sync saw machine 1's claim,
// but the changes since are the new holder's own, not an old holder's
// fenced ones. They were undone, and the issue got launches past its
// budget on the other machine.
func TestTakenOverHereSharesTheNewHoldersWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	const id = "ISSUE-20241213-001"
	now := ruleNow.Add(time.Minute)
	b, err := ws[1].Claims(rs[1]).Claim(ctx, now, id, "b1@elsewhere/2", time.Hour, false)
	if err != nil || b.Epoch != 1 {
		t.Fatalf("machine 1's claim: %+v, %v", b, err)
	}
	syncQueue(t, ws[1], rs[1])
	syncQueue(t, ws[0], rs[0])
	if _, err := ws[1].Claims(rs[1]).Fenced(id, 1).Release(ctx, now, id, 1); err != nil {
		t.Fatalf("machine 1's release: %v", err)
	}
	syncQueue(t, ws[1], rs[1])
	a, err := ws[0].Claims(rs[0]).Claim(ctx, now, id, "a1@elsewhere/1", time.Hour, false)
	if err != nil || a.Epoch != 2 {
		t.Fatalf("machine 0's claim: %+v, %v", a, err)
	}
	if err := ws[0].Fenced(id, 2).updateIssue(ctx, id, func(is *queue.Issue) error { is.Set(queue.FieldLaunchCount, "1"); return nil }, nil); err != nil {
		t.Fatalf("machine 0's holder's write: %v", err)
	}
	syncQueue(t, ws[0], rs[0])
	shared := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)
	if got, _ := queue.Parse([]byte(shared)).Issue(id).Get(queue.FieldLaunchCount); got != "1" {
		t.Errorf("machine 0's holder's write was not shared: Launch-Count %q:\n%s", got, shared)
	}
}
