package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// BenchmarkGateCommandCPU measures what a gate costs in the gate command:
// `gate --no-record` of 20 gates running `true` against the same of one
// gate, the difference over 19, against a bare `sh -c true`, every process
// counted (the command, its shells, its watchdog, as their reaper). Each
// figure is the fastest of ten rounds at least, the three interleaved.
// The bound is 1.5×:
//
//	go test -run '^$' -bench GateCommandCPU -benchtime 10x ./cmd/orchestrate
func BenchmarkGateCommandCPU(b *testing.B) {
	bin := orchestrateBin(b)
	asReaper(b)
	workspace := func(gates int) string {
		var cfg strings.Builder
		cfg.WriteString("agent:\n  command: 'true'\ngates:\n")
		for i := range gates {
			cfg.WriteString("  - name: g" + string(rune('a'+i)) + "\n    command: 'true'\n")
		}
		return configWorkspace(b, cfg.String())
	}
	one, twenty := workspace(1), workspace(20)
	gate := func(root string) time.Duration {
		// Each command finds its workspace as the first one did.
		os.RemoveAll(filepath.Join(root, loop.DefaultDir, "runs"))
		cmd := exec.Command(bin, "gate", "--no-record")
		cmd.Dir = root
		own, orphans := cpuWithOrphans(b, cmd)
		return own + orphans
	}
	best := map[string]time.Duration{}
	keep := func(name string, d time.Duration) {
		if best[name] == 0 || d < best[name] {
			best[name] = d
		}
	}
	for b.Loop() {
		for range 10 {
			var sh time.Duration
			for range 20 {
				sh += cpuOf(b, exec.Command("sh", "-c", "true"))
			}
			keep("sh", sh/20)
			keep("one", gate(one))
			keep("twenty", gate(twenty))
		}
	}
	perGate := (best["twenty"] - best["one"]) / 19
	ratio := float64(perGate) / float64(best["sh"])
	b.ReportMetric(float64(best["sh"].Microseconds())/1000, "sh-CPU-ms")
	b.ReportMetric(float64(perGate.Microseconds())/1000, "gate-CPU-ms")
	b.ReportMetric(ratio, "gate/sh")
	if ratio > 1.5 {
		b.Errorf("a gate of gate --no-record costs %.2f× a bare sh -c true in CPU (%v against %v); want at most 1.5×", ratio, perGate, best["sh"])
	}
}

// configWorkspace is a new workspace holding only the config cfg.
func configWorkspace(tb testing.TB, cfg string) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.MkdirAll(filepath.Join(root, loop.DefaultDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, loop.DefaultDir, "config.yaml"), []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	return root
}
