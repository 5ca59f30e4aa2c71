package analytics

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// Benchmarks of the whole analytics command (Generate: stream the history, compute,
// render, write the page) on generated histories of realistic cardinality:
//
//	go test -run '^$' -bench Generate -benchtime 3x ./analytics/
//
// BenchmarkGenerateScaling fails when 1M rows take more than 12 times as long as
// 100k, or when the heap ever holds more than 100 MB.

const (
	benchIssues     = 10_000
	benchGates      = 20
	benchSignatures = 300
	benchRuns       = 1_000
)

// writeBenchHistory writes a history of about rows rows: benchRuns runs of loops, each
// an agent launch and the gates, failures filing or recording issues from a pool of
// benchIssues with one of benchSignatures signatures, checks, retries and resolves.
func writeBenchHistory(tb testing.TB, path string, rows int) int64 {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(headerLine)
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	filed := make([]bool, benchIssues)
	retries := make([]int, benchIssues)
	n := 0
	emit := func(events ...Event) {
		for i := range events {
			at = at.Add(time.Duration(500+rng.IntN(5000)) * time.Millisecond)
			events[i].Time = at
		}
		b, err := encodeRows(events, at)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
		n += len(events)
	}
	perRun := rows / benchRuns
	for r := 0; n < rows; r++ {
		run := fmt.Sprintf("run-%05d", r)
		emit(Event{RunID: run, Event: EventRunStart})
		start := n
		for loop := 1; n-start < perRun-2 && n < rows; loop++ {
			emit(Event{RunID: run, Loop: loop, Event: EventAgent, Outcome: "ok", ExitCode: exit(0), DurationMS: int64(rng.IntN(600_000))})
			var failing []int
			for g := range benchGates {
				gate := fmt.Sprintf("gate-%02d", g)
				if rng.IntN(10) > 0 {
					emit(Event{RunID: run, Loop: loop, Event: EventGate, Gate: gate, Outcome: OutcomePass, ExitCode: exit(0), DurationMS: int64(rng.IntN(60_000))})
					continue
				}
				issue := rng.IntN(benchIssues)
				id := fmt.Sprintf("ISSUE-2025%04d-%03d", issue/1000, issue%1000)
				sig := fmt.Sprintf("%064x", rng.IntN(benchSignatures))
				emit(Event{RunID: run, Loop: loop, Event: EventGate, IssueID: id, Gate: gate, Outcome: OutcomeFail, ExitCode: exit(1), DurationMS: int64(rng.IntN(60_000)), Signature: sig})
				if !filed[issue] {
					filed[issue] = true
					emit(Event{RunID: run, Loop: loop, Event: EventIssueAdd, IssueID: id, Gate: gate, Signature: sig, Detail: "TestSomething: got 3, want 4 in " + gate})
				} else {
					emit(Event{RunID: run, Loop: loop, Event: EventRecord, IssueID: id, Gate: gate, Attempt: retries[issue], Outcome: OutcomeFail, ExitCode: exit(1), Signature: sig, Detail: "repeat=1"})
				}
				failing = append(failing, issue)
			}
			if len(failing) == 0 || loop > 10 {
				emit(Event{RunID: run, Loop: loop, Event: EventCheck, Outcome: "nothing"})
				break
			}
			emit(Event{RunID: run, Loop: loop, Event: EventCheck, Outcome: OutcomeTriggered})
			for _, issue := range failing {
				retries[issue]++
				id := fmt.Sprintf("ISSUE-2025%04d-%03d", issue/1000, issue%1000)
				emit(Event{RunID: run, Loop: loop, Event: EventRetryTriggered, IssueID: id, Attempt: retries[issue]})
				if rng.IntN(3) == 0 {
					emit(Event{RunID: run, Loop: loop, Event: EventResolve, IssueID: id, Attempt: retries[issue], DurationMS: int64(rng.IntN(3_600_000))})
				}
			}
		}
		emit(Event{RunID: run, Event: EventRunEnd, Outcome: "passed"})
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// heapPeak samples the bytes of live and not yet swept heap objects every millisecond
// until stopped, and returns the largest.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	done := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// generateOnce makes the page of history and returns how long it took and the heap peak.
func generateOnce(tb testing.TB, history, out string) (time.Duration, uint64) {
	runtime.GC()
	stop := heapPeak()
	start := time.Now()
	if err := generate(history, out); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start), stop()
}

func BenchmarkGenerate(b *testing.B) {
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			dir := b.TempDir()
			history := filepath.Join(dir, "history.csv")
			size := writeBenchHistory(b, history, rows)
			b.SetBytes(size)
			b.ReportAllocs()
			var peak uint64
			var total time.Duration
			b.ResetTimer()
			for range b.N {
				d, p := generateOnce(b, history, filepath.Join(dir, "analytics.html"))
				total += d
				peak = max(peak, p)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

func BenchmarkGenerateScaling(b *testing.B) {
	dir := b.TempDir()
	small, large := filepath.Join(dir, "small.csv"), filepath.Join(dir, "large.csv")
	writeBenchHistory(b, small, 100_000)
	writeBenchHistory(b, large, 1_000_000)
	out := filepath.Join(dir, "analytics.html")
	b.ResetTimer()
	for range b.N {
		// The best of three of each, so that one slow run on a busy machine does not
		// decide.
		best := func(path string) (time.Duration, uint64) {
			var bestD time.Duration
			var peak uint64
			for i := range 3 {
				d, p := generateOnce(b, path, out)
				if i == 0 || d < bestD {
					bestD = d
				}
				peak = max(peak, p)
			}
			return bestD, peak
		}
		dSmall, pSmall := best(small)
		dLarge, pLarge := best(large)
		ratio := float64(dLarge) / float64(dSmall)
		b.ReportMetric(ratio, "1M/100k-time")
		b.ReportMetric(float64(pSmall)/(1<<20), "peak-heap-100k-MB")
		b.ReportMetric(float64(pLarge)/(1<<20), "peak-heap-1M-MB")
		b.Logf("100k rows: %v, peak heap %.1f MB; 1M rows: %v, peak heap %.1f MB; ratio %.2f",
			dSmall, float64(pSmall)/(1<<20), dLarge, float64(pLarge)/(1<<20), ratio)
		if ratio > 12 {
			b.Errorf("1M rows took %.1f times as long as 100k; want at most 12 (linear)", ratio)
		}
		if pLarge > 100<<20 {
			b.Errorf("peak heap on 1M rows = %.1f MB; want under 100 MB", float64(pLarge)/(1<<20))
		}
	}
}

// TestBenchHistoryIsRealistic keeps the benchmark's generator honest: the history it
// writes reads without malformed rows and has the cardinality the benchmark claims.
func TestBenchHistoryIsRealistic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.csv")
	writeBenchHistory(t, path, 20_000)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Compute(f)
	if err != nil {
		t.Fatal(err)
	}
	if m.Malformed != 0 || m.Rows < 20_000 || len(m.Gates) != benchGates || m.IssuesFiled < 500 || m.FixedByLoop == 0 {
		t.Errorf("generated history: %v, %d malformed, %d gates, %d fixed by the loop", m, m.Malformed, len(m.Gates), m.FixedByLoop)
	}
}

// BenchmarkComputeAll reads 1,000,000 rows as the histories of four
// machines, each run on one of them, every machine holding the first tenth
// (a history committed before the clones were made): against
// BenchmarkGenerate's one history of the same rows, the cost of the merge
// in time order and of counting each row once (a key kept per row).
func BenchmarkComputeAll(b *testing.B) {
	const rows, machines = 1_000_000, 4
	dir := b.TempDir()
	whole := filepath.Join(dir, "history.csv")
	writeBenchHistory(b, whole, rows)
	data, err := os.ReadFile(whole)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
	want := int64(len(lines) - 1)
	hosts := make([][]byte, machines)
	machine := 0
	for i, line := range lines {
		if i > 0 && strings.Contains(line, ","+EventRunStart+",") {
			machine = (machine + 1) % machines
		}
		for h := range hosts {
			if i == 0 || i <= rows/10 || h == machine {
				hosts[h] = append(hosts[h], line...)
			}
		}
	}
	paths := make([]string, machines)
	for h, text := range hosts {
		paths[h] = filepath.Join(dir, fmt.Sprint("h", h, ".csv"))
		if err := os.WriteFile(paths[h], text, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		stop := heapPeak()
		start := time.Now()
		var srcs []Source
		var files []*os.File
		for _, path := range paths {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, f)
			srcs = append(srcs, Source{Name: path, R: bufio.NewReaderSize(f, 256<<10)})
		}
		m, err := ComputeAll(srcs)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			b.Fatal(err)
		}
		took, peak := time.Since(start), stop()
		if m.Rows != want {
			b.Fatalf("%d rows, want %d", m.Rows, want)
		}
		b.ReportMetric(float64(took.Nanoseconds())/float64(want), "ns/row")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	}
}
