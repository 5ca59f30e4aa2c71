package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// A claim record on the remote from the far future (Claimed-At in 2099),
// or of a huge message (60 MB; 1 MB under -short), wedges no claim: claim
// --next reports its issue skipped on one line and claims the next,
// quickly and within its bounds; the record is left as it is.
func TestRemoteClaimSkipsWedgingRecords(t *testing.T) {
	t.Parallel()
	bare, _, orch := remoteMachines(t, 1, 2)
	const id1, id2 = "ISSUE-20241213-001", "ISSUE-20241213-002"
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	env := []string{"ORCHESTRATE_NOW=" + now.Format(time.RFC3339)}
	empty := gitRun(t, bare, "mktree")
	future := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := remote.Message(id1, claim.Lease{Holder: "b1@elsewhere/1", Since: future, Epoch: 1, Until: future.Add(time.Hour)})
	// 60 MB; under -short, 1 MB: 64 times the most a record may hold,
	// which is what makes it skipped.
	size := 60 << 20
	if testing.Short() {
		size = 1 << 20
	}
	huge := remote.Message(id1, claim.Lease{Holder: "b1@elsewhere/1", Since: now, Epoch: 1, Until: now.Add(time.Hour)}) + strings.Repeat("padding padding padding padding\n", size/32)
	for _, c := range []struct{ name, msg, said string }{
		{"a record from 2099", msg, "ahead of this machine's clock"},
		{fmt.Sprintf("a record of %d MB", size>>20), huge, "bytes, more than the"},
	} {
		rec := forgeRecord(t, bare, empty, c.msg, now)
		gitRun(t, bare, "update-ref", remote.Ref(id1), rec)
		start := time.Now()
		out, code := orch[0](env, "claim", "--next", "--as", "a1", "--remote", "origin")
		took := time.Since(start)
		if code != 0 || !strings.Contains(out, "claimed "+id2+":") || !strings.Contains(out, remote.Ref(id1)) || !strings.Contains(out, c.said) {
			t.Errorf("%s: claim --next: exit %d:\n%s\nwant %s claimed, and %s said skipped (%q)", c.name, code, out, id2, id1, c.said)
		}
		if took > 30*time.Second { // the fetch of the record, once
			t.Errorf("%s: claim --next took %v", c.name, took)
		}
		// Again, now that the record is fetched: the claim of what it
		// holds is a renewal, and the record is skipped again.
		start = time.Now()
		out, code = orch[0](env, "claim", "--next", "--as", "a1", "--remote", "origin")
		if took := time.Since(start); code != 0 || took > 2*time.Second {
			t.Errorf("%s: claim --next again: exit %d in %v:\n%s", c.name, code, took, out)
		}
		if got := gitRun(t, bare, "rev-parse", remote.Ref(id1)); got != rec {
			t.Errorf("%s: the record moved to %s", c.name, got)
		}
		if out, code := orch[0](env, "release", id2, "--remote", "origin"); code != 0 {
			t.Fatalf("%s: release: exit %d: %s", c.name, code, out)
		}
	}
}
