package main

import (
	"slices"
	"testing"
	"time"
)

// BenchmarkRemoteClaim: claim --next --remote origin as a person or an
// agent runs it (a process), through a bare remote on the same disk: a
// fetch of the claims and a compare-and-swap push. Each claim is released
// (not timed), so the next takes the issue again, at the next epoch. It
// reports the median and the 99th percentile of a claim's wall time, and
// fails past half a second at the 99th.
func BenchmarkRemoteClaim(b *testing.B) {
	_, _, orch := remoteMachines(b, 1, 1)
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		out, code := orch[0](nil, "claim", "--next", "--as", "bench", "--remote", "origin")
		took = append(took, time.Since(start))
		b.StopTimer()
		if code != 0 {
			b.Fatalf("claim %d: exit %d: %s", i, code, out)
		}
		if out, code := orch[0](nil, "release", "ISSUE-20241213-001", "--remote", "origin"); code != 0 {
			b.Fatalf("release %d: exit %d: %s", i, code, out)
		}
		b.StartTimer()
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[(len(took)*99+99)/100-1]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	if p99 > 500*time.Millisecond {
		b.Errorf("claim --next --remote: p99 %v over %d claims; want at most 0.5s", p99, len(took))
	}
}
