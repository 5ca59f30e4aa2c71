package loop

import (
	"slices"
	"testing"
)

// queueWithClaim is a queue of one issue, ISSUE-20260102-001, held by
// holder at epoch (no claim when holder is "").
func queueWithClaim(holder, epoch string) []byte {
	text := "## ISSUE-20260102-001\n\n| Field | Value |\n|-------|-------|\n| Status | in_progress |\n"
	if holder != "" {
		text += "| Claimed-By | " + holder + " |\n| Lease-Epoch | " + epoch + " |\n| Lease-Until | 2026-01-02T00:10:00Z |\n"
	}
	return []byte(text + "\n### Summary\n\nx\n")
}

// released is queueWithClaim's issue with its claim let go at epoch: no
// holder, its Lease-Epoch kept.
func released(epoch string) []byte {
	return []byte("## ISSUE-20260102-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Claimed-By |  |\n| Lease-Epoch | " + epoch + " |\n| Lease-Until |  |\n\n### Summary\n\nx\n")
}

// After a takeover on the remote, the old holder's changes made here are
// stale; the new holder's, on the machine that took the issue over, are
// not, though the last sync still showed the old holder.
func TestStaleSince(t *testing.T) {
	t.Parallel()
	const id = "ISSUE-20260102-001"
	gs := map[string]given{id: {epoch: 2, holder: "new@m1/2"}}
	old := queueWithClaim("old@m0/1", "1")
	for _, tc := range []struct {
		name       string
		base, ours []byte
		stale      bool
	}{
		{"the old holder still holds it here", old, old, true},
		{"the old holder ended its claim here", old, queueWithClaim("", ""), true},
		{"the new holder claimed it here", old, queueWithClaim("new@m1/2", "2"), false},
		{"the new holder's own, since its sync", queueWithClaim("new@m1/2", "2"), queueWithClaim("", ""), false},
		{"the new holder claimed it here and let it go", old, released("2"), false},
		{"the old holder let it go here", old, released("1"), true},
	} {
		if got := slices.Contains(staleSince(tc.base, tc.ours, gs), id); got != tc.stale {
			t.Errorf("%s: stale %v; want %v", tc.name, got, tc.stale)
		}
	}
}
