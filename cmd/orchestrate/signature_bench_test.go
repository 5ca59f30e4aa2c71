package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSignatureCommand runs "orchestrate signature FILE" and
// "sha256sum FILE" as child processes on the same file of real failure
// output (the signature corpus, copy after copy, digits shifted in each
// copy as they vary from run to run), and reports the ratio of their CPU
// times and the command's peak resident memory. It fails when the ratio is
// above 10 or the peak above 64 MiB:
//
//	go test -run '^$' -bench SignatureCommand ./cmd/orchestrate/
func BenchmarkSignatureCommand(b *testing.B) {
	bin := orchestrateBin(b)
	sha, err := exec.LookPath("sha256sum")
	if err != nil {
		b.Skip("no sha256sum:", err)
	}
	for _, mb := range []int{100, 300} {
		b.Run(strconv.Itoa(mb)+"MB", func(b *testing.B) {
			file := corpusFile(b, mb<<20)
			var ratio, peak float64
			n := 0
			for b.Loop() {
				shaCPU, _ := childCPU(b, sha, file)
				sigCPU, rss := childCPU(b, bin, "signature", file)
				ratio += float64(sigCPU) / float64(shaCPU)
				peak = max(peak, float64(rss)/(1<<20))
				n++
			}
			ratio /= float64(n)
			b.ReportMetric(ratio, "cpu-x-sha256sum")
			b.ReportMetric(peak, "peak-MiB")
			if ratio > 10 {
				b.Errorf("signature on %d MB took %.1f times sha256sum's CPU time; want at most 10", mb, ratio)
			}
			if peak > 64 {
				b.Errorf("signature on %d MB peaked at %.1f MiB; want at most 64", mb, peak)
			}
		})
	}
}

// childCPU runs a command and returns its CPU time (user and system) and its
// peak resident memory in bytes.
func childCPU(b *testing.B, name string, args ...string) (time.Duration, int64) {
	b.Helper()
	cmd := exec.Command(name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", name, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), ru.Maxrss << 10
}

// corpusFile writes size bytes of the signature corpus to a file, each copy
// with its digits shifted by the copy's number.
func corpusFile(b *testing.B, size int) string {
	b.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "signature", "testdata", "corpus", "*.txt"))
	if err != nil || len(names) == 0 {
		b.Fatalf("no corpus: %v", err)
	}
	sort.Strings(names)
	var one []byte
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, data...)
	}
	path := filepath.Join(b.TempDir(), "output.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	shifted := make([]byte, len(one))
	for k, written := 0, 0; written < size; k++ {
		for i, c := range one {
			if c >= '0' && c <= '9' {
				c = '0' + (c-'0'+byte(k))%10
			}
			shifted[i] = c
		}
		n := min(len(shifted), size-written)
		w.Write(shifted[:n])
		written += n
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}
