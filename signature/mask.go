package signature

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
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
		return strings.Contains(l, "]: ") || strings.Contains(l, "]:\t") ||
			strings.HasPrefix(l, tokTime) && (strings.Contains(l, "] ") || strings.Contains(l, "]\t"))
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
