package gate

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
)

// BenchmarkParallelGates runs eight gates of `sleep 0.5` with parallelism 8
// and reports the wall time over the sum of the gates' durations (what a
// serial run would take): 1/8 is perfect, 0.2 the bar.
func BenchmarkParallelGates(b *testing.B) {
	var gates []config.Gate
	for i := range 8 {
		gates = append(gates, gateOf(fmt.Sprint("sleep", i), "sleep 0.5"))
	}
	var wall, serial time.Duration
	for b.Loop() {
		start := time.Now()
		ev, err := Evaluate(context.Background(), gates, Options{Parallelism: 8, LogDir: b.TempDir()})
		wall += time.Since(start)
		if err != nil || !ev.Passed {
			b.Fatalf("Evaluate: %v, passed %v", err, ev.Passed)
		}
		for _, r := range ev.Results {
			serial += r.Duration
		}
	}
	b.ReportMetric(wall.Seconds()/serial.Seconds(), "parallel/serial")
	b.ReportMetric(serial.Seconds()/float64(b.N), "serial-s")
}

// BenchmarkGateOverhead measures, in the same run, a bare
// exec.Command("true").Run() and a gate running `true` with its log, and
// reports the difference per gate.
func BenchmarkGateOverhead(b *testing.B) {
	g := gateOf("true", "true")
	dir := b.TempDir()
	var bare, gate time.Duration
	for b.Loop() {
		start := time.Now()
		if err := exec.Command("true").Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(start)

		start = time.Now()
		r, err := Run(context.Background(), g, Options{}, dir+"/true.log")
		gate += time.Since(start)
		if err != nil || r.Outcome != Pass {
			b.Fatalf("Run = %s, %v", r.Outcome, err)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/1000/n, "bare-ms")
	b.ReportMetric(float64(gate.Microseconds())/1000/n, "gate-ms")
	b.ReportMetric(float64((gate-bare).Microseconds())/1000/n, "overhead-ms/gate")
}

// BenchmarkHugeOutput runs a gate writing 200 MB and reports how far the
// heap in use grew at its peak.
func BenchmarkHugeOutput(b *testing.B) {
	const size = 200_000_000
	g := gateOf("big", "head -c "+strconv.Itoa(size)+" /dev/zero | tr '\\0' x")
	dir := b.TempDir()
	var peak uint64
	for b.Loop() {
		_, stop := sampleHeap()
		r, err := Run(context.Background(), g, Options{}, dir+"/big.log")
		peak = max(peak, stop())
		if err != nil || r.OutputBytes != size {
			b.Fatalf("Run: %v, %d bytes", err, r.OutputBytes)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.SetBytes(size)
}

// BenchmarkGateCPU measures the CPU time of 20 gates running `true`
// against 20 bare `sh -c true`, in the same run, interleaved, counting this
// process and every process it starts (supervisors, the watchdog, the
// shells): watched (each command in a cgroup of its own, one watchdog for
// the process; where cgroups may be made) and supervised (a supervisor per
// command). The bounds: 1.5× watched; 8× supervised (measured at 6.7×; a
// Go program that does nothing costs about 2.3× a bare shell), which
// guards the early start of the supervisor (before the program's heavy
// package initializations, see package supervise).
//
//	go test -run '^$' -bench GateCPU -benchtime 5x ./gate
func BenchmarkGateCPU(b *testing.B) {
	b.Run("watched", func(b *testing.B) {
		requireWatched(b)
		benchmarkGateCPU(b, 1.5)
	})
	b.Run("supervised", func(b *testing.B) {
		supervised(b)
		benchmarkGateCPU(b, 8)
	})
}

func benchmarkGateCPU(b *testing.B, most float64) {
	const gates = 20
	g := gateOf("true", "true")
	dir := b.TempDir()
	var bare, gated time.Duration
	for b.Loop() {
		c0 := cpuNow()
		for range gates {
			if err := exec.Command("sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
		c1 := cpuNow()
		for range gates {
			r, err := Run(context.Background(), g, Options{}, dir+"/true.log")
			if err != nil || r.Outcome != Pass {
				b.Fatalf("Run = %s, %v", r.Outcome, err)
			}
		}
		c2 := cpuNow()
		bare, gated = bare+c1-c0, gated+c2-c1
	}
	ratio := float64(gated) / float64(bare)
	n := float64(b.N * gates)
	b.ReportMetric(float64(bare.Microseconds())/1000/n, "sh-CPU-ms")
	b.ReportMetric(float64(gated.Microseconds())/1000/n, "gate-CPU-ms")
	b.ReportMetric(ratio, "gate/sh")
	if SupervisorProblem() != "" {
		b.Skip("no supervisor here:", SupervisorProblem())
	}
	if ratio > most {
		b.Fatalf("a gate costs %.2f× a bare sh -c true in CPU; want at most %.1f×", ratio, most)
	}
}

// cpuNow is the CPU time of this process and of its children waited for.
func cpuNow() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano())
}
