package signature

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks, for any output: no panic; the same result twice;
// normalizing the normalized text changes nothing (it is a fixed point); and
// the result is clean text (valid UTF-8, no CR or ESC, no trailing blanks).
func FuzzNormalize(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.output, c.opt.Workdir)
	}
	for _, tt := range normalizeTests {
		f.Add([]byte(tt.in), tt.opt.Workdir)
	}
	for _, tt := range structureTests {
		for _, in := range tt.in {
			f.Add([]byte(in), "")
		}
	}
	f.Fuzz(func(t *testing.T, output []byte, workdir string) {
		opt := Options{Workdir: workdir, Home: "/root"}
		got := Normalize(output, opt)
		if again := Normalize(output, opt); again != got {
			t.Fatalf("Normalize(%q) is not deterministic: %q, then %q", output, got, again)
		}
		if twice := Normalize([]byte(got), opt); twice != got {
			t.Fatalf("Normalize(%q) = %q; normalized again: %q", output, got, twice)
		}
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\r\x1b") {
			t.Fatalf("Normalize(%q) = %q: not clean text", output, got)
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.TrimRight(l, " \t") != l {
				t.Fatalf("Normalize(%q) = %q: a line ends in blanks", output, got)
			}
		}
		if Compute(output, Fail, opt) != hashOf(Fail, got) {
			t.Fatalf("Compute(%q) is not the hash of Normalize", output)
		}
		// Written in pieces, the output signs the same.
		w := NewWriter(opt)
		for rest := output; len(rest) > 0; {
			n := 1 + len(rest)%7
			if n > len(rest) {
				n = len(rest)
			}
			w.Write(rest[:n])
			rest = rest[n:]
		}
		if d := w.Digest(); d.Signature(Fail) != Compute(output, Fail, opt) || d.Normalized != got || d.Empty != Empty(got) {
			t.Fatalf("a Writer fed %q in pieces gives %q (empty %v); want %q", output, d.Normalized, d.Empty, got)
		}
	})
}

// offsetSpec and addrSpec are what maskHexWords does, as regexps.
var (
	offsetSpec = regexp.MustCompile(`\+0x[0-9a-fA-F]+\b`)
	addrSpec   = regexp.MustCompile(`\b0x[0-9a-fA-F]{6,}\b`)
)

// pidSpec, portHostSpec and portWordSpec are what maskPIDWords and maskPorts
// do, as regexps.
var (
	pidSpec      = regexp.MustCompile(`(?i)\b(pid[ =:]+)\d+\b`)
	portHostSpec = regexp.MustCompile(`(\b(?:\d{1,3}\.){3}\d{1,3}|\blocalhost|\[[0-9a-fA-F:.]*\]):(\d{5})\b`)
	portWordSpec = regexp.MustCompile(`\b(port) (\d{5})\b`)
)

// fracDurSpec is what maskFracDurations does, as a regexp.
var fracDurSpec = regexp.MustCompile(`\b(?:\d+h)?(?:\d+m)?\d+\.\d+ ?(?:ns|µs|μs|us|ms|s|sec|secs|seconds)\b`)

// fileLineSpec is what maskFileLines does, as a regexp.
var fileLineSpec = regexp.MustCompile(`(\.[A-Za-z][\w+-]*|\b(?:GNUmakefile|[Mm]akefile|Dockerfile|Containerfile|Jenkinsfile)|\bnode:[\w/.-]+):\d+(:\d+)?`)

// FuzzScanners checks the hand-written scanners against the regexps that
// say what they do.
func FuzzScanners(f *testing.F) {
	for _, tt := range normalizeTests {
		f.Add(tt.in)
	}
	for _, s := range []string{"a.go:1:2:3", "my-Makefile:3", "xMakefile:3", "(node:123)", "xnode:a:1", "node:a/b.c-d:7:8", "x.1go:3", "a.b+c:1",
		"+0x1 +0x1fg 0x0x123456 x0x123456 0x1234567_ +0x", "0x123456+0x12",
		"pid=1 PID: 22 rapid 3 pid 4x (pid  5)",
		"(0.45s) 1.5 ms 2m3.5s 1h2m0.5sec 1h.5s 5h2.5seconds 0.5secs 0.5sex x1.5s 12x1.5s 1.5 x 1m2h3.5s 3m1.5ms 1.5µs 1.5μs_ 1.5 s", "1.2.3.4:45007 1234.5.6.7:45007 localhost:50000 xlocalhost:50000 [::1]:61000 port 42413 sport 42413 port 123456",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if want, got := offsetSpec.ReplaceAllString(line, "+<off>"), maskHexWords(line, true); got != want {
			t.Errorf("maskHexWords(%q, true) = %q; want %q", line, got, want)
		}
		if want, got := addrSpec.ReplaceAllString(line, tokAddr), maskHexWords(line, false); got != want {
			t.Errorf("maskHexWords(%q, false) = %q; want %q", line, got, want)
		}
		if want, got := pidSpec.ReplaceAllString(line, "${1}"+tokPID), maskPIDWords(line); got != want {
			t.Errorf("maskPIDWords(%q) = %q; want %q", line, got, want)
		}
		wantPorts := portHostSpec.ReplaceAllStringFunc(line, func(m string) string {
			i := strings.LastIndexByte(m, ':')
			return maskPort(m[:i], ":", m[i+1:])
		})
		wantPorts = portWordSpec.ReplaceAllStringFunc(wantPorts, func(m string) string {
			return maskPort("port", " ", m[len("port "):])
		})
		if got := maskPorts(line); got != wantPorts {
			t.Errorf("maskPorts(%q) = %q; want %q", line, got, wantPorts)
		}
		// Any line, cleaned or not, is masked without a panic.
		maskLine(line, newPathMasker(Options{Workdir: "/work/repo", Home: "/home/me"}))
		if want, got := fracDurSpec.ReplaceAllString(line, tokDur), maskFracDurations(line); got != want {
			t.Errorf("maskFracDurations(%q) = %q; want %q", line, got, want)
		}
		want := fileLineSpec.ReplaceAllStringFunc(line, func(m string) string {
			sub := fileLineSpec.FindStringSubmatch(m)
			if sub[2] != "" {
				return sub[1] + ":N:N"
			}
			return sub[1] + ":N"
		})
		if got := maskFileLines(line); got != want {
			t.Errorf("maskFileLines(%q) = %q; want %q", line, got, want)
		}
	})
}
