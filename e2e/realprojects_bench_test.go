package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Three scripted agents on go-humanize's three bugs (issues filed by hand,
// init's gates), each 2 s of agent time, against one agent on one of the
// bugs, measured in the same run: the median of three rounds at least
// (one and three, one after the other) of the ratio of the runs' wall
// times (goal ≤ 1.3: each agent is launched once, on its own bug, and the
// three work at once). A single round moves by a tenth from one to the
// next on a loaded machine; the median of three does not let one slow
// round decide:
//
//	go test -run '^$' -bench RealAgents -benchtime 1x ./e2e
func BenchmarkRealAgents(b *testing.B) {
	var ones, threes, ratios []float64
	for i := 0; i < max(b.N, 3); i++ {
		one, three := realWall(b, 1), realWall(b, 3)
		ones, threes = append(ones, one.Seconds()), append(threes, three.Seconds())
		ratios = append(ratios, float64(three)/float64(one))
	}
	ratio := medianOf(ratios)
	b.ReportMetric(medianOf(ones), "s-one")
	b.ReportMetric(medianOf(threes), "s-three")
	b.ReportMetric(ratio, "three/one")
	if ratio > 1.3 {
		b.Errorf("3 agents on 3 bugs take %.2f× the wall time of one agent on one bug (the median of %d rounds: %.2f; one %.2f s, three %.2f s); want at most 1.3×", ratio, len(ratios), ratios, medianOf(ones), medianOf(threes))
	}
}

// medianOf is the median of xs (the higher middle one of an even count).
func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
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
