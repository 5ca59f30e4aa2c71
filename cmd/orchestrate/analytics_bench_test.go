package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// BenchmarkAnalyticsCommand makes analytics.html from a 1,000,000-row
// history with "orchestrate analytics", and runs a GROUP BY of the same
// CSV in awk (counts per event and outcome, durations summed per gate),
// each a process of its own, interleaved, the fastest of the rounds; it
// reports the ratio of their CPU times and fails past 2.5:
//
//	go test -run '^$' -bench AnalyticsCommand -benchtime 3x ./cmd/orchestrate
func BenchmarkAnalyticsCommand(b *testing.B) {
	const most = 2.5
	bin := orchestrateBin(b)
	awk, err := exec.LookPath("awk")
	if err != nil {
		b.Skip("no awk:", err)
	}
	root, _ := hotWorkspace(b, 10, 1_000_000, "true")
	history := filepath.Join(root, loop.DefaultDir, "history.csv")
	best := map[string]time.Duration{}
	measure := func(name string, cmd *exec.Cmd) {
		cmd.Dir = root
		if d := cpuOf(b, cmd); best[name] == 0 || d < best[name] {
			best[name] = d
		}
	}
	for b.Loop() {
		for range 3 {
			measure("awk", exec.Command(awk, "-F,", `NR > 1 { n[$4 FS $8]++; d[$6] += $10 } END { for (k in n) print k, n[k]; for (g in d) print g, d[g] }`, history))
			measure("analytics", exec.Command(bin, "analytics"))
		}
	}
	ratio := float64(best["analytics"]) / float64(best["awk"])
	b.ReportMetric(float64(best["awk"].Microseconds())/1000, "awk-CPU-ms")
	b.ReportMetric(float64(best["analytics"].Microseconds())/1000, "analytics-CPU-ms")
	b.ReportMetric(ratio, "analytics/awk")
	if ratio > most {
		b.Errorf("analytics on 1,000,000 rows costs %.2f× an awk GROUP BY; want at most %.1f×", ratio, most)
	}
}
