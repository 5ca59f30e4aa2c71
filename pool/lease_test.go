package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// A claim is renewed every third of its lease (20 s of the default
// minute), not later: the first renewal comes a third of the way through,
// before half the lease has passed, and extends the lease by a whole
// --lease from the renewal's time.
func TestRenewAThirdOfTheLease(t *testing.T) {
	if got := renewEvery(DefaultLease); got != 20*time.Second {
		t.Errorf("the default lease is renewed every %v; want 20s", got)
	}
	w := agentsRepo(t, func(loop.Workspace) string { return "agent:\n  command: 'true'\n" }, "renewed")
	const id = "ISSUE-20241213-001"
	const lease = 1500 * time.Millisecond
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c, err := w.Claims(nil).Claim(ctx, time.Now(), id, "agent-1@here/1", lease, false)
	if err != nil {
		t.Fatal(err)
	}
	// The renewal's clock reads a whole second far ahead: its Lease-Until
	// (kept to the second) is that second plus the lease, truncated.
	far := time.Date(2030, 1, 2, 10, 0, 0, 0, time.UTC)
	renewed := make(chan time.Time, 1)
	now := func() time.Time {
		select {
		case renewed <- time.Now():
		default:
		}
		return far
	}
	p := &pool{opt: Options{Lease: lease, RunOptions: loop.RunOptions{Now: now}}, claims: w.Claims(nil)}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.renew(ctx, cancel, w, c)
	}()
	select {
	case at := <-renewed:
		if d := at.Sub(start); d < lease/4 || d > lease/2 {
			t.Errorf("the first renewal came %v into a %v lease; want a third of it", d.Round(time.Millisecond), lease)
		}
	case <-time.After(lease):
		t.Fatalf("no renewal within a %v lease", lease)
	}
	want := far.Add(lease).Truncate(time.Second)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l := claim.Of(loadIssue(t, w, id))
		if l.Until.Equal(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the renewal: %+v; want the lease until %s", l, want.Format(time.RFC3339))
		}
	}
	cancel(nil)
	<-done
}

// A takeover seen by the renewal stops the agent: the renewal ends its
// work with the refusal, at the first renewal after the claim was taken.
func TestRenewalSeesTheTakeover(t *testing.T) {
	w := agentsRepo(t, func(loop.Workspace) string { return "agent:\n  command: 'true'\n" }, "taken")
	const id = "ISSUE-20241213-001"
	const lease = 300 * time.Millisecond
	c, err := w.Claims(nil).Claim(context.Background(), time.Now(), id, "agent-1@here/1", lease, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Claims(nil).Claim(context.Background(), time.Now(), id, "boss", 0, true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p := &pool{opt: Options{Lease: lease, RunOptions: loop.RunOptions{Now: time.Now}}, claims: w.Claims(nil)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.renew(ctx, cancel, w, c)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the renewal went on after the claim was taken over")
	}
	if err := context.Cause(ctx); !errors.Is(err, claim.ErrFenced) {
		t.Errorf("the agent's work ended with %v; want the takeover's refusal", err)
	}
}
