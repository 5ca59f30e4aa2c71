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

// quickSpec are the rules' quick tests, each written on its own: what a
// rule's test on the line's features must say.
var quickSpec = map[string]func(string) bool{
	"tmp":         hasTmp,
	"date":        hasDate,
	"time":        hasClock,
	"uuid":        hasUUIDStart,
	"addr":        func(l string) bool { return strings.Contains(l, "0x") },
	"hex":         func(l string) bool { return hasHexRun(l, 16) },
	"fileline":    hasColonDigit,
	"pyline":      func(l string) bool { return strings.Contains(l, `File "`) },
	"shline":      func(l string) bool { return strings.Contains(l, "sh: ") },
	"gutter":      func(l string) bool { return strings.Contains(l, " | ") },
	"duration":    hasDigitUnit,
	"duration_ms": func(l string) bool { return strings.Contains(l, "duration_ms") },
	"vitest":      isVitestTimed,
	"pid":         hasFoldPID,
	"syslog": func(l string) bool {
		return strings.Contains(l, "]: ") || strings.HasPrefix(l, tokTime) && strings.Contains(l, "] ")
	},
	"nodepid":   func(l string) bool { return strings.Contains(l, "(node:") },
	"sanpid":    func(l string) bool { return strings.HasPrefix(l, "==") },
	"port":      hasPortNumber,
	"goroutine": func(l string) bool { return strings.Contains(l, "oroutine ") },
	"race":      func(l string) bool { return strings.Contains(l, "ead at ") || strings.Contains(l, "rite at ") },
	"tap":       func(l string) bool { return strings.Contains(l, "ok ") },
	"omitted":   func(l string) bool { return strings.HasPrefix(l, "… ") },
	"pytest-summary": func(l string) bool {
		return strings.Contains(l, " failed") || strings.Contains(l, " error") || strings.Contains(l, " passed")
	},
	"pytest-collected": func(l string) bool { return strings.Contains(l, "collected ") },
	"pytest-verbose":   func(l string) bool { return strings.HasSuffix(l, "%]") },
	"pytest-xdist":     func(l string) bool { return strings.HasPrefix(l, "[gw") },
	"xdist-worker":     func(l string) bool { return strings.Contains(l, "[gw") },
	"rust-thread":      func(l string) bool { return strings.Contains(l, "thread '") },
	"rust-tests":       func(l string) bool { return strings.HasPrefix(l, "running ") },
	"rust-result":      func(l string) bool { return strings.HasPrefix(l, "test result: ") },
	"tsc-pos":          func(l string) bool { return strings.Contains(l, "): ") },
	"eslint-row": func(l string) bool {
		return strings.HasPrefix(l, " ") && (strings.Contains(l, "error") || strings.Contains(l, "warning"))
	},
	"node-count": func(l string) bool { return strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "ℹ ") },
	"tap-plan":   func(l string) bool { return strings.Contains(l, "1..") },
}

// FuzzFeatures checks that each rule's test on the features of a line, found
// in one scan, says what its quick test in quickSpec says.
func FuzzFeatures(f *testing.F) {
	for _, tt := range normalizeTests {
		f.Add(tt.in)
	}
	for _, s := range []string{
		"12:34:56 1:23:45.6 2026-11-22 2026/11/22 2026-11/22 123e4567-e89b-12d3-a456-426614174000 0x1f 0123456789abcdef0",
		"a.go:12 :12345 :123456 port 42413 12345 5s 5 ms 3 B/s 4µs 4μs PID pid Pid x[1]: y] <time> z] ",
		`File "x" sh: 1 | 2 duration_ms (node:12) goroutine 3 Read at Write at ok 1 1 failed 2 error 3 passed`,
		"collected 3 [gw0] thread 'x' (1) f(1,2): error warning 1..3 /tmp/x /var/folders/x 12345678-1234-",
		"✓ a 5ms", "  Duration 2s", "== 1 failed", "… 3 bytes omitted …", "running 3 tests", "test result: ok. 1 passed",
		"# tests 3", "ℹ pass 2", "[gw1] [ 50%] PASSED t.py::x", "x.py::y PASSED [ 50%]", " 1:2 error x  y",
		"0123456789abcde", "x0123456789abcdef", "xxxxxxxxxxxxxxx0123456789abcdeF", "abcdefabcdefabc-abcdefabcdefabcd",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		feats := features(line)
		if got, want := feats&fDigit != 0, strings.ContainsAny(line, "0123456789"); got != want {
			t.Errorf("features(%q) has a digit: %v; want %v", line, got, want)
		}
		if got, want := feats&fSlash != 0, strings.Contains(line, "/"); got != want {
			t.Errorf("features(%q) has a slash: %v; want %v", line, got, want)
		}
		for _, set := range [][]rule{rules, runnerRules} {
			for k := range set {
				r := &set[k]
				spec, ok := quickSpec[r.name]
				if !ok {
					t.Fatalf("rule %s has no quick test in quickSpec", r.name)
				}
				if got, want := r.test(line, feats), spec(line); got != want {
					t.Errorf("rule %s on %q: test says %v; want %v", r.name, line, got, want)
				}
			}
		}
	})
}

// goResultSpec is what goResult reads, as a regexp.
var goResultSpec = regexp.MustCompile(`^(\s*)--- (FAIL|PASS|SKIP): (\S+) \(`)

// FuzzGoResult checks goResult against goResultSpec.
func FuzzGoResult(f *testing.F) {
	for _, s := range []string{
		"--- FAIL: TestX (0.00s)", "    --- PASS: TestX/sub (<dur>)", "\t--- SKIP: T (", "--- FAIL: (x", "--- FAIL:  T (",
		"--- FAIL: T(", "--- FAIL: T\t(", "--- FAIL: T (", "\f\r\n --- PASS: é\xff (", "--- fail: T (", "x--- FAIL: T (", "--- FAILS: T (",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, l string) {
		indent, verb, name, ok := goResult(l)
		m := goResultSpec.FindStringSubmatch(l)
		if ok != (m != nil) || ok && (indent != m[1] || verb != m[2] || name != m[3]) {
			t.Errorf("goResult(%q) = %q, %q, %q, %v; want %q", l, indent, verb, name, ok, m)
		}
	})
}
