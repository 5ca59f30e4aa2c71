package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
)

var t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)

const id = "ISSUE-20260102-001"

// Holders on another machine: their leases decide, not their processes.
const (
	alice = "alice@elsewhere/1"
	bob   = "bob@elsewhere/2"
)

// machines makes a bare repository, the remote, and n repositories that
// have it as origin: the machines.
func machines(t *testing.T, n int) (bare string, rs []*Remote) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, "", "init", "-q", "--bare", bare)
	for i := 0; i < n; i++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		gitIn(t, "", "init", "-q", dir)
		gitIn(t, dir, "remote", "add", "origin", bare)
		r, err := New(dir, "origin")
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return bare, rs
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func take(holder string, now time.Time, ttl time.Duration) func(Record) (claim.Lease, error) {
	return func(rec Record) (claim.Lease, error) { return rec.Lease.Taken(rec.ID, holder, now, ttl, false) }
}

// Of two machines that push from the same record, one succeeds; the
// other is told the ref moved, and then sees the winner's record.
func TestPushCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 2)
	a := claim.Lease{Holder: alice, Since: t0, Epoch: 1, Until: t0.Add(time.Minute)}
	b := claim.Lease{Holder: bob, Since: t0, Epoch: 1, Until: t0.Add(time.Minute)}
	got, err := m[0].Push(ctx, id, "", a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m[1].Push(ctx, id, "", b); !errors.Is(err, ErrLost) {
		t.Fatalf("the second push from no ref: %v; want ErrLost", err)
	}
	recs, err := m[1].Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec := recs[id]; rec.Sha != got.Sha || !rec.Lease.Equal(a) || rec.Err != nil {
		t.Fatalf("fetched %+v; want %+v", rec, got)
	}
	// A push from a record the ref moved on from loses too.
	old := got.Sha
	renewed := a
	renewed.Until = renewed.Until.Add(time.Second)
	if got, err = m[0].Push(ctx, id, old, renewed); err != nil {
		t.Fatal(err)
	}
	if _, err := m[1].Push(ctx, id, old, b); !errors.Is(err, ErrLost) {
		t.Fatalf("a push from an old record: %v; want ErrLost", err)
	}
	// A person reads the record with git log, on the remote itself.
	log := gitIn(t, bare, "log", "--format=%s%n%b", Ref(id))
	for _, want := range []string{"claimed by " + alice + " at epoch 1", "Claimed-By: " + alice, "Lease-Epoch: 1", "Lease-Until: 2026-01-02T10:01:01Z", "Claimed-At: 2026-01-02T10:00:00Z"} {
		if !strings.Contains(log, want) {
			t.Errorf("git log %s:\n%s\nwant %q in it", Ref(id), log, want)
		}
	}
	if n := gitIn(t, bare, "rev-list", "--count", Ref(id)); n != "1" {
		t.Errorf("the record has %s commits; want 1 (no parent)", n)
	}
}

// A claim, its renewals and its release move one ref; a lapsed lease is
// taken over with the next epoch, and its old holder's renewal is then
// refused as fenced; a release keeps the epoch.
func TestChangeLifecycle(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 2)
	rec, err := m[0].Change(ctx, id, take(alice, t0, time.Minute))
	if err != nil || rec.Epoch != 1 || rec.Holder != alice {
		t.Fatalf("claim: %+v, %v", rec, err)
	}
	if _, err := m[1].Change(ctx, id, take(bob, t0, time.Minute)); !isHeld(err) {
		t.Fatalf("bob's claim of a live lease: %v; want a HeldError", err)
	}
	renew := func(holder string, epoch int, now time.Time) func(Record) (claim.Lease, error) {
		return func(rec Record) (claim.Lease, error) { return rec.Lease.Renewed(id, holder, epoch, now, time.Minute) }
	}
	if rec, err = m[0].Change(ctx, id, renew(alice, 1, t0.Add(30*time.Second))); err != nil || !rec.Until.Equal(t0.Add(90*time.Second)) {
		t.Fatalf("renew: %+v, %v", rec, err)
	}
	// The lease lapses: bob takes it over, at epoch 2.
	later := t0.Add(2 * time.Minute)
	if rec, err = m[1].Change(ctx, id, take(bob, later, time.Minute)); err != nil || rec.Epoch != 2 || rec.Holder != bob {
		t.Fatalf("takeover: %+v, %v", rec, err)
	}
	// alice's view still shows her claim: her renewal is pushed, lost,
	// and refused on the remote's record.
	_, err = m[0].Change(ctx, id, renew(alice, 1, later))
	var fenced *claim.FencedError
	if !errors.As(err, &fenced) || fenced.Lease.Holder != bob || fenced.Lease.Epoch != 2 {
		t.Fatalf("alice's renewal after the takeover: %v; want a FencedError naming bob at epoch 2", err)
	}
	release := func(epoch int) func(Record) (claim.Lease, error) {
		return func(rec Record) (claim.Lease, error) { return rec.Lease.Released(id, epoch) }
	}
	if rec, err = m[1].Change(ctx, id, release(2)); err != nil || rec.Holder != "" || rec.Epoch != 2 {
		t.Fatalf("release: %+v, %v", rec, err)
	}
	if rec, err = m[0].Change(ctx, id, take(alice, later, time.Minute)); err != nil || rec.Epoch != 3 {
		t.Fatalf("a claim after the release: %+v, %v; want epoch 3", rec, err)
	}
}

func isHeld(err error) bool {
	var held *claim.HeldError
	return errors.As(err, &held)
}

