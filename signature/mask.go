package signature

import (
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A rule masks one kind of varying text in a line. quick is a cheap test that
// the line may hold it (nil: always try); most lines fail every quick test,
// which keeps the regexps off the hot path.
type rule struct {
	name  string
	quick func(line string) bool
	apply func(line string) string
}

// replace returns an apply function for a regexp and a template.
func replace(re *regexp.Regexp, template string) func(string) string {
	return func(line string) string { return re.ReplaceAllString(line, template) }
}

// The mask tokens. A number that only counts (a line, a column, a goroutine)
// becomes N; a value becomes a <word>.
const (
	tokWorkdir = "<workdir>"
	tokHome    = "~"
	tokTmp     = "<tmp>"
	tokTime    = "<time>"
	tokDate    = "<date>"
	tokDur     = "<dur>"
	tokUUID    = "<uuid>"
	tokAddr    = "<addr>"
	tokHex     = "<hex>"
	tokPID     = "<pid>"
	tokPort    = "<port>"
)

var (
	// A temporary directory and the first name in it, which is random:
	// /tmp/go-build123/b001, /tmp/TestFoo123/001 (t.TempDir), /tmp/tmp.AbC
	// (mktemp), /tmp/tmpab_12 (Python), macOS's /var/folders/xy/z/T/…
	reTmp = regexp.MustCompile(`(^|[^\w.~-])(?:/private)?(?:/tmp|/var/tmp|/var/folders/[^/\s]+/[^/\s]+/T)/[^\s/'"():;,\[\]<>=|]+`)

	// 2026-11-22, 2026/11/22 03:05:05 (Go's log), 2026-11-22 03:05:07,184
	// (Python's logging), 2026-11-22T03:05:09.367784328Z (RFC 3339).
	reDateTime = regexp.MustCompile(`\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z\b| ?[+-]\d{2}:?\d{2}\b| UTC\b)?)?`)
	// Sun Nov 22 03:05:09 UTC 2026 (date), Sun, 22 Nov 2026 03:05:09 +0000
	// (RFC 2822), Nov 22 03:05:09 (syslog).
	reWordyTime = regexp.MustCompile(`\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? +)?(?:\d{1,2} +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?:\d{1,2},? +)?(?:\d{4} +)?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?: ?[AP]M)?(?: +(?:UTC|GMT|[A-Z]{1,3}[SD]?T|[+-]\d{4})\b)?(?: +\d{4}\b)?`)
	// 03:05:09, 03:05:09.123
	reClock = regexp.MustCompile(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`)

	reUUID = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)

	// The PC offset of a stack frame, which moves with any code change in
	// the function: "calc_test.go:14 +0x45", "(/tmp/x/overflow+0x10b0)".
	reOffset = regexp.MustCompile(`\+0x[0-9a-fA-F]+\b`)
	// The arguments of a Go stack frame, words of memory printed in hex:
	// "testing.tRunner(0xcda2849a008, 0x595230)".
	reGoArgs = regexp.MustCompile(`^(\S+)\([0-9a-fA-Fx{}?., ]*0x[0-9a-fA-Fx{}?., ]*\)$`)
	// An address: six or more hex digits after 0x (small values stay).
	reAddr = regexp.MustCompile(`\b0x[0-9a-fA-F]{6,}\b`)
	reHex  = regexp.MustCompile(`\b[0-9a-fA-F]{16,}\b`)

	// The line and column of a file reference, after a file name's extension
	// (calc_test.go:11, calc.c:7:29), an extensionless build file
	// (Makefile:8) or a node built-in module (node:internal/x:796:25).
	reFileLine = regexp.MustCompile(`(\.[A-Za-z][\w+-]*|\b(?:GNUmakefile|[Mm]akefile|Dockerfile|Containerfile|Jenkinsfile)|\bnode:[\w/.-]+):\d+(:\d+)?`)
	rePyLine   = regexp.MustCompile(`(File "[^"]*", line )\d+`)
	// sh: 1: gotestsum: not found (dash); ./run.sh: line 5: x: command not found (bash).
	reShLine = regexp.MustCompile(`^((?:\S*/)?(?:[\w.-]*sh|[\w.-]+\.sh)): (line )?\d+: `)
	// The line number in the source excerpt of gcc and clang: "    7 |   x = 1;".
	reGutter = regexp.MustCompile(`^ *\d+ \| `)

	// A fractional duration (0.123s, 1.5 ms, 1m30.5s), which is measured,
	// not configured.
	reDurFrac = regexp.MustCompile(`\b(?:\d+h)?(?:\d+m)?\d+\.\d+ ?(?:ns|µs|μs|us|ms|s|sec|secs|seconds)\b`)
	// Any duration in parentheses: "--- FAIL: TestX (0.00s)", "TestHang (2s)".
	reDurParen = regexp.MustCompile(`\((?:\d+h)?(?:\d+m)?\d+(?:\.\d+)? ?(?:ns|µs|μs|us|ms|s|sec|m|min|h)\)`)
	// Any duration after a word that says it was measured: "in 0.001s",
	// "after 0 ms" (curl), "took 3s".
	reDurWord = regexp.MustCompile(`\b(in|after|took|elapsed|Elapsed:?|[Tt]ime:?) \d+(?:\.\d+)? ?(?:ns|µs|μs|us|ms|s|sec|secs|seconds|m|min|mins|minutes|h|hours)\b`)
	// node's "duration_ms: 1.243374" (TAP) and "ℹ duration_ms 102.97" (spec).
	reDurMs = regexp.MustCompile(`\b(duration_ms:?) \d+(?:\.\d+)?`)
	// A throughput: "34.7 GB/s" (dd), "1.2MiB/s".
	reRate = regexp.MustCompile(`\b\d+(?:\.\d+)? ?[kKMGTP]?i?B/s\b`)

	// pid=11827, (pid 11098), PID: 42.
	rePID = regexp.MustCompile(`(?i)\b(pid[ =:]+)\d+\b`)
	// ==11118==ERROR: AddressSanitizer (and the other sanitizers).
	reSanPID = regexp.MustCompile(`^==\d+==`)
	// (node:18206) Warning: …
	reNodePID = regexp.MustCompile(`\(node:\d+\)`)
	reLWP     = regexp.MustCompile(`\bLWP \d+\b`)

	// 127.0.0.1:45007, localhost:45007, [::1]:45007, and curl's "port 42413".
	rePortHost = regexp.MustCompile(`(\b(?:\d{1,3}\.){3}\d{1,3}|\blocalhost|\[[0-9a-fA-F:.]*\]):(\d{5})\b`)
	rePortWord = regexp.MustCompile(`\b(port) (\d{5})\b`)

	// goroutine 7 [running]:, created by x in goroutine 6, by goroutine 9:,
	// Goroutine 9 (running) created at: (the race detector).
	reGoroutine     = regexp.MustCompile(`\b([Gg]oroutine) \d+\b`)
	reGoroutineWait = regexp.MustCompile(`^(goroutine N \[[^\]]*), \d+ minutes`)
	reRaceState     = regexp.MustCompile(`^(Goroutine N) \((?:running|finished)\)`)
	// Which access of a data race came first varies from run to run.
	reRaceAccess = regexp.MustCompile(`^(Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite) at (\S+) by `)

	// TAP test points are numbered in the order they ran: "not ok 2 - x".
	reTAP = regexp.MustCompile(`^(\s*)(ok|not ok) \d+\b`)
)

// rules are applied to every line in this order: paths before anything that
// looks at digits, addresses before hex IDs, and the goroutine rules in a
// chain.
var rules = []rule{
	{"tmp", func(l string) bool { return strings.Contains(l, "/tmp/") || strings.Contains(l, "/var/folders/") },
		replace(reTmp, "${1}"+tokTmp)},
	{"time", hasClockOrDate, func(l string) string {
		l = reDateTime.ReplaceAllStringFunc(l, func(m string) string {
			if strings.Contains(m, ":") {
				return tokTime
			}
			return tokDate
		})
		l = reWordyTime.ReplaceAllString(l, tokTime)
		return reClock.ReplaceAllString(l, tokTime)
	}},
	{"uuid", func(l string) bool { return len(l) >= 36 && strings.Contains(l, "-") }, replace(reUUID, tokUUID)},
	{"addr", func(l string) bool { return strings.Contains(l, "0x") }, func(l string) string {
		l = reOffset.ReplaceAllString(l, "+<off>")
		l = reGoArgs.ReplaceAllString(l, "$1(...)")
		return reAddr.ReplaceAllString(l, tokAddr)
	}},
	{"hex", func(l string) bool { return hasHexRun(l, 16) }, func(l string) string {
		return reHex.ReplaceAllStringFunc(l, func(m string) string {
			if strings.Trim(m, "0123456789") == "" {
				return m // a long decimal number is a value, not an ID
			}
			return tokHex
		})
	}},
	{"fileline", hasColonDigit, func(l string) string {
		return reFileLine.ReplaceAllStringFunc(l, func(m string) string {
			sub := reFileLine.FindStringSubmatch(m)
			if sub[2] != "" {
				return sub[1] + ":N:N"
			}
			return sub[1] + ":N"
		})
	}},
	{"pyline", func(l string) bool { return strings.Contains(l, `File "`) }, replace(rePyLine, "${1}N")},
	{"shline", func(l string) bool { return strings.Contains(l, "sh: ") }, replace(reShLine, "$1: ${2}N: ")},
	{"gutter", func(l string) bool { return strings.Contains(l, " | ") }, replace(reGutter, "    N | ")},
	{"duration", hasDigitUnit, func(l string) string {
		l = reDurFrac.ReplaceAllString(l, tokDur)
		l = reDurParen.ReplaceAllString(l, "("+tokDur+")")
		l = reDurWord.ReplaceAllString(l, "$1 "+tokDur)
		return reRate.ReplaceAllString(l, "<rate>")
	}},
	{"duration_ms", func(l string) bool { return strings.Contains(l, "duration_ms") }, replace(reDurMs, "$1 "+tokDur)},
	{"pid", func(l string) bool { return hasFoldPID(l) || strings.HasPrefix(l, "==") || strings.Contains(l, "LWP") },
		func(l string) string {
			l = rePID.ReplaceAllString(l, "${1}"+tokPID)
			l = reNodePID.ReplaceAllString(l, "(node:"+tokPID+")")
			l = reLWP.ReplaceAllString(l, "LWP "+tokPID)
			return reSanPID.ReplaceAllString(l, "=="+tokPID+"==")
		}},
	{"port", hasFiveDigits, func(l string) string {
		l = rePortHost.ReplaceAllStringFunc(l, func(m string) string {
			i := strings.LastIndexByte(m, ':')
			return maskPort(m[:i], ":", m[i+1:])
		})
		return rePortWord.ReplaceAllStringFunc(l, func(m string) string {
			return maskPort("port", " ", m[len("port "):])
		})
	}},
	{"goroutine", func(l string) bool { return strings.Contains(l, "oroutine ") }, func(l string) string {
		l = reGoroutine.ReplaceAllString(l, "$1 N")
		l = reGoroutineWait.ReplaceAllString(l, "$1, "+tokDur)
		return reRaceState.ReplaceAllString(l, "$1 (<state>)")
	}},
	{"race", func(l string) bool { return strings.Contains(l, " at ") }, func(l string) string {
		return reRaceAccess.ReplaceAllStringFunc(l, func(m string) string {
			sub := reRaceAccess.FindStringSubmatch(m)
			if sub[1] != "" {
				return "Previous access at " + sub[2] + " by "
			}
			return "Access at " + sub[2] + " by "
		})
	}},
	{"tap", func(l string) bool { return strings.Contains(l, "ok ") }, replace(reTAP, "$1$2 N")},
}

// ephemeralPorts is where every common OS allocates ephemeral ports from
// (Linux 32768-60999, BSD, macOS and Windows 49152-65535). Lower ports are
// configured ("localhost:8080", ":5432"), stay the same from run to run, and
// tell one service from another, so they stay.
const ephemeralPorts = 32768

func maskPort(host, sep, port string) string {
	if n, err := strconv.Atoi(port); err == nil && n >= ephemeralPorts && n <= 65535 {
		return host + sep + tokPort
	}
	return host + sep + port
}

// maskLine applies the path masker and every rule to one cleaned line.
func maskLine(line string, paths *pathMasker) string {
	if line == "" {
		return line
	}
	line = paths.mask(line)
	for _, r := range rules {
		if r.quick == nil || r.quick(line) {
			line = r.apply(line)
		}
	}
	return strings.TrimRight(line, " \t")
}

// A pathMasker replaces the caller's workspace and home paths, longest first,
// where they stand as whole path prefixes.
type pathMasker struct {
	paths  []string
	tokens []string
}

func newPathMasker(opt Options) *pathMasker {
	type pt struct{ path, token string }
	var list []pt
	for _, p := range []pt{{opt.Workdir, tokWorkdir}, {opt.Home, tokHome}} {
		if p.path == "" {
			continue
		}
		clean := filepath.Clean(p.path)
		if len(clean) < 2 || !strings.ContainsAny(clean, `/\`) {
			continue // "/", "." or a bare name would mask too much
		}
		list = append(list, pt{clean, p.token})
	}
	sort.SliceStable(list, func(i, j int) bool { return len(list[i].path) > len(list[j].path) })
	m := &pathMasker{}
	for _, p := range list {
		m.paths = append(m.paths, p.path)
		m.tokens = append(m.tokens, p.token)
	}
	return m
}

func (m *pathMasker) mask(line string) string {
	for k, p := range m.paths {
		if !strings.Contains(line, p) {
			continue
		}
		var b strings.Builder
		rest := line
		for {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			end := i + len(p)
			if (i == 0 || !isNameByte(rest[i-1])) && (end == len(rest) || !isNameByte(rest[end])) {
				b.WriteString(rest[:i])
				b.WriteString(m.tokens[k])
			} else {
				b.WriteString(rest[:end])
			}
			rest = rest[end:]
		}
		b.WriteString(rest)
		line = b.String()
	}
	return line
}

// isNameByte reports whether c belongs to a file name. A path is masked only
// where no such byte touches it: /home/u/proj is not found in
// /home/u/project nor in /x/home/u/proj, but it is in file:///home/u/proj.
func isNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '~' || isAlnum(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// hasClockOrDate reports whether line has two digits, one of ":-/", and a
// digit: the start of every clock and numeric date the time rule masks.
func hasClockOrDate(l string) bool {
	for i := 0; i+3 < len(l); i++ {
		if isDigit(l[i]) && isDigit(l[i+1]) && (l[i+2] == ':' || l[i+2] == '-' || l[i+2] == '/') && isDigit(l[i+3]) {
			return true
		}
	}
	return false
}

func hasHexRun(l string, n int) bool {
	run := 0
	for i := 0; i < len(l); i++ {
		if isHex(l[i]) {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func hasColonDigit(l string) bool {
	for i := 0; i+1 < len(l); i++ {
		if l[i] == ':' && isDigit(l[i+1]) {
			return true
		}
	}
	return false
}

// hasDigitUnit reports whether a digit is followed, maybe after a space, by
// a byte that starts a duration or rate unit.
func hasDigitUnit(l string) bool {
	for i := 0; i+1 < len(l); i++ {
		if !isDigit(l[i]) {
			continue
		}
		c := l[i+1]
		if c == ' ' && i+2 < len(l) {
			c = l[i+2]
		}
		switch c {
		case 's', 'm', 'h', 'n', 'u', 0xc2 /* µ */, 0xce /* μ */, 'B', 'k', 'K', 'M', 'G', 'T', 'P':
			return true
		}
	}
	return false
}

func hasFoldPID(l string) bool {
	for i := 0; i+2 < len(l); i++ {
		if (l[i]|0x20) == 'p' && (l[i+1]|0x20) == 'i' && (l[i+2]|0x20) == 'd' {
			return true
		}
		if l[i] == '(' && strings.HasPrefix(l[i+1:], "node:") {
			return true
		}
	}
	return false
}

func hasFiveDigits(l string) bool {
	run := 0
	for i := 0; i < len(l); i++ {
		if isDigit(l[i]) {
			if run++; run == 5 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
