package loop

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// queueLease is issue id's claim as w's queue says it.
func queueLease(t *testing.T, w Workspace, id string) claim.Lease {
	t.Helper()
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil || q.Issue(id) == nil {
		t.Fatalf("the queue of %s: %v", w.Dir, err)
	}
	return claim.Of(q.Issue(id))
}

// remoteLease is issue id's claim as the remote holds it, read through
// machine r.
func remoteLease(t *testing.T, r *remote.Remote, id string) remote.Record {
	t.Helper()
	recs, err := r.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return recs[id]
}

// A claim released on one machine is mirrored into the other machine's
// queue at the same epoch, and claimed there at the next: the queue's
// copy follows the remote's record, not only its new epochs.
func TestRemoteClaimsMirrorARelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	c0, c1 := ws[0].Claims(rs[0]), ws[1].Claims(rs[1])
	h0, h1 := claim.Holder("a", os.Getpid()), claim.Holder("b", os.Getpid()) // alive: this test
	got, err := c0.Next(ctx, ruleNow, h0, time.Minute, nil)
	if err != nil || got == nil || got.Epoch != 1 {
		t.Fatalf("machine 0's claim: %+v, %v", got, err)
	}
	if other, err := c1.Next(ctx, ruleNow, h1, time.Minute, nil); err != nil || other != nil {
		t.Fatalf("machine 1's claim of the one issue, held: %+v, %v; want none", other, err)
	}
	if l := queueLease(t, ws[1], got.ID); l.Holder != h0 || l.Epoch != 1 {
		t.Errorf("machine 1's queue shows %v; want %s at epoch 1", l, h0)
	}
	if _, err := c0.Release(ctx, ruleNow, got.ID, 1); err != nil {
		t.Fatal(err)
	}
	next, err := c1.Next(ctx, ruleNow.Add(time.Second), h1, time.Minute, nil)
	if err != nil || next == nil || next.ID != got.ID || next.Epoch != 2 {
		t.Fatalf("machine 1's claim after the release: %+v, %v; want %s at epoch 2", next, err, got.ID)
	}
}

// A claim's ref deleted on the remote (what a person does with a ref
// that holds garbage): the issue is claimed at the epoch after the one
// this machine's queue last saw, never at 1 again, where the old
// holder's writes would pass for the new holder's.
func TestRemoteClaimAfterItsRefDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 1)
	c := ws[0].Claims(rs[0])
	h := claim.Holder("a", os.Getpid())
	got, err := c.Next(ctx, ruleNow, h, time.Minute, nil)
	if err != nil || got == nil {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	if _, err := c.Release(ctx, ruleNow, got.ID, got.Epoch); err != nil {
		t.Fatal(err)
	}
	gitIn(t, bare, "update-ref", "-d", remote.Ref(got.ID))
	again, err := c.Next(ctx, ruleNow, h, time.Minute, nil)
	if err != nil || again == nil || again.Epoch != got.Epoch+1 {
		t.Fatalf("the claim after the ref was deleted: %+v, %v; want epoch %d", again, err, got.Epoch+1)
	}
	if rec := remoteLease(t, rs[0], got.ID); rec.Epoch != got.Epoch+1 {
		t.Errorf("the remote's record is at epoch %d; want %d", rec.Epoch, got.Epoch+1)
	}
}