// Round trips to the remote: a claim, a renewal and a release from a
// current view are one push each; a claim from no view is one push when
// no one had the issue; a renewal lost to a takeover costs a fetch and
// nothing more. A git on PATH counts the commands that talk to the
// remote, real git underneath.
func TestRoundTrips(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 2)
	count := countRemoteGit(t)
	step := func(what string, want int, fn func() error) {
		t.Helper()
		before := count()
		if err := fn(); err != nil && want >= 0 {
			t.Fatalf("%s: %v", what, err)
		}
		if got := count() - before; got != want && want >= 0 || want < 0 && got != -want {
			t.Errorf("%s: %d round trips to the remote; want %d", what, got, max(want, -want))
		}
	}
	step("claim of an issue no one had", 1, func() error {
		_, err := m[0].Change(ctx, id, take(alice, t0, time.Minute))
		return err
	})
	step("renewal", 1, func() error {
		_, err := m[0].Change(ctx, id, func(rec Record) (claim.Lease, error) {
			return rec.Lease.Renewed(id, alice, 1, t0.Add(time.Second), time.Minute)
		})
		return err
	})
	step("fetch of every claim", 1, func() error { _, err := m[1].Fetch(ctx); return err })
	later := t0.Add(time.Hour)
	step("takeover from a current view", 1, func() error {
		_, err := m[1].Change(ctx, id, take(bob, later, time.Minute))
		return err
	})
	// A refusal: the push, lost; a fetch; the refusal on the record.
	step("renewal after a takeover (refused)", -2, func() error {
		_, err := m[0].Change(ctx, id, func(rec Record) (claim.Lease, error) {
			return rec.Lease.Renewed(id, alice, 1, later, time.Minute)
		})
		if err == nil {
			t.Error("alice renewed after bob took over")
		}
		return err
	})
	step("release", 1, func() error {
		_, err := m[1].Change(ctx, id, func(rec Record) (claim.Lease, error) { return rec.Lease.Released(id, 2) })
		return err
	})
}

// countRemoteGit puts on PATH a git that notes each command that talks to
// a remote (fetch, push, ls-remote) and runs the real one; count returns
// how many it noted so far.
func countRemoteGit(t *testing.T) (count func() int) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "remote-calls")
	script := fmt.Sprintf("#!/bin/sh\nfor a; do case $a in fetch|push|ls-remote) echo \"$a\" >> %q; break;; -C) ;; -*) ;; *) { [ \"$prev\" = -C ] || [ \"$prev\" = -c ]; } || break;; esac; prev=$a; done\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
}

// A remote whose hook refuses the claims' refs, a remote that does not
// exist, one that cannot be reached: one line naming the ref and the
// remote, and no claim in this clone's view.
func TestRemoteErrors(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 1)
	hook := "#!/bin/sh\nwhile read old new ref; do case $ref in refs/orchestrate/*) echo \"no claims here\" >&2; exit 1;; esac; done\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := m[0].Change(ctx, id, take(alice, t0, time.Minute))
	want := "pushing refs/orchestrate/claims/" + id + " to origin: refused: [remote rejected] (pre-receive hook declined): no claims here"
	if err == nil || err.Error() != want {
		t.Errorf("a refused push: %v\nwant %s", err, want)
	}
	if rec, _ := m[0].Known(ctx, id); rec.Sha != "" {
		t.Errorf("this clone's view holds a refused claim: %+v", rec)
	}
	gitIn(t, m[0].dir, "remote", "add", "far", filepath.Join(t.TempDir(), "gone.git"))
	for _, c := range []struct{ name, want string }{
		{"nope", "fetching refs/orchestrate/claims/* from nope: there is no remote nope in this repository (git remote add nope URL)"},
		{"far", ""}, // "…: '/tmp/…/gone.git' does not appear to be a git repository"
	} {
		r, err := New(m[0].dir, c.name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Change(ctx, id, func(rec Record) (claim.Lease, error) { return rec.Lease.Released(id, 0) })
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "refs/orchestrate/claims/") || !strings.Contains(err.Error(), " "+c.name) {
			t.Errorf("%s: %v; want one line naming the ref and the remote", c.name, err)
		}
		if c.name == "nope" && err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
	for _, name := range []string{"/tmp/x.git", "https://example.com/x", "a..b", ""} {
		if _, err := New(m[0].dir, name); err == nil {
			t.Errorf("New(%q): no error; want one (not a remote's name)", name)
		}
	}
	if _, err := m[0].Change(ctx, "a b", take(alice, t0, time.Minute)); err == nil {
		t.Error(`Change("a b"): no error; want one (not a ref's name)`)
	}
}

// Message and parse agree, for a held and a released lease.
func TestMessageParse(t *testing.T) {
	for _, l := range []claim.Lease{
		{Holder: alice, Since: t0, Epoch: 3, Until: t0.Add(time.Minute)},
		{Epoch: 4},
	} {
		got, err := parse(id, Message(id, l))
		if err != nil || !got.Equal(l) {
			t.Errorf("parse(Message(%+v)) = %+v, %v", l, got, err)
		}
	}
}

// Four machines race for each of a few issues: exactly one wins each.
func TestRace(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 4)
	for i := 0; i < 5; i++ {
		issue := fmt.Sprintf("ISSUE-20260102-%03d", i)
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for j, r := range m {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := r.Change(ctx, issue, take(fmt.Sprintf("m%d@elsewhere/1", j), t0, time.Minute))
				if err != nil && !isHeld(err) {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					won++
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Errorf("%s: %d machines won it; want 1", issue, won)
		}
	}
}
