package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// benchQueue writes a queue of n issues in the seed's format, each with a
// summary and failure details, and returns its workspace and bytes.
func benchQueue(b testing.TB, n int) (string, []byte) {
	var buf bytes.Buffer
	buf.WriteString("# Issue Queue\n\n")
	statuses := []string{"pending", "in_progress", "resolved", "stuck", "skipped"}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&buf, `## ISSUE-20241213-%03d

| Field | Value |
|-------|-------|
| Type | bug |
| Priority | critical |
| Status | %s |
| Source | generated |
| Category | backend |
| Created | 2024-12-13T09:00:00Z |
| Auto-Retry | true |
| Retry-Count | %d |
| Max-Retries | 10 |
| Failure-Signature | 3f2a9c0e5b7d4a1f8e6c2b0a9d7f5e3c1b8a6d4f2e0c9b7a5d3f1e8c6a4b2d0f |
| Previous-Signatures | [] |
| Signature-Repeat-Count | 1 |
| Halted | false |
| Blocking | true |

### Summary
Server fails to start (TypeError in src/index.ts:%d)

### Failure Details
`+"```"+`
TypeError: Cannot read properties of undefined (reading 'port')
    at loadConfig (src/index.ts:42:17)
`+"```"+`

### Verification Step
npm start

`, i, statuses[i%len(statuses)], i%10, i)
	}
	dir := filepath.Join(b.TempDir(), ".orchestrator")
	cleanupAnalytics(b, dir)
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "issue_queue.md"), buf.Bytes(), 0o644)
	return dir, buf.Bytes()
}

