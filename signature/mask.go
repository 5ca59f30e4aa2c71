package signature

import (
	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A rule masks one kind of varying text in a line. has and quick are a cheap
// test that the line may hold it: the line has one of the features has (if
// any), and quick (if any) holds. Most lines fail every test, which keeps
// the regexps off the hot path.
type rule struct {
	name  string
	has   feat
	quick func(line string) bool
	apply func(line string) string
}

// test reports whether the rule may change l, whose features are f.
func (r *rule) test(l string, f feat) bool {
	return (r.has == 0 || f&r.has != 0) && (r.quick == nil || r.quick(l))
}

// replace returns an apply function for a regexp and a template.
func replace(re *lazyre.RE, template string) func(string) string {
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

// A regexp that starts at a word boundary ends at one too: a match that
// ended before a letter or digit would leave it after a mask token, where the
// next normalization would find a boundary and mask more.
var (
	// 2026-11-22, 2026/11/22 03:05:05 (Go's log), 2026-11-22 03:05:07,184
	// (Python's logging), 2026-11-22T03:05:09.367784328Z (RFC 3339).
	reDateTime = lazyre.New(`\b\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z\b| ?[+-]\d{2}:?\d{2}\b| UTC\b)?)?\b`)
	// Sun Nov 22 03:05:09 UTC 2026 (date), Sun, 22 Nov 2026 03:05:09 +0000
	// (RFC 2822), Nov 22 03:05:09 (syslog).
	reWordyTime = lazyre.New(`\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? +)?(?:\d{1,2} +)?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?:\d{1,2},? +)?(?:\d{4} +)?\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?: ?[AP]M)?(?: +(?:UTC|GMT|[A-Z]{1,3}[SD]?T|[+-]\d{4})\b)?(?: +\d{4})?\b`)
	// 03:05:09, 03:05:09.123
	reClock = lazyre.New(`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`)

	reUUID = lazyre.New(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)

	// The arguments of a Go stack frame, words of memory printed in hex:
	// "testing.tRunner(0xcda2849a008, 0x595230)".
	reGoArgs = lazyre.New(`^(\S+)\([0-9a-fA-Fx{}?., ]*0x[0-9a-fA-Fx{}?., ]*\)$`)
	reHex    = lazyre.New(`\b[0-9a-fA-F]{16,}\b`)

	rePyLine = lazyre.New(`(File "[^"]*", line )\d+`)
	// sh: 1: gotestsum: not found (dash); ./run.sh: line 5: x: command not found (bash).
	reShLine = lazyre.New(`^((?:\S*/)?(?:[\w.-]*sh|[\w.-]+\.sh)): (line )?\d+: `)
	// The line number in the source excerpt of gcc and clang: "    7 |   x = 1;".
	reGutter = lazyre.New(`^ *\d+ \| `)

	// A fractional duration (0.123s, 1.5 ms, 1m30.5s), which is measured,
	// not configured.
	// Any duration in parentheses: "--- FAIL: TestX (0.00s)", "TestHang (2s)".
	reDurParen = lazyre.New(`\((?:\d+h)?(?:\d+m)?\d+(?:\.\d+)? ?(?:ns|µs|μs|us|ms|s|sec|m|min|h)\)`)
	// Any duration after a word that says it was measured: "in 0.001s",
	// "after 0 ms" (curl), "took 3s".
	reDurWord = lazyre.New(`\b(in|after|took|elapsed|Elapsed:?|[Tt]ime:?) \d+(?:\.\d+)? ?(?:ns|µs|μs|us|ms|s|sec|secs|seconds|m|min|mins|minutes|h|hours)\b`)
	// node's "duration_ms: 1.243374" (TAP) and "ℹ duration_ms 102.97" (spec).
	reDurMs = lazyre.New(`\b(duration_ms:?) \d+(?:\.\d+)?\b`)
	// A throughput: "34.7 GB/s" (dd), "1.2MiB/s".
	reRate = lazyre.New(`\b\d+(?:\.\d+)? ?[kKMGTP]?i?B/s\b`)

	// ==11118==ERROR: AddressSanitizer (and the other sanitizers).
	reSanPID = lazyre.New(`^==\d+==`)
	// (node:18206) Warning: …
	reNodePID = lazyre.New(`\(node:\d+\)`)

	// goroutine 7 [running]:, created by x in goroutine 6, by goroutine 9:,
	// Goroutine 9 (running) created at: (the race detector).
	reGoroutine     = lazyre.New(`\b([Gg]oroutine) \d+\b`)
	reGoroutineWait = lazyre.New(`^(goroutine N \[[^\]]*), \d+ minutes`)
	reRaceState     = lazyre.New(`^(Goroutine N) \((?:running|finished)\)`)
	// Which access of a data race came first varies from run to run.
	reRaceAccess = lazyre.New(`^(Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite) at (\S+) by `)

	// TAP test points are numbered in the order they ran: "not ok 2 - x".
	reTAP = lazyre.New(`^(\s*)(ok|not ok) \d+\b`)

	// The gate keeps the head and the tail of a long output and marks the
	// cut with "… N bytes omitted …"; N moves with every duration and path.
	reOmitted = lazyre.New(`^… \d+ bytes omitted …$`)
)

// rules are applied to every line in this order: temporary paths before
// anything that looks at digits, addresses before hex IDs, and the goroutine
// rules in a chain. Every rule after the first masks something with a digit
// in it, which lets maskLine skip them on lines without one.
var rules = []rule{
	{"tmp", fTmp, nil, maskTmp},
	{"date", fDate, nil, func(l string) string {
		return reDateTime.ReplaceAllStringFunc(l, func(m string) string {
			if strings.Contains(m, ":") {
				return tokTime
			}
			return tokDate
		})
	}},
	{"time", fClock, nil, func(l string) string {
		l = reWordyTime.ReplaceAllString(l, tokTime)
		return reClock.ReplaceAllString(l, tokTime)
	}},
	{"uuid", fUUID, nil, replace(reUUID, tokUUID)},
	{"addr", f0x, nil, func(l string) string {
		l = maskHexWords(l, true)
		if strings.HasSuffix(l, ")") {
			l = reGoArgs.ReplaceAllString(l, "$1(...)")
		}
		return maskHexWords(l, false)
	}},
	{"hex", fHex16, nil, func(l string) string {
		return reHex.ReplaceAllStringFunc(l, func(m string) string {
			if strings.Trim(m, "0123456789") == "" || !strings.ContainsAny(m, "0123456789") {
				return m // a long decimal number is a value, a word is a word
			}
			return tokHex
		})
	}},
	{"fileline", fColonDigit, nil, maskFileLines},
	{"pyline", fPyFile, nil, replace(rePyLine, "${1}N")},
	{"shline", fShColon, nil, replace(reShLine, "$1: ${2}N: ")},
	{"gutter", fGutter, nil, replace(reGutter, "    N | ")},
	{"duration", fDigitUnit, nil, func(l string) string {
		if hasDigitDotDigit(l) {
			l = maskFracDurations(l)
		}
		if hasParenDigit(l) {
			l = reDurParen.ReplaceAllString(l, "("+tokDur+")")
		}
		if hasSpaceDigit(l) && (strings.Contains(l, "in ") || strings.Contains(l, "after ") || strings.Contains(l, "took ") ||
			strings.Contains(l, "lapsed") || strings.Contains(l, "ime")) {
			l = reDurWord.ReplaceAllString(l, "$1 "+tokDur)
		}
		if strings.Contains(l, "B/s") {
			l = reRate.ReplaceAllString(l, "<rate>")
		}
		return l
	}},
	{"duration_ms", fDurationMs, nil, replace(reDurMs, "$1 "+tokDur)},
	{"vitest", 0, isVitestTimed, maskVitestTimes},
	{"pid", fPID, nil, maskPIDWords},
	{"syslog", fBracket, func(l string) bool {
		return strings.Contains(l, "]: ") || strings.HasPrefix(l, tokTime) && strings.Contains(l, "] ")
	}, maskSyslogPID},
	{"nodepid", fNodePID, nil, replace(reNodePID, "(node:"+tokPID+")")},
	{"sanpid", 0, func(l string) bool { return strings.HasPrefix(l, "==") }, replace(reSanPID, "=="+tokPID+"==")},
	{"port", fPort, nil, maskPorts},
	{"goroutine", fGoroutine, nil, func(l string) string {
		l = reGoroutine.ReplaceAllString(l, "$1 N")
		l = reGoroutineWait.ReplaceAllString(l, "$1, "+tokDur)
		return reRaceState.ReplaceAllString(l, "$1 (<state>)")
	}},
	{"race", fRace, nil, func(l string) string {
		return reRaceAccess.ReplaceAllStringFunc(l, func(m string) string {
			sub := reRaceAccess.FindStringSubmatch(m)
			if sub[1] != "" {
				return "Previous access at " + sub[2] + " by "
			}
			return "Access at " + sub[2] + " by "
		})
	}},
	{"tap", fOK, nil, replace(reTAP, "$1$2 N")},
	{"omitted", 0, func(l string) bool { return strings.HasPrefix(l, "… ") }, replace(reOmitted, "… N bytes omitted …")},
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
// Every rule but the first needs a digit, so a line without one is done
// after the paths.
//
// The paths are masked first, before other rules take digits out of them,
// and again last: a path masked only where no name touches it may be freed
// by another rule ("12:00:00/tmp/x" becomes "<time>/tmp/x"), and masking it
// now, not on the next call, keeps normalization a fixed point.
func maskLine(line string, paths *pathMasker) string {
	if line == "" {
		return line
	}
	f := features(line)
	line, f = paths.maskFeat(line, f)
	if f&fDigit == 0 {
		return trimBlanks(maskDirs(line, f))
	}
	for _, set := range [...][]rule{rules, runnerRules} {
		for k := range set {
			r := &set[k]
			if !r.test(line, f) {
				continue
			}
			// The features are the line's: found again when a rule
			// changed it.
			if masked := r.apply(line); masked != line {
				line = masked
				f = features(line)
			}
		}
	}
	line, f = paths.maskFeat(line, f)
	return trimBlanks(maskDirs(line, f))
}

// maskDirs masks temporary directories and the random names of directories,
// in a line with a path, which has a "/"; f is the line's features.
func maskDirs(l string, f feat) string {
	if f&fSlash == 0 {
		return l
	}
	return maskRandomRule(maskTmpRule(l))
}

func maskRandomRule(l string) string {
	if strings.IndexByte(l, '/') >= 0 {
		return maskRandomDirs(l)
	}
	return l
}

func maskTmpRule(l string) string {
	if hasTmp(l) {
		return maskTmp(l)
	}
	return l
}

func hasTmp(l string) bool {
	return strings.Contains(l, "/tmp/") || strings.Contains(l, "/var/folders/")
}

// maskFileLines replaces with N the line and column numbers of file
// references: after a file name's extension (calc_test.go:11, calc.c:7:29),
// an extensionless build file (Makefile:8) or a node built-in module
// (node:internal/test_runner/test:796:25). It scans for ":digit" and looks
// back for the file name; the regexp that says the same (fileLineSpec, in
// the tests) has no literal to look for and would try every position.
func maskFileLines(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(l); i++ {
		if l[i] != ':' || !isDigit(l[i+1]) || !endsInFileName(l[:i]) {
			continue
		}
		j := i + 1
		for j < len(l) && isDigit(l[j]) {
			j++
		}
		b.WriteString(l[last:i])
		b.WriteString(":N")
		if j+1 < len(l) && l[j] == ':' && isDigit(l[j+1]) {
			for j++; j < len(l) && isDigit(l[j]); j++ {
			}
			b.WriteString(":N")
		}
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// maskFracDurations replaces with tokDur the durations with a fraction:
// 1.5s, 0.25 ms, 2m3.5s, 1h2m0.5sec, each starting at a word boundary and
// ending at one. It scans for "digit.digit" and reads around it; the
// regexp that says the same (fracDurSpec, in the tests) tries every
// position of every line.
func maskFracDurations(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if !isDigit(l[i]) || i > 0 && isWordByte(l[i-1]) {
			continue
		}
		end := fracDurationAt(l, i)
		if end < 0 {
			for i+1 < len(l) && isWordByte(l[i+1]) {
				i++ // no boundary before the next start in this word
			}
			continue
		}
		b.WriteString(l[last:i])
		b.WriteString(tokDur)
		last = end
		i = end - 1
	}
	return spliced(&b, l, last)
}

// fracDurationAt returns the end of the duration with a fraction that
// starts at l[i] (a digit), or -1: an optional "<digits>h", an optional
// "<digits>m", "<digits>.<digits>", an optional space and a unit that ends
// at a word boundary.
func fracDurationAt(l string, i int) int {
	digits := func(j int) int {
		for j < len(l) && isDigit(l[j]) {
			j++
		}
		return j
	}
	if j := digits(i); j < len(l) && l[j] == 'h' {
		i = j + 1
	}
	if j := digits(i); j > i && j < len(l) && l[j] == 'm' {
		i = j + 1
	}
	j := digits(i)
	if j == i || j+1 >= len(l) || l[j] != '.' || !isDigit(l[j+1]) {
		return -1
	}
	j = digits(j + 1)
	if j < len(l) && l[j] == ' ' {
		if end := unitAt(l, j+1); end >= 0 {
			return end
		}
	}
	return unitAt(l, j)
}

// durationUnits are the units of fracDurationAt, in the order they are tried.
var durationUnits = []string{"ns", "µs", "μs", "us", "ms", "s", "sec", "secs", "seconds"}

// unitAt returns the end of the first of durationUnits at l[j:] that ends
// at a word boundary, or -1.
func unitAt(l string, j int) int {
	for _, u := range durationUnits {
		if end := j + len(u); strings.HasPrefix(l[j:], u) && (end == len(l) || !isWordByte(l[end])) {
			return end
		}
	}
	return -1
}

// endsInFileName reports whether s ends in a file name with an extension
// (".go", ".test.mjs"), an extensionless build file (Makefile), or a node
// built-in module ("node:internal/test_runner/test").
func endsInFileName(s string) bool {
	p := len(s)
	for p > 0 && (isWordByte(s[p-1]) || s[p-1] == '+' || s[p-1] == '-') {
		p--
	}
	if p > 0 && p < len(s) && s[p-1] == '.' && isLetter(s[p]) {
		return true
	}
	w := len(s)
	for w > 0 && isWordByte(s[w-1]) {
		w--
	}
	switch s[w:] {
	case "GNUmakefile", "Makefile", "makefile", "Dockerfile", "Containerfile", "Jenkinsfile":
		return true
	}
	m := len(s)
	for m > 0 && (isWordByte(s[m-1]) || s[m-1] == '/' || s[m-1] == '.' || s[m-1] == '-') {
		m--
	}
	return m < len(s) && strings.HasSuffix(s[:m], "node:") && (m == 5 || !isWordByte(s[m-6]))
}

// A pathMasker replaces the caller's workspace and home paths, longest first,
// where they stand as whole path prefixes.
type pathMasker struct {
	paths  []string
	tokens []string
	firsts []byte // the first bytes of the paths, each once
}

// maskFeat masks the paths in line, whose features are f, and returns the
// line and its features.
func (m *pathMasker) maskFeat(line string, f feat) (string, feat) {
	if !m.mayHold(line, f) {
		return line, f
	}
	if masked := m.mask(line); masked != line {
		return masked, features(masked)
	}
	return line, f
}

func newPathMasker(opt Options) *pathMasker {
	type pt struct{ path, token string }
	var list []pt
	all := []pt{{opt.Workdir, tokWorkdir}, {opt.Home, tokHome}}
	for _, r := range opt.Roots {
		all = append(all, pt{r, tokWorkdir})
	}
	for _, p := range all {
		if p.path == "" {
			continue
		}
		// The path is looked for in cleaned text, so it is cleaned the same
		// way; a valid UTF-8 path then never splits a character.
		clean := cleanLine(filepath.Clean(p.path))
		if !isAbsPath(clean) {
			continue // a relative path or a root would mask too much
		}
		list = append(list, pt{clean, p.token})
	}
	sort.SliceStable(list, func(i, j int) bool { return len(list[i].path) > len(list[j].path) })
	m := &pathMasker{}
	for _, p := range list {
		m.paths = append(m.paths, p.path)
		m.tokens = append(m.tokens, p.token)
		if !slices.Contains(m.firsts, p.path[0]) {
			m.firsts = append(m.firsts, p.path[0])
		}
	}
	return m
}

// isAbsPath reports whether p is an absolute path below a root: /x, \\x,
// C:\x or C:/x.
func isAbsPath(p string) bool {
	switch {
	case len(p) >= 2 && (p[0] == '/' || p[0] == '\\'):
		return true
	case len(p) >= 4 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		return true
	}
	return false
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

// mayHold reports whether line, whose features are f, has the first byte of
// one of the paths: most lines have none, and the features say whether a
// line has a "/", which the paths all start with but on Windows.
func (m *pathMasker) mayHold(line string, f feat) bool {
	if len(m.firsts) == 1 && m.firsts[0] == '/' {
		return f&fSlash != 0
	}
	for _, c := range m.firsts {
		if strings.IndexByte(line, c) >= 0 {
			return true
		}
	}
	return false
}

// isNameByte reports whether c belongs to a file name. A path is masked only
// where no such byte touches it: /home/u/proj is not found in
// /home/u/project nor in /x/home/u/proj, but it is in file:///home/u/proj.
func isNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '~' || isAlnum(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool { return c == '_' || isAlnum(c) }

func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hasDigitDotDigit(l string) bool {
	for i := 0; i+2 < len(l); i++ {
		if l[i+1] == '.' && isDigit(l[i]) && isDigit(l[i+2]) {
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

// maskHexWords masks hex words. With offsets, it masks the PC offset of a
// stack frame, which moves with any code change in the function:
// "calc_test.go:14 +0x45" and "(/tmp/x/overflow+0x10b0)" become "+<off>".
// Without, it masks addresses: 0x and six or more hex digits, a whole word
// (small values such as code=0x1 stay). The regexps that say the same are
// offsetSpec and addrSpec, in the tests.
func maskHexWords(l string, offsets bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(l); i++ {
		if l[i] != '0' || l[i+1] != 'x' {
			continue
		}
		start, min, tok := i, 6, tokAddr
		if offsets {
			if i == 0 || l[i-1] != '+' {
				continue
			}
			start, min, tok = i-1, 1, "+<off>"
		} else if i > 0 && isWordByte(l[i-1]) {
			continue
		}
		j := i + 2
		for j < len(l) && isHex(l[j]) {
			j++
		}
		if j-(i+2) < min || j < len(l) && isWordByte(l[j]) {
			i = j - 1
			continue
		}
		b.WriteString(l[last:start])
		b.WriteString(tok)
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// maskTmp replaces a temporary directory and the first name in it, which
// is random, with <tmp>: /tmp/go-build123/b001 (go build), /tmp/TestFoo12/001
// (t.TempDir), /tmp/tmp.AbC (mktemp), /tmp/tmpab_12 (Python's tempfile), and
// the same under /var/tmp, /private (macOS) and macOS's /var/folders/xy/z/T.
// The directory must not continue a longer name or path: /root/tmp/x stays,
// and so do <tmp>/tmp/x and <workdir>/tmp/x (a directory named tmp in a
// masked one), which keeps normalization a fixed point.
func maskTmp(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if l[i] != '/' || i > 0 && (isWordByte(l[i-1]) || l[i-1] == '.' || l[i-1] == '~' || l[i-1] == '-') ||
			strings.HasSuffix(l[:i], tokTmp) || strings.HasSuffix(l[:i], tokWorkdir) {
			continue
		}
		n := tmpRootLen(l[i:])
		if n == 0 {
			continue
		}
		j := i + n
		for j < len(l) && !strings.ContainsRune(" \t\v\f/'\"():;,[]<>=|", rune(l[j])) {
			j++
		}
		if j == i+n {
			continue // no name in the directory
		}
		b.WriteString(l[last:i])
		b.WriteString(tokTmp)
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// tmpRootLen returns the length of the temporary directory that s starts
// with, up to and including its final slash, or 0.
func tmpRootLen(s string) int {
	n := 0
	if strings.HasPrefix(s, "/private/") {
		n = len("/private")
	}
	t := s[n:]
	switch {
	case strings.HasPrefix(t, "/tmp/"):
		return n + len("/tmp/")
	case strings.HasPrefix(t, "/var/tmp/"):
		return n + len("/var/tmp/")
	case strings.HasPrefix(t, "/var/folders/"):
		k := len("/var/folders/")
		for range 2 { // two names, then T
			start := k
			for k < len(t) && t[k] != '/' && !isSpace(t[k]) {
				k++
			}
			if k == start || k == len(t) || t[k] != '/' {
				return 0
			}
			k++
		}
		if strings.HasPrefix(t[k:], "T/") {
			return n + k + len("T/")
		}
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

// maskPIDWords masks the number after a word "pid" (any case) and spaces,
// "=" or ":": "pid=11827", "(pid 11098)", "PID: 42". The regexp that says
// the same is pidSpec, in the tests.
func maskPIDWords(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+3 < len(l); i++ {
		if (l[i]|0x20) != 'p' || (l[i+1]|0x20) != 'i' || (l[i+2]|0x20) != 'd' || i > 0 && isWordByte(l[i-1]) {
			continue
		}
		j := i + 3
		for j < len(l) && (l[j] == ' ' || l[j] == '=' || l[j] == ':') {
			j++
		}
		if j == i+3 {
			continue
		}
		k := j
		for k < len(l) && isDigit(l[k]) {
			k++
		}
		if k == j || k < len(l) && isWordByte(l[k]) {
			continue
		}
		b.WriteString(l[last:j])
		b.WriteString(tokPID)
		last = k
		i = k - 1
	}
	return spliced(&b, l, last)
}

// maskSyslogPID masks the process ID of a syslog-style line, "name[pid]: "
// as its first, second or third field: "sshd[1234]: Accepted",
// "<time> host sshd[1234]: Accepted" (syslog, journalctl), "<time>
// cron[77]: …". Elsewhere "x[12]: " is an index, and stays; so does make's
// recursion level, "make[1]: ".
func maskSyslogPID(l string) string {
	start := 0
	for field := 0; field < 3 && start < len(l); field++ {
		end := strings.IndexByte(l[start:], ' ')
		if end < 0 {
			return l
		}
		end += start
		tok := l[start:end]
		// "name[pid]:", or after the line's time "name[pid]" alone: a
		// service's log line ("<time> svc[4242] ERROR …").
		colon := strings.HasSuffix(tok, "]:")
		if colon || field > 0 && strings.HasPrefix(l, tokTime) && strings.HasSuffix(tok, "]") {
			cut := 1
			if colon {
				cut = 2
			}
			open := strings.LastIndexByte(tok, '[')
			if open <= 0 || open+1 > len(tok)-cut {
				start = end + 1 // "]:" alone, or "[]": no name[pid]
				continue
			}
			digits := tok[open+1 : len(tok)-cut]
			name := tok[:open]
			if digits != "" && strings.Trim(digits, "0123456789") == "" && isSyslogName(name) &&
				name != "make" && name != "gmake" && !strings.HasSuffix(name, "/make") {
				return l[:start+open+1] + tokPID + l[end-cut:]
			}
		}
		start = end + 1
	}
	return l
}

// isSyslogName reports whether s names a program as syslog shows it: a
// letter, then letters, digits and ._-@/.
func isSyslogName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '.' && c != '-' && c != '@' && c != '/' {
			return false
		}
	}
	return true
}

// maskPorts masks ephemeral ports (see maskPort) after an IPv4 address,
// localhost or a bracketed IPv6 address ("127.0.0.1:45007",
// "[::1]:61000"), and in curl's "port 42413": five digits, a whole word.
// The regexps that say the same are portHostSpec and portWordSpec, in the
// tests.
func maskPorts(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+5 < len(l); i++ {
		c := l[i]
		if c != ':' && c != ' ' {
			continue
		}
		j := i + 1
		for j < len(l) && j < i+7 && isDigit(l[j]) {
			j++
		}
		if j-(i+1) != 5 || j < len(l) && isWordByte(l[j]) {
			continue
		}
		host := c == ':' && portHost(l[:i]) || c == ' ' && strings.HasSuffix(l[:i], "port") && (i == 4 || !isWordByte(l[i-5]))
		if !host {
			continue
		}
		b.WriteString(l[last : i+1])
		b.WriteString(maskPort("", "", l[i+1:j]))
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// portHost reports whether s ends in a host a port may follow: an IPv4
// address, localhost, or an IPv6 address in brackets, each a whole word.
func portHost(s string) bool {
	if strings.HasSuffix(s, "localhost") {
		return len(s) == 9 || !isWordByte(s[len(s)-10])
	}
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open < 0 {
			return false
		}
		for k := open + 1; k < len(s)-1; k++ {
			if !isHex(s[k]) && s[k] != ':' && s[k] != '.' {
				return false
			}
		}
		return true
	}
	end := len(s)
	for group := 0; group < 4; group++ {
		k := end
		for k > 0 && isDigit(s[k-1]) {
			k--
		}
		if n := end - k; n < 1 || n > 3 {
			return false
		}
		if group == 3 {
			return k == 0 || !isWordByte(s[k-1])
		}
		if k == 0 || s[k-1] != '.' {
			return false
		}
		end = k - 1
	}
	return false
}

// hasParenDigit reports whether l has "(" and a digit: where a duration in
// parentheses can start.
func hasParenDigit(l string) bool { return hasDigitAfter(l, '(') }

// hasSpaceDigit reports whether l has a space and a digit: where a duration
// after a word can start.
func hasSpaceDigit(l string) bool { return hasDigitAfter(l, ' ') }

// spliced ends a line rewritten into b: the rest of l after last, or l
// itself when nothing was replaced (last == 0).
func spliced(b *strings.Builder, l string, last int) string {
	if last == 0 {
		return l
	}
	b.WriteString(l[last:])
	return b.String()
}

// hasDigitAfter reports whether l has the byte c followed by a digit.
func hasDigitAfter(l string, c byte) bool {
	for i := 0; i+1 < len(l); i++ {
		if l[i] == c && isDigit(l[i+1]) {
			return true
		}
	}
	return false
}

// vitestMarks start the lines of vitest's (and similar runners') report
// that end in the time a test or a file took: "✓ mul 5ms", "× add 28ms",
// "❯ calc.test.mjs (3 tests | 1 failed) 113ms".
var vitestMarks = []string{"✓ ", "× ", "❯ ", "↓ ", "✕ "}

// isVitestTimed reports whether l is such a line, or vitest's "Duration"
// summary, whose every figure is a time.
func isVitestTimed(l string) bool {
	t := strings.TrimLeft(l, " ")
	if strings.HasPrefix(t, "Duration ") {
		return true
	}
	if !strings.HasSuffix(l, "ms") && !strings.HasSuffix(l, "s") {
		return false
	}
	for _, m := range vitestMarks {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

// maskVitestTimes masks the time at the end of a test's or a file's line,
// and every time of the Duration line ("Duration 2.66s (transform 352ms,
// setup 0ms, …)").
func maskVitestTimes(l string) string {
	if strings.HasPrefix(strings.TrimLeft(l, " "), "Duration ") {
		return reVitestTime.ReplaceAllString(l, tokDur)
	}
	if loc := reVitestTail.FindStringIndex(l); loc != nil {
		return l[:loc[0]] + " " + tokDur
	}
	return l
}

var (
	reVitestTime = lazyre.New(`\b\d+(?:\.\d+)?(?:ms|s)\b`)
	reVitestTail = lazyre.New(` \d+(?:\.\d+)?(?:ms|s)$`)
)
