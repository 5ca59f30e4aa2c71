package queue

import (
	"fmt"
	"strings"
	"testing"
)

// The claim's fields that do not read are problems of the queue, each
// with its line: a Lease-Until or a Claimed-At that is no RFC 3339 time,
// a Lease-Epoch that is no non-negative integer, a Claimed-By given
// twice. Those that read, or are empty, are none.
func TestClaimFieldProblems(t *testing.T) {
	const good = "| Claimed-By | a@x/1 |\n| Claimed-At | 2026-01-02T10:00:00Z |\n| Lease-Epoch | 0 |\n| Lease-Until | |\n"
	for _, c := range []struct{ rows, want string }{
		{good, ""},
		{strings.Replace(good, "| Lease-Until | |", "| Lease-Until | soon |", 1), `13: ISSUE-20260102-001: Lease-Until "soon" is not a time`},
		{strings.Replace(good, "2026-01-02T10:00:00Z", "2026-01-02 10:00", 1), `11: ISSUE-20260102-001: Claimed-At "2026-01-02 10:00" is not a time`},
		{strings.Replace(good, "| Lease-Epoch | 0 |", "| Lease-Epoch | -1 |", 1), `12: ISSUE-20260102-001: Lease-Epoch "-1" is not a non-negative integer`},
		{good + "| Claimed-By | b@y/2 |\n", `14: ISSUE-20260102-001: field Claimed-By given twice (first at line 10)`},
	} {
		q := Parse([]byte("# Issue Queue\n\n## ISSUE-20260102-001\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Retry-Count | 0 |\n| Max-Retries | 10 |\n" + c.rows))
		var got []string
		for _, p := range q.Problems {
			got = append(got, fmt.Sprintf("%d: %s", p.Line, p.Msg))
		}
		if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)) {
			t.Errorf("the rows\n%sare read with the problems %q; want %q", c.rows, got, c.want)
		}
	}
}