// Its holder resolves an issue (the claim ends in the queue in the same
// write), then releases its ref: the release goes through, though the
// queue's claim already ended, and the remote's record holds no one.
func TestRemoteReleaseAfterTheResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	c := ws[0].Claims(rs[0])
	h := claim.Holder("a", os.Getpid())
	got, err := c.Next(ctx, ruleNow, h, time.Minute, nil)
	if err != nil || got == nil {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	if _, err := ws[0].Fenced(got.ID, got.Epoch).Resolve(ctx, ruleNow, got.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fenced(got.ID, got.Epoch).Release(ctx, ruleNow, got.ID, got.Epoch); err != nil {
		t.Fatalf("its holder's release after the resolution: %v", err)
	}
	if rec := remoteLease(t, rs[1], got.ID); rec.Holder != "" || rec.Epoch != got.Epoch {
		t.Errorf("the remote's record after the release: %+v; want no holder at epoch %d", rec.Lease, got.Epoch)
	}
}

// hook installs a pre-receive hook in the bare remote: a shell script
// that reads the refs pushed as git gives them (old new ref), and may
// write objects and move refs of the remote itself, as another machine's
// push would.
func hook(t *testing.T, bare, script string) {
	t.Helper()
	text := "#!/bin/sh\nunset GIT_QUARANTINE_PATH GIT_OBJECT_DIRECTORY GIT_ALTERNATE_OBJECT_DIRECTORIES\n" +
		"export GIT_AUTHOR_NAME=m GIT_AUTHOR_EMAIL=m@elsewhere GIT_COMMITTER_NAME=m GIT_COMMITTER_EMAIL=m@elsewhere\n" + script
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// lostOnce is a pre-receive hook's script (see hook): the first push of
// issue id's claim is lost to another machine's, which claimed the issue
// and released it, at epoch 1, while the push was on its way.
func lostOnce(id string) string {
	return `mark="$GIT_DIR/lost-once"
while read old new ref; do
	if [ "$ref" = refs/orchestrate/claims/` + id + ` ] && [ ! -e "$mark" ]; then
		touch "$mark"
		tree=$(git mktree </dev/null)
		rec=$(printf 'orchestrate: ` + id + ` released at epoch 1\n\nClaimed-By: \nClaimed-At: \nLease-Epoch: 1\nLease-Until: \n' | git commit-tree "$tree")
		git update-ref "$ref" "$rec"
	fi
done
`
}

// A push of claim --next lost to another machine's (its claim's ref moved
// between the fetch and the push) tries the next ready issue, in the same
// round, with no fetch of the claims again: the issue lost is not claimed
// from the remote's new record, though that record released it.
func TestRemoteClaimLostTriesTheNext(t *testing.T) {
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 1)
	addIssue(t, ws[0], ruleNow, "the next")
	first, second := "ISSUE-20241213-001", "ISSUE-20241213-002"
	hook(t, bare, lostOnce(first))
	pauses := countPauses(t) // a round more is a pause after the loss
	got, err := ws[0].Claims(rs[0]).Next(ctx, ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if err != nil || got == nil || got.ID != second || got.Epoch != 1 {
		t.Fatalf("claim --next, its push of %s lost: %+v, %v; want %s at epoch 1", first, got, err, second)
	}
	if _, err := os.Stat(filepath.Join(bare, "lost-once")); err != nil {
		t.Fatalf("the push of %s was not lost: %v", first, err)
	}
	if len(*pauses) != 0 {
		t.Errorf("the claims fetched again after the push of %s was lost (%d rounds more); want %s tried in the same round", first, len(*pauses), second)
	}
}

// A push of claim --next lost on every issue ready (here the one) fetches
// the claims again and claims from the remote's new record: the issue
// the other machine released, at the next epoch.
func TestRemoteClaimAllLostFetchesAgain(t *testing.T) {
	t.Parallel()
	bare, ws, rs := sharedClones(t, 1)
	id := "ISSUE-20241213-001"
	hook(t, bare, lostOnce(id))
	got, err := ws[0].Claims(rs[0]).Next(context.Background(), ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if err != nil || got == nil || got.ID != id || got.Epoch != 2 {
		t.Fatalf("claim --next, its one push lost: %+v, %v; want %s at epoch 2", got, err, id)
	}
}

// claim --next (and each agent of run --agents) leaves the issues that
// wait for a person: halted, out of retries, an approval request, a human
// gate's. Each of them comes first by priority; the one ready is last.
func TestClaimNextLeavesWhatWaitsForAPerson(t *testing.T) {
	t.Parallel()
	q := "# Issue Queue\n\n" +
		issueText("ISSUE-20241213-001", "Priority", "critical", "Status", "pending", "Halted", "true") +
		issueText("ISSUE-20241213-002", "Priority", "critical", "Status", "pending", "Auto-Retry", "true", "Retry-Count", "10", "Max-Retries", "10") +
		issueText("ISSUE-20241213-003", "Priority", "critical", "Status", "pending", "Type", TypeApproval) +
		issueText("ISSUE-20241213-004", "Priority", "critical", "Status", "pending", FieldGate, "review") +
		issueText("ISSUE-20241213-005", "Priority", "low", "Status", "pending", "Auto-Retry", "true", "Retry-Count", "9", "Max-Retries", "10")
	w := ruleWorkspace(t, "gates:\n  - {name: review, type: human}\n", q)
	got, err := w.Claims(nil).Next(context.Background(), ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if err != nil || got == nil || got.ID != "ISSUE-20241213-005" {
		t.Fatalf("claim --next: %v, %v; want ISSUE-20241213-005, the one ready", cmp.Or(got, &Claimed{}).ID, err)
	}
}

// A run killed between an issue's resolution and the release of its ref
// leaves the remote's record holding the issue: the next claim --next ends
// that claim once its lease lapsed (endLapsed), and not a moment before
// while its holder lives.
func TestRemoteClaimEndsALapsedClaimOfADoneIssue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 1)
	c := ws[0].Claims(rs[0])
	h := claim.Holder("a", os.Getpid()) // alive: this test
	got, err := c.Next(ctx, ruleNow, h, time.Minute, nil)
	if err != nil || got == nil {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	if _, err := ws[0].Fenced(got.ID, got.Epoch).Resolve(ctx, ruleNow, got.ID, false); err != nil {
		t.Fatal(err)
	}
	other := claim.Holder("b", os.Getpid())
	if _, err := c.Next(ctx, ruleNow.Add(59*time.Second), other, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if rec := remoteLease(t, rs[0], got.ID); rec.Holder != h {
		t.Fatalf("the record before its lease lapsed: %+v; want %s's claim kept", rec.Lease, h)
	}
	if _, err := c.Next(ctx, ruleNow.Add(61*time.Second), other, time.Minute, nil); err != nil {
		t.Fatal(err)
	}
	if rec := remoteLease(t, rs[0], got.ID); rec.Holder != "" || rec.Epoch != got.Epoch {
		t.Errorf("the record after its lease lapsed: %+v; want no holder at epoch %d", rec.Lease, got.Epoch)
	}
}

// shareThenLetGo is a holder's end of its claim got on machine w: the
// issue's status set, the queue shared, then the claim let go.
func shareThenLetGo(t *testing.T, w Workspace, r *remote.Remote, got *Claimed, status string) {
	t.Helper()
	setStatus(t, w, got.ID, status)
	syncQueue(t, w, r)
	if _, err := w.Claims(r).Release(context.Background(), ruleNow, got.ID, got.Epoch); err != nil {
		t.Fatal(err)
	}
}

// A holder shares what it did (here a halt) before it lets its claim go;
// another machine whose last sync came before both claims nothing on the
// queue as that sync left it: it syncs again, and finds the issue stuck.
func TestRemoteClaimAfterAHaltSharedBeforeTheRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	c0, c1 := ws[0].Claims(rs[0]), ws[1].Claims(rs[1])
	h0, h1 := claim.Holder("a", os.Getpid()), claim.Holder("b", os.Getpid())
	got, err := c0.Next(ctx, ruleNow, h0, time.Minute, nil)
	if err != nil || got == nil {
		t.Fatalf("machine 0's claim: %+v, %v", got, err)
	}
	if other, err := c1.Next(ctx, ruleNow, h1, time.Minute, nil); err != nil || other != nil {
		t.Fatalf("machine 1's claim of the one issue, held: %+v, %v; want none", other, err)
	}
	shareThenLetGo(t, ws[0], rs[0], got, queue.StatusStuck)
	next, err := c1.Next(ctx, ruleNow.Add(time.Second), h1, time.Minute, nil)
	if err != nil || next != nil {
		t.Fatalf("machine 1's claim after the halt and the release: %+v, %v; want none: the issue is stuck", next, err)
	}
	if st := loadAll(t, ws[1])[0].Status(); st != queue.StatusStuck {
		t.Errorf("machine 1's queue shows the issue %s; want stuck, synced", st)
	}
}

// A whole claim made and let go on another machine since this one's last
// sync (its queue never showed the holder): the issue, resolved there, is
// not claimed here on the queue that sync left; synced again, it is done.
func TestRemoteClaimAfterAWholeClaimElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	c0, c1 := ws[0].Claims(rs[0]), ws[1].Claims(rs[1])
	syncQueue(t, ws[1], rs[1])
	got, err := c0.Next(ctx, ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if err != nil || got == nil {
		t.Fatalf("machine 0's claim: %+v, %v", got, err)
	}
	shareThenLetGo(t, ws[0], rs[0], got, queue.StatusResolved)
	next, err := c1.Next(ctx, ruleNow.Add(time.Second), claim.Holder("b", os.Getpid()), time.Minute, nil)
	if err != nil || next != nil {
		t.Fatalf("machine 1's claim of the issue resolved elsewhere: %+v, %v; want none", next, err)
	}
}

// An issue let go since the last sync, left out while another issue is
// claimed in the same step, is still known as let go at the next claim:
// its release is not mirrored into the queue before a sync brings what
// its holder shared.
func TestRemoteClaimLetGoKeptAcrossAnotherClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "a second issue")
	syncQueue(t, ws[0], rs[0])
	syncQueue(t, ws[1], rs[1])
	c0, c1 := ws[0].Claims(rs[0]), ws[1].Claims(rs[1])
	h0, h1 := claim.Holder("a", os.Getpid()), claim.Holder("b", os.Getpid())
	first, err := c0.Next(ctx, ruleNow, h0, time.Minute, nil)
	if err != nil || first == nil {
		t.Fatalf("machine 0's claim: %+v, %v", first, err)
	}
	shareThenLetGo(t, ws[0], rs[0], first, queue.StatusStuck)
	other, err := c1.Next(ctx, ruleNow.Add(time.Second), h1, time.Minute, nil)
	if err != nil || other == nil || other.ID == first.ID {
		t.Fatalf("machine 1's claim: %+v, %v; want the other issue", other, err)
	}
	again, err := c1.Next(ctx, ruleNow.Add(2*time.Second), claim.Holder("c", os.Getpid()), time.Minute, nil)
	if err != nil || again != nil {
		t.Fatalf("machine 1's next claim: %+v, %v; want none: %s is stuck", again, err, first.ID)
	}
}

// An issue let go after the sync that claim --next makes when another
// was let go since the last one (errReleasedSince), and before the claims
// are fetched again, is not claimed on the queue that sync left: its
// holder shared its resolution after that sync's fetch, and the queue
// here does not know it. Machine 0 holds both issues; it lets the second
// go unresolved (a run that failed), which sends machine 1's claim to a
// sync; while that sync's push is on the remote (a post-receive hook
// waits), machine 0 resolves the first, shares it and lets it go.
// Machine 1 claims the second, and never the first at epoch 2.
func TestRemoteClaimLetGoAfterTheSyncForAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "a second issue")
	syncQueue(t, ws[0], rs[0])
	c0, c1 := ws[0].Claims(rs[0]), ws[1].Claims(rs[1])
	first, err := c0.Next(ctx, ruleNow, claim.Holder("a", os.Getpid()), time.Minute, nil)
	if err != nil || first == nil {
		t.Fatalf("machine 0's first claim: %+v, %v", first, err)
	}
	second, err := c0.Next(ctx, ruleNow, claim.Holder("b", os.Getpid()), time.Minute, nil)
	if err != nil || second == nil || second.ID == first.ID {
		t.Fatalf("machine 0's second claim: %+v, %v", second, err)
	}
	syncQueue(t, ws[0], rs[0])
	// Machine 1 knows both claims, and has a change of its own to push
	// at its next sync (an issue filed and skipped, never claimed).
	syncQueue(t, ws[1], rs[1])
	addIssue(t, ws[1], ruleNow.Add(2*time.Minute), "filed on machine 1, skipped")
	third := loadAll(t, ws[1])[2].ID
	if err := ws[1].Skip(ctx, ruleNow, third); err != nil {
		t.Fatal(err)
	}
	shareThenLetGo(t, ws[0], rs[0], second, queue.StatusPending)
	// The first push of the queue from here on waits, once on the
	// remote, until machine 0 has resolved, shared and let go the first.
	armed, pushed, done := filepath.Join(bare, "armed"), filepath.Join(bare, "pushed"), filepath.Join(bare, "done")
	post := "#!/bin/sh\nwhile read old new ref; do\n" +
		"\tif [ \"$ref\" = " + remote.QueueRef + " ] && [ -e '" + armed + "' ]; then\n" +
		"\t\trm -f '" + armed + "'; touch '" + pushed + "'\n" +
		"\t\ti=0; while [ ! -e '" + done + "' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n" +
		"\tfi\ndone\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "post-receive"), []byte(post), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(armed, nil, 0o644)
	resolved := make(chan error, 1)
	go func() {
		defer os.WriteFile(done, nil, 0o644)
		for i := 0; ; i++ {
			if _, err := os.Stat(pushed); err == nil {
				break
			}
			if i == 600 {
				resolved <- errors.New("machine 1 pushed no queue")
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		err := setStatusErr(ws[0], first.ID, queue.StatusResolved)
		if err == nil {
			err = ws[0].SyncQueue(ctx, rs[0])
		}
		if err == nil {
			_, err = ws[0].Claims(rs[0]).Release(ctx, ruleNow, first.ID, first.Epoch)
		}
		resolved <- err
	}()
	got, err := c1.Next(ctx, ruleNow.Add(time.Second), claim.Holder("c", os.Getpid()), time.Minute, nil)
	if rerr := <-resolved; rerr != nil {
		t.Fatalf("machine 0's resolution while machine 1 synced: %v", rerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != nil && got.ID == first.ID {
		t.Fatalf("machine 1 claimed %s at epoch %d, resolved and let go on machine 0 after machine 1's sync", got.ID, got.Epoch)
	}
	if got == nil || got.ID != second.ID {
		t.Errorf("machine 1's claim: %+v; want %s, let go unresolved", got, second.ID)
	}
	if rec := remoteLease(t, rs[1], first.ID); rec.Epoch != first.Epoch || rec.Holder != "" {
		t.Errorf("%s on the remote: %+v; want let go at epoch %d", first.ID, rec.Lease, first.Epoch)
	}
	syncQueue(t, ws[1], rs[1])
	for _, is := range loadAll(t, ws[1]) {
		if is.ID == first.ID && is.Status() != queue.StatusResolved {
			t.Errorf("%s on machine 1, synced: %s; want resolved", is.ID, is.Status())
		}
	}
}

// setStatusErr is setStatus, its error returned (off the test's goroutine).
func setStatusErr(w Workspace, id, status string) error {
	return w.updateIssue(context.Background(), id, func(is *queue.Issue) error {
		is.Set(queue.FieldStatus, status)
		return nil
	}, nil)
}
