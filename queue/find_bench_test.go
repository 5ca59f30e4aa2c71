package queue

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkFinder: the places of a needle in a 10,000-issue queue, each
// issue with signatures of its own, looked for by finder against
// bytes.Index in the same run, for the needles a Stop hook looks for: a
// failure signature, a session's key (a UUID), the IDs of a day. It fails
// when a signature is looked for in over half bytes.Index's time:
//
//	go test -run '^$' -bench Finder ./queue
func BenchmarkFinder(b *testing.B) {
	var q strings.Builder
	q.WriteString("# Issue Queue\n\n")
	for i := 1; i <= 10_000; i++ {
		fmt.Fprintf(&q, "## ISSUE-20241213-%03d\n\n| Field | Value |\n|-------|-------|\n| Type | bug |\n| Status | stuck |\n| Session | %08x-5d1f-4a7e-9c3b-2e8f1a6d4b7c |\n| Failure-Signature | %064x |\n| Previous-Signatures | [%064x] |\n\n### Summary\nServer fails to start (TypeError in src/index.ts:%d)\n\n", i, i*2654435761, i*40503, i*2246822519, i)
	}
	text := []byte(q.String())
	for _, c := range []struct {
		name, needle string
		most         float64 // 0: reported only
	}{
		{"signature", fmt.Sprintf("%064x", 77_777*2654435761), 0.5},
		{"session", "e91b07c4-5d1f-4a7e-9c3b-2e8f1a6d4b7c", 0},
		{"day", "ISSUE-20261127-", 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFinder([]byte(c.needle), countBytes(text))
			finder, index := interleavedCPU(b, func() { f.index(text) }, func() { bytes.Index(text, f.needle) })
			ratio := float64(finder) / float64(index)
			b.ReportMetric(ratio, "finder/Index")
			if c.most > 0 && ratio > c.most {
				b.Errorf("the %s is looked for in %.2f× bytes.Index's time; want at most %.1f×", c.name, ratio, c.most)
			}
		})
	}
}

// interleavedCPU runs x and y once each for each round of b.Loop, each
// first every other round (neither reads what the other just brought into
// the cache), and returns the CPU time of the thread each took in all.
func interleavedCPU(b *testing.B, x, y func()) (tx, ty time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for n := 0; b.Loop(); n++ {
		for k := range 2 {
			start := threadCPU()
			if (n+k)%2 == 0 {
				x()
				tx += threadCPU() - start
			} else {
				y()
				ty += threadCPU() - start
			}
		}
	}
	return tx, ty
}

// threadCPU is the CPU time this thread has run: on a busy machine, the
// time it ran, not the time others ran meanwhile.
func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
