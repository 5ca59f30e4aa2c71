package mdpatch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// bigQueue is a queue of n issues as orchestrate writes them: fields, a
// summary, a fenced failure, a verification step.
func bigQueue(n int) []byte {
	var b strings.Builder
	b.WriteString("# Issue Queue\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "## ISSUE-20241213-%03d\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Retry-Count | %d |\n| Failure-Signature | %064x |\n| Previous-Signatures | [] |\n\n### Summary\nServer fails to start (TypeError in src/index.ts:%d)\n\n### Failure Details\n```\nTypeError: Cannot read properties of undefined (reading 'port')\n    at loadConfig (src/index.ts:42:17)\n```\n\n### Verification Step\nnpm start\n\n", i, i%10, i*7919, i)
	}
	return []byte(b.String())
}

// BenchmarkCuts: the cuts of a 10,000-issue queue, found by the quick
// scan against the line-by-line one in the same run:
//
//	go test -run '^$' -bench Cuts ./internal/mdpatch
func BenchmarkCuts(b *testing.B) {
	text := bigQueue(10_000)
	b.SetBytes(int64(len(text)))
	var quick, lineByLine float64
	for n := 0; b.Loop(); n++ {
		// Each first every other time, so that neither reads the text
		// the other just brought into the cache.
		if n%2 == 0 {
			quick += measure(func() { NewSource(text).findCuts() })
		}
		lineByLine += measure(func() { lineByLineCuts(text, 0) })
		if n%2 == 1 {
			quick += measure(func() { NewSource(text).findCuts() })
		}
	}
	ratio := quick / lineByLine
	b.ReportMetric(ratio, "quick/line-by-line")
	if ratio > 0.7 {
		b.Errorf("the quick scan takes %.2f× the line-by-line one's CPU; want at most 0.7×", ratio)
	}
}

// measure returns the CPU time fn took on this thread, in seconds: on a
// busy machine, the time it ran, not the time others ran meanwhile.
func measure(fn func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	fn()
	return (threadCPU() - start).Seconds()
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}
