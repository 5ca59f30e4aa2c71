package results

import (
	"bytes"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// BenchmarkReadBesideSignature reads a long gate output (a test's noise,
// line after line, then go test's failures) as test-level results, and
// signs the same output as the gate does as it streams: the reading costs
// at most 6x the signing (3-4x measured; 60x before each reader looked
// for what a pattern needs before trying it, when a 30 MB gate took 6x
// its time without the reading).
func BenchmarkReadBesideSignature(b *testing.B) {
	var out bytes.Buffer
	for range 1 << 18 {
		out.WriteString("orchestrate: a line a test printed, 42 of them\n")
	}
	out.WriteString("--- FAIL: TestA (0.00s)\n    a_test.go:9: got 1, want 2\nFAIL\nFAIL\texample.com/m\t0.003s\n")
	data := out.Bytes()
	feed := func(w interface{ Write([]byte) (int, error) }) {
		for off := 0; off < len(data); off += 32 << 10 {
			w.Write(data[off:min(off+32<<10, len(data))])
		}
	}
	var read, sign time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r := NewReader("tests", signature.Options{})
		feed(r)
		if rep := r.Report(true); len(rep.Failed) != 1 {
			b.Fatalf("read %+v", rep)
		}
		read += time.Since(start)
		start = time.Now()
		w := signature.NewWriter(signature.Options{})
		feed(w)
		w.Digest()
		sign += time.Since(start)
	}
	ratio := float64(read) / float64(sign)
	b.ReportMetric(ratio, "read/sign")
	b.ReportMetric(float64(len(data))*float64(b.N)/read.Seconds()/1e6, "read-MB/s")
	if ratio > 6 {
		b.Errorf("reading the results costs %.2fx signing the same output; want at most 6x", ratio)
	}
}
