package signature

import (
	"bytes"
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
//	go test -run '^$' -bench 'Compute.*MB' -cpu 1,2 -count 8 ./signature/
//
// on a shared 2-core AMD EPYC (go1.26.8, linux/amd64) the medians were
//
//	GOMAXPROCS  1 MB      10 MB     ratio
//	2           32.1 ms   306.9 ms   9.6 (wall clock; 9.3 in CPU time)
//	1           32.1 ms   323.0 ms  10.1 (wall clock; 10.5 in CPU time)
//
// about 33 MB/s. On a busy machine, compare cpu-ns/op rather than ns/op.
func BenchmarkCompute1MB(b *testing.B)  { benchmarkCompute(b, 1<<20) }
func BenchmarkCompute10MB(b *testing.B) { benchmarkCompute(b, 10<<20) }
