package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
)

// gitStdin runs git in dir with stdin and the environment env added, and
// returns its stdout.
func gitStdin(t *testing.T, dir, stdin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// forge writes in the repository dir a commit of msg on tree, with
// parents, committed at date (as another machine's clock said), and
// returns it.
func forge(t *testing.T, dir, tree, msg string, date time.Time, parents ...string) string {
	t.Helper()
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	d := fmt.Sprintf("GIT_COMMITTER_DATE=@%d +0000", date.Unix())
	return gitStdin(t, dir, msg, []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_AUTHOR_DATE=" + d[len("GIT_COMMITTER_DATE="):], d}, args...)
}

// held is the message of alice's claim of id at epoch 1, as orchestrate
// writes it.
var held = Message(id, claim.Lease{Holder: alice, Since: t0, Epoch: 1, Until: t0.Add(time.Minute)})

// A ref that holds what orchestrate does not write is neither free nor
// held: a claim, a takeover, a renewal and a release over it fail, each
// with one line that says what is wrong and how to remove it, and the ref
// stays as it was. What orchestrate writes, forged by hand, is read.
func TestBadClaimRecords(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 1)
	empty := gitIn(t, bare, "mktree")
	good := forge(t, bare, empty, held, t0)
	blob := gitStdin(t, bare, held, nil, "hash-object", "-w", "--stdin")
	files := gitStdin(t, bare, "100644 blob "+blob+"\tclaim\n", nil, "mktree")
	gitStdin(t, bare, "", []string{"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, "tag", "-a", "-m", held, "a-tag", good)
	edit := func(old, new string) string {
		if !strings.Contains(held, old) {
			t.Fatalf("%q is not in the record %q", old, held)
		}
		return forge(t, bare, empty, strings.Replace(held, old, new, 1), t0)
	}
	for _, c := range []struct{ name, obj, what string }{
		{"a hand-made commit", forge(t, bare, empty, "hand made\n", t0), "no Lease-Epoch line"},
		{"an epoch not a number", edit("Lease-Epoch: 1", "Lease-Epoch: many"), `Lease-Epoch "many" is not a non-negative integer`},
		{"a negative epoch", edit("Lease-Epoch: 1", "Lease-Epoch: -1"), `Lease-Epoch "-1" is not a non-negative integer`},
		{"two epochs", edit("Lease-Epoch: 1\n", "Lease-Epoch: 1\nLease-Epoch: 9\n"), "two Lease-Epoch lines"},
		{"no Lease-Until", edit("Lease-Until: 2026-01-02T10:01:00Z\n", ""), "no Lease-Until line"},
		{"a Lease-Until not a time", edit("Lease-Until: 2026-01-02T10:01:00Z", "Lease-Until: soon"), `Lease-Until "soon" is not an RFC 3339 time`},
		{"no Claimed-By", edit("Claimed-By: "+alice+"\n", ""), "no Claimed-By line"},
		{"a Claimed-At not a time", edit("Claimed-At: 2026-01-02T10:00:00Z", "Claimed-At: today"), `Claimed-At "today" is not an RFC 3339 time`},
		{"another subject", edit("orchestrate: "+id+" claimed", "by hand: "+id+" claimed"), "its subject does not name " + id},
		{"another issue's record", edit(id+" claimed", "ISSUE-20260102-009 claimed"), "its subject does not name " + id},
		{"a parent", forge(t, bare, empty, held, t0, good), "a commit with a parent; a claim has none"},
		{"files", forge(t, bare, files, held, t0), "a commit with files; a claim's tree is empty"},
		{"a tree", empty, "a tree, not a commit"},
		{"a blob", blob, "a blob, not a commit"},
		{"a tag", gitIn(t, bare, "rev-parse", "a-tag"), "a tag, not a commit"},
	} {
		gitIn(t, bare, "update-ref", Ref(id), c.obj)
		recs, err := m[0].Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := &BadRecordError{Ref: Ref(id), Remote: "origin", What: "not a claim orchestrate wrote (" + c.what + ")"}
		var bad *BadRecordError
		if rec := recs[id]; !errors.As(rec.Err, &bad) || *bad != *want || !rec.Lease.Equal(claim.Lease{}) || rec.Sha != c.obj {
			t.Errorf("%s: read as %+v; want %v", c.name, rec, want)
		}
		later := t0.Add(time.Hour)
		for step, change := range map[string]func(Record) (claim.Lease, error){
			"claim":    take(bob, t0, time.Minute),
			"takeover": take(bob, later, time.Minute),
			"renewal":  func(rec Record) (claim.Lease, error) { return rec.Lease.Renewed(id, alice, 1, t0, time.Minute) },
			"release":  func(rec Record) (claim.Lease, error) { return rec.Lease.Released(id, 0) },
		} {
			if _, err := m[0].Change(ctx, id, change); err == nil || err.Error() != want.Error() {
				t.Errorf("%s: %s: %v\nwant %s", c.name, step, err, want)
			}
		}
		if got := gitIn(t, bare, "rev-parse", Ref(id)); got != c.obj {
			t.Errorf("%s: the ref moved to %s", c.name, got)
		}
	}
	gitIn(t, bare, "update-ref", Ref(id), good)
	recs, err := m[0].Fetch(ctx)
	if rec := recs[id]; err != nil || rec.Err != nil || rec.Holder != alice || rec.Epoch != 1 || !rec.Written.Equal(t0) {
		t.Errorf("a record as orchestrate writes it: %+v, %v", rec, err)
	}
	want := "refs/orchestrate/claims/" + id + " on origin: not a claim orchestrate wrote (no Lease-Epoch line); skipped: delete it with git push origin --delete refs/orchestrate/claims/" + id
	if got := (&BadRecordError{Ref: Ref(id), Remote: "origin", What: "not a claim orchestrate wrote (no Lease-Epoch line)"}).Skipped(); got != want {
		t.Errorf("Skipped: %s\nwant %s", got, want)
	}
}

// clock is a machine's clock that says t.
func clock(t time.Time) func() time.Time { return func() time.Time { return t } }

// A record whose committer time, or Claimed-At, is ahead of this
// machine's clock by more than Margin says the clocks are apart; at the
// margin, or a second under it, it does not.
func TestClaimSkewAhead(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 1)
	m[0].Clock = clock(t0)
	empty := gitIn(t, bare, "mktree")
	for _, c := range []struct {
		name    string
		written time.Time
		since   time.Time
		ahead   time.Duration // 0: no skew
	}{
		{"written a second under the margin ahead", t0.Add(Margin - time.Second), t0, 0},
		{"written at the margin ahead", t0.Add(Margin), t0, 0},
		{"written a second over the margin ahead", t0.Add(Margin + time.Second), t0, Margin + time.Second},
		{"written 95s ahead", t0.Add(95 * time.Second), t0, 95 * time.Second},
		{"claimed at the margin ahead", t0, t0.Add(Margin), 0},
		{"claimed a second over the margin ahead", t0, t0.Add(Margin + time.Second), Margin + time.Second},
		{"written in the past", t0.Add(-time.Hour), t0.Add(-time.Hour), 0},
	} {
		// The ref is deleted first: this clone sees no record replaced.
		gitIn(t, bare, "update-ref", "-d", Ref(id))
		if _, err := m[0].Fetch(ctx); err != nil {
			t.Fatal(err)
		}
		msg := Message(id, claim.Lease{Holder: alice, Since: c.since, Epoch: 1, Until: c.since.Add(time.Minute)})
		gitIn(t, bare, "update-ref", Ref(id), forge(t, bare, empty, msg, c.written))
		recs, err := m[0].Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec := recs[id]
		switch {
		case rec.Err != nil:
			t.Errorf("%s: %v", c.name, rec.Err)
		case c.ahead == 0 && rec.Skew != nil:
			t.Errorf("%s: %v; want no skew", c.name, rec.Skew)
		case c.ahead != 0 && (rec.Skew == nil || rec.Skew.By != c.ahead || Skewed(recs) != rec.Skew):
			t.Errorf("%s: skew %+v; want %v ahead", c.name, rec.Skew, c.ahead)
		}
		// Its own view, read again with no fetch, says the same.
		if known, _ := m[0].Known(ctx, id); (known.Skew == nil) != (rec.Skew == nil) {
			t.Errorf("%s: known %+v, fetched %+v", c.name, known.Skew, rec.Skew)
		}
	}
	want := "clock skew: the claim of " + id + " on origin was written 95s ahead of this machine's clock (more than the margin of 10s); set the clocks right (NTP)"
	if got := (&SkewError{ID: id, Remote: "origin", By: 95 * time.Second}).Error(); got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}

// A record that replaced one this clone saw was pushed from it, so
// written after it: written more than Margin before it, it says this
// machine's clock is ahead (the record replaced was this machine's) or
// that the two writers' clocks are apart. The records' times are the
// clocks of the machines that pushed them.
func TestClaimSkewReplaced(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 2)
	host, _ := os.Hostname()
	here := "a1@" + host + "/1"
	release := func(rec Record) (claim.Lease, error) { return rec.Lease.Released(id, 0) }
	for _, c := range []struct {
		name   string
		holder string
		ahead  time.Duration // how far m[0]'s clock is ahead of m[1]'s
		skew   string        // "" for none
	}{
		{"a second under the margin", here, Margin - time.Second, ""},
		{"at the margin", here, Margin, ""},
		{"a second over the margin", here, Margin + time.Second, "clock skew: the claim of " + id + " on origin was written 11s before the one this machine wrote, which it replaced: this machine's clock is ahead (more than the margin of 10s); set the clocks right (NTP)"},
		{"another machine's record replaced", alice, 95 * time.Second, "clock skew: the claim of " + id + " on origin was written 95s before the one it replaced: the clocks of the machines that wrote them disagree (more than the margin of 10s); set the clocks right (NTP)"},
	} {
		base := t0.Add(time.Duration(len(c.name)) * time.Hour) // later each time
		m[0].Clock, m[1].Clock = clock(base.Add(c.ahead)), clock(base)
		if _, err := m[0].Change(ctx, id, take(c.holder, base, time.Minute)); err != nil {
			t.Fatal(err)
		}
		// m[1] releases it, reading m[0]'s record from ahead of its
		// clock, and writing its release by its own.
		if _, err := m[1].Change(ctx, id, release); err != nil {
			t.Fatal(err)
		}
		recs, err := m[0].Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if s := Skewed(recs); s != nil {
			got = s.Error()
		}
		if got != c.skew {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.skew)
		}
		// Fetched again, the record replaced nothing this clone saw.
		if recs, _ := m[0].Fetch(ctx); Skewed(recs) != nil {
			t.Errorf("%s: fetched again: %v", c.name, Skewed(recs))
		}
	}
}

// Skewed returns the skew of recs that is the furthest (the first issue's
// of equals), nil when none is.
func Skewed(recs map[string]Record) *SkewError {
	var worst *SkewError
	for _, rec := range recs {
		if s := rec.Skew; s != nil && (worst == nil || s.By > worst.By || s.By == worst.By && s.ID < worst.ID) {
			worst = s
		}
	}
	return worst
}
