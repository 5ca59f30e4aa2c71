package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// BenchmarkRunCommandCPU measures a whole orchestrate run as a user starts
// it, in a git repository, with an agent that does nothing and one gate that
// always fails, until the same failure three times halts it: the CPU time
// of orchestrate and of every process it starts (agents, gates, their
// supervisors, git), against the build ORCHESTRATE_BENCH_BIN names (an
// older one) in the same run, interleaved, the fastest of the rounds:
//
//	ORCHESTRATE_BENCH_BIN=/path/to/old/orchestrate go test -run '^$' -bench RunCommandCPU -benchtime 3x ./cmd/orchestrate
//
// It fails when this build costs more than most times the other.
func BenchmarkRunCommandCPU(b *testing.B) {
	const most = 1.0
	old := os.Getenv("ORCHESTRATE_BENCH_BIN")
	if old == "" {
		b.Skip("ORCHESTRATE_BENCH_BIN names no build to compare with")
	}
	bin := orchestrateBin(b)
	config := "agent:\n  command: 'true'\n  resume_command: 'true'\ngates:\n  - name: unit\n    command: 'echo FAIL: got 3, want 4; exit 1'\n"
	run := func(bin string) time.Duration {
		dir := b.TempDir()
		for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "b@example.com"}, {"config", "user.name", "b"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		ws := filepath.Join(dir, loop.DefaultDir)
		if err := os.MkdirAll(ws, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(config), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "--task", "never done")
		cmd.Dir = dir
		return cpuOf(b, cmd)
	}
	best := map[string]time.Duration{}
	for b.Loop() {
		// Six rounds at least of each, as make bench gives it: the fastest
		// is taken, and more make a quiet one likelier.
		for range 6 {
			for name, path := range map[string]string{"this": bin, "other": old} {
				if d := run(path); best[name] == 0 || d < best[name] {
					best[name] = d
				}
			}
		}
	}
	ratio := float64(best["this"]) / float64(best["other"])
	b.ReportMetric(float64(best["this"].Microseconds())/1000, "this-CPU-ms/run")
	b.ReportMetric(float64(best["other"].Microseconds())/1000, "other-CPU-ms/run")
	b.ReportMetric(ratio, "this/other")
	if ratio > most {
		b.Fatalf("%s", fmt.Sprintf("a run costs %.2f× the other build's CPU; want at most %.1f×", ratio, most))
	}
}