func benchRun(b *testing.B, args ...string) {
	b.Helper()
	if err := run(context.Background(), args, nil, io.Discard, io.Discard); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkQueue10k compares, on a 10,000-issue queue, a bare goldmark
// parse (the baseline), `status --json` and `issue set` (a write each time,
// lock, sync and swap included), all in the same run.
func BenchmarkQueue10k(b *testing.B) {
	dir, src := benchQueue(b, 10000)
	b.Run("goldmark-parse", func(b *testing.B) {
		md := goldmark.New(goldmark.WithExtensions(extension.GFM))
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			md.Parser().Parse(text.NewReader(src))
		}
	})
	b.Run("status-json", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			benchRun(b, "--dir", dir, "status", "--json")
		}
	})
	b.Run("check", func(b *testing.B) {
		// Each check finds the queue as generated: 2,000 pending
		// auto-retry issues to retry, a write of the queue, the state
		// and the history.
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			b.StopTimer()
			os.WriteFile(filepath.Join(dir, "issue_queue.md"), src, 0o644)
			os.Remove(filepath.Join(dir, "session_state.md"))
			b.StartTimer()
			if err := run(context.Background(), []string{"--dir", dir, "check"}, nil, io.Discard, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("issue-set", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		i := 0
		for b.Loop() {
			i++
			benchRun(b, "--dir", dir, "issue", "set", "ISSUE-20241213-5000", "Retry-Count="+strconv.Itoa(i%10))
		}
	})
}

// TestPeakMemory10k checks that status --json and issue set on a
// 10,000-issue queue keep the heap under 10× the file's size at its peak,
// sampled while they run.
func TestPeakMemory10k(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir, src := benchQueue(t, 10000)
	for _, args := range [][]string{
		{"--dir", dir, "status", "--json"},
		{"--dir", dir, "issue", "set", "ISSUE-20241213-5000", "Retry-Count=7"},
	} {
		peak := peakHeap(func() {
			if err := run(context.Background(), args, nil, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
		})
		ratio := float64(peak) / float64(len(src))
		t.Logf("%v: peak heap %.1f MB for a %.1f MB file: %.1f×", args[2:], float64(peak)/1e6, float64(len(src))/1e6, ratio)
		if ratio > 10 {
			t.Errorf("%v: peak heap is %.1f× the file's size; want under 10×", args[2:], ratio)
		}
	}
}

// peakHeap runs fn and returns the highest live heap seen above the heap
// before it, sampling every 200µs.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak {
				peak = m.HeapAlloc - base
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	fn()
	close(done)
	<-sampled
	return peak
}

// BenchmarkRatio10k interleaves, on a 10,000-issue queue, a bare goldmark
// parse with status --json, check and issue set, and reports each one's
// fastest time over the fastest bare parse: the ratios hold up on a busy
// machine, where separate benchmarks drift apart.
func BenchmarkRatio10k(b *testing.B) {
	dir, src := benchQueue(b, 10000)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	best := map[string]time.Duration{}
	timeIt := func(name string, fn func()) {
		start := time.Now()
		fn()
		if d := time.Since(start); best[name] == 0 || d < best[name] {
			best[name] = d
		}
	}
	i := 0
	for b.Loop() {
		i++
		timeIt("goldmark", func() { md.Parser().Parse(text.NewReader(src)) })
		timeIt("status", func() { benchRun(b, "--dir", dir, "status", "--json") })
		timeIt("set", func() {
			benchRun(b, "--dir", dir, "issue", "set", "ISSUE-20241213-5000", "Retry-Count="+strconv.Itoa(i%10))
		})
		os.WriteFile(filepath.Join(dir, "issue_queue.md"), src, 0o644)
		os.Remove(filepath.Join(dir, "session_state.md"))
		timeIt("check", func() { benchRun(b, "--dir", dir, "check") })
	}
	for _, name := range []string{"status", "set", "check"} {
		b.ReportMetric(float64(best[name])/float64(best["goldmark"]), name+"/parse")
	}
	b.ReportMetric(float64(best["goldmark"].Milliseconds()), "parse-ms")
}

// BenchmarkPeakRSS runs, each the real command in a process of its own,
// status --json and issue set on a 10,000-issue queue, and a gate writing
// 200 MB of output, and reports the highest peak resident memory of each
// over the rounds (the process's rusage): the bounds are 10× the queue's
// file for the first two, 50 MB for the gate, whatever the machine's load
// (the collector's settings of each, in main.go, keep to them):
//
//	go test -run '^$' -bench PeakRSS -benchtime 3x ./cmd/orchestrate
func BenchmarkPeakRSS(b *testing.B) {
	bin := orchestrateBin(b)
	dir, src := benchQueue(b, 10000)
	gateRoot, _ := hotWorkspace(b, 10, 0, `head -c 200000000 /dev/zero | tr "\0" x`)
	peak := map[string]int64{}
	measure := func(name string, cmd *exec.Cmd) {
		ownPeak(b)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		peak[name] = max(peak[name], cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10)
	}
	for b.Loop() {
		// Three rounds at least: the highest is the figure.
		for i := range 3 {
			measure("status", exec.Command(bin, "--dir", dir, "status", "--json"))
			measure("set", exec.Command(bin, "--dir", dir, "issue", "set", "ISSUE-20241213-5000", "Retry-Count="+strconv.Itoa(i)))
			gate := exec.Command(bin, "gate", "--no-record")
			gate.Dir = gateRoot
			measure("gate", gate)
		}
	}
	for _, name := range []string{"status", "set"} {
		ratio := float64(peak[name]) / float64(len(src))
		b.ReportMetric(ratio, name+"-RSS/file")
		if ratio > 10 {
			b.Errorf("%s on 10,000 issues peaked at %.1f MB, %.1f× the queue's %.1f MB; want at most 10×", name, float64(peak[name])/1e6, ratio, float64(len(src))/1e6)
		}
	}
	gateMB := float64(peak["gate"]) / 1e6
	b.ReportMetric(gateMB, "gate-200MB-RSS-MB")
	if gateMB > 50 {
		b.Errorf("a gate writing 200 MB peaked at %.1f MB; want at most 50", gateMB)
	}
}
