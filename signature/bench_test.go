package signature

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

// mixedOutput returns size bytes of real output: the corpus's captures, one
// after another, over and over, as a long log of many gate runs would hold.
// Each copy has its digits shifted (0 becomes k, 1 becomes k+1, …, for the
// k-th copy, modulo 10), as durations, PIDs and addresses vary from run to
// run, so that a line repeats only within a copy and every tenth copy: the
// Writer's cache of lines does not see the same copy twice in a row.
func mixedOutput(tb testing.TB, size int) []byte {
	corpus := loadCorpus(tb)
	var names []string
	for name := range corpus {
		names = append(names, name)
	}
	slices.Sort(names)
	var b bytes.Buffer
	var one []byte
	for _, name := range names {
		one = append(one, corpus[name].output...)
	}
	shifted := make([]byte, len(one))
	for k := 0; b.Len() < size; k++ {
		for i, c := range one {
			if c >= '0' && c <= '9' {
				c = '0' + (c-'0'+byte(k))%10
			}
			shifted[i] = c
		}
		b.Write(shifted)
	}
	return b.Bytes()[:size]
}

// denseOutput returns size bytes of go test failure output as dense as it
// comes, as BenchmarkSignatureCommand's dense file in cmd/orchestrate: every
// three lines a "--- FAIL" and a "file:line: got X want Y", each with other
// numbers, so that few lines repeat and every third one starts a block.
func denseOutput(size int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "--- FAIL: TestCase%d (0.%02ds)\n    calc_test.go:%d: got %d want %d\n    note: case %d of the table\n",
			i%5000, i%100, 10+i%700, i*7%1000, i*3%1000, i)
	}
	return b.Bytes()[:size]
}

func benchmarkCompute(b *testing.B, size int) { benchmarkOutput(b, mixedOutput(b, size)) }

func benchmarkOutput(b *testing.B, out []byte) {
	opt := Options{Workdir: "/root/sigcorpus.OzMU8a", Home: "/root"}
	b.SetBytes(int64(len(out)))
	start, ok := cpuTime()
	n := 0
	for b.Loop() {
		Compute(out, Fail, opt)
		n++
	}
	if end, _ := cpuTime(); ok {
		b.ReportMetric(float64(end-start)/float64(n), "cpu-ns/op")
	}
}

// The cost is linear in the size of the output, or less: a Writer's cache
// of lines makes repeated lines cheap. With
//
//	go test -run '^$' -bench 'Compute.*MB' ./signature/
//
// on a shared, busy 2-core AMD EPYC (go1.26.8, linux/amd64), sig-v2:
//
//	1 MB    40.6 ms of CPU
//	10 MB  201.3 ms of CPU (5.0 times 1 MB; 50 MB/s)
//
// On a busy machine, compare cpu-ns/op rather than ns/op. The ratio to
// sha256sum is BenchmarkSignatureCommand's, in cmd/orchestrate.
func BenchmarkCompute1MB(b *testing.B)  { benchmarkCompute(b, 1<<20) }
func BenchmarkCompute10MB(b *testing.B) { benchmarkCompute(b, 10<<20) }

// BenchmarkComputeDense10MB is the worst case of BenchmarkSignatureCommand:
// dense go test failure output, where most lines go through every rule and
// every third starts a block to sort.
func BenchmarkComputeDense10MB(b *testing.B) { benchmarkOutput(b, denseOutput(10<<20)) }
