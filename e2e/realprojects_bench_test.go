package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Three scripted agents on go-humanize's three bugs (issues filed by hand,
// init's gates), each 2 s of agent time, against one agent on one of the
// bugs, measured in the same run: the ratio of the runs' wall times (goal
// ≤ 1.3: each agent is launched once, on its own bug, and the three work
// at once):
//
//	go test -run '^$' -bench RealAgents -benchtime 1x ./e2e
func BenchmarkRealAgents(b *testing.B) {
	var one, three time.Duration
	for i := 0; i < b.N; i++ {
		one += realWall(b, 1)
		three += realWall(b, 3)
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "s-one")
	b.ReportMetric(three.Seconds()/float64(b.N), "s-three")
	ratio := float64(three) / float64(one)
	b.ReportMetric(ratio, "three/one")
	if ratio > 1.3 {
		b.Errorf("3 agents on 3 bugs take %.2f× the wall time of one agent on one bug (%v against %v); want at most 1.3×", ratio, three/time.Duration(b.N), one/time.Duration(b.N))
	}
}

// realWall times run --agents on go-humanize with its first n bugs, an
// issue filed by hand for each (--agents 2 for one: the same path as
// three).
func realWall(b *testing.B, n int) time.Duration {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	r := newRealRepo(b, goHumanize.upTo(n), "RP_SLEEP=2")
	r.fileByHand()
	start := time.Now()
	out, code := r.orchestrate("run", "--agents", fmt.Sprint(max(n, 2)))
	wall := time.Since(start)
	if want := fmt.Sprintf("Merged into main: %d of %d", n, n); code != 0 || !strings.Contains(out, want) {
		b.Errorf("run --agents on %d bugs: exit %d, want 0 and %q:\n%s", n, code, want, out)
	}
	return wall
}
