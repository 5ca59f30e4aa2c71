package signature

import (
	"bytes"
	"slices"
	"testing"
)

// mixedOutput returns size bytes of real output: the corpus's captures, one
// after another, over and over, as a long log of many gate runs would hold.
func mixedOutput(tb testing.TB, size int) []byte {
	corpus := loadCorpus(tb)
	var names []string
	for name := range corpus {
		names = append(names, name)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		b.Write(corpus[names[i%len(names)]].output)
	}
	return b.Bytes()[:size]
}

func benchmarkCompute(b *testing.B, size int) {
	out := mixedOutput(b, size)
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

// The cost is linear in the size of the output: 10 MB must take at most 12
// times as long as 1 MB. With
//
//	go test -run '^$' -bench 'Compute.*MB' -count 10 ./signature/
//
// on a shared 2-core AMD EPYC (go1.26.8, linux/amd64) the medians were
// 27.5 ms for 1 MB (38 MB/s) and 283 ms for 10 MB: 10.3 times as long.
func BenchmarkCompute1MB(b *testing.B)  { benchmarkCompute(b, 1<<20) }
func BenchmarkCompute10MB(b *testing.B) { benchmarkCompute(b, 10<<20) }
