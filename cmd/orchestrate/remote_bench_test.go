package main

import (
	"fmt"
	"slices"
	"sync"
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
	reportClaims(b, took, "claim --next --remote")
}

// BenchmarkRemoteClaimRace: four machines (clones of one bare remote)
// claim --next --remote origin at once, round after round, each a
// process as an agent runs it: in each round three of the four lose the
// push to the remote at least once and claim again from what they fetch
// (a round trip each). Each round's four claims take four new issues
// (ORCHESTRATE_BENCH_ROUNDS rounds, 25 at least: 100 claims). It reports
// the median and the 99th percentile of a claim's wall time, and fails
// past half a second at the 99th.
func BenchmarkRemoteClaimRace(b *testing.B) {
	const machines = 4
	rounds := max(b.N, 25)
	_, _, orch := remoteMachines(b, machines, machines*rounds)
	var took []time.Duration
	var mu sync.Mutex
	b.ResetTimer()
	for r := range rounds {
		var wg sync.WaitGroup
		for m := range machines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				out, code := orch[m]([]string{"ORCHESTRATE_LOCK_TIMEOUT=10m"}, "claim", "--next", "--as", fmt.Sprintf("m%d", m), "--remote", "origin")
				d := time.Since(start)
				if code != 0 {
					b.Errorf("round %d, machine %d: claim --next --remote: exit %d: %s", r, m, code, out)
				}
				mu.Lock()
				took = append(took, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
	}
	reportClaims(b, took, fmt.Sprintf("claim --next --remote, %d machines at once", machines))
}

// reportClaims reports the median and the 99th percentile of the claims'
// wall times took, and fails past half a second at the 99th.
func reportClaims(b *testing.B, took []time.Duration, what string) {
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[(len(took)*99+99)/100-1]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	if p99 > 500*time.Millisecond {
		b.Errorf("%s: p99 %v over %d claims; want at most 0.5s", what, p99, len(took))
	}
}
