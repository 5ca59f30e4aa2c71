package queue

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkPeek: a look at each issue of a 10,000-issue queue, as claim
// --next takes to choose one, by Peek against the row-by-row look it
// replaces (peekRowByRow), in the same run, in the CPU time of the thread
// that runs them. It fails past 0.7×:
//
//	go test -run '^$' -bench Peek ./queue
func BenchmarkPeek(b *testing.B) {
	var pieces [][]byte
	for i := 1; i <= 10_000; i++ {
		pieces = append(pieces, fmt.Appendf(nil, "## ISSUE-20241213-%03d\n\n| Field | Value |\n|-------|-------|\n| Type | bug |\n| Priority | critical |\n| Status | pending |\n| Source | generated |\n| Category | backend |\n| Created | 2024-12-13T09:00:00Z |\n| Auto-Retry | true |\n| Retry-Count | %d |\n| Max-Retries | 10 |\n| Failure-Signature | %064x |\n| Previous-Signatures | [] |\n| Signature-Repeat-Count | 1 |\n| Halted | false |\n| Blocking | true |\n\n### Summary\nServer fails to start (TypeError in src/index.ts:%d)\n\n### Failure Details\n```\nTypeError: Cannot read properties of undefined (reading 'port')\n    at loadConfig (src/index.ts:42:17)\n```\n\n### Verification Step\nnpm start\n\n", i, i%10, i*7919, i))
	}
	names := []string{"status", "priority", "created", "claimedby"}
	v, w := make([][]byte, len(names)), make([][]byte, len(names))
	peek, rowByRow := interleavedCPU(b, func() {
		for _, p := range pieces {
			if _, ok := Peek(p, v, names...); !ok {
				b.Fatalf("Peek could not read:\n%s", p)
			}
		}
	}, func() {
		for _, p := range pieces {
			peekRowByRow(p, w, names...)
		}
	})
	if !bytes.Equal(v[0], []byte("pending")) {
		b.Fatalf("Peek read Status %q", v[0])
	}
	ratio := float64(peek) / float64(rowByRow)
	b.ReportMetric(ratio, "peek/row-by-row")
	if ratio > 0.7 {
		b.Errorf("Peek takes %.2f× the row-by-row look's CPU; want at most 0.7×", ratio)
	}
}
