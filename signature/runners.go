package signature

import (
	"encoding/json"
	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"strings"
)

// The rules for pytest, cargo test, go test -json, node's test counts and
// random directory names, from the captures of testdata/gen2.sh.

var (
	// pytest's summary, "== 1 failed, 2 passed in <dur> ==" (its "="
	// padding follows the width of the rest) or, with -q, without padding.
	rePytestSummary = lazyre.New(`^(?:=+ )?(\d+ [a-z]+(?:, \d+ [a-z]+)*)(?: in (<dur>)(?: \(<time>\))?)?(?: =+)?$`)
	// "collected 3 items", "collecting ... collected 3 items", and with
	// deselection "collected 5 items / 2 deselected / 3 selected".
	rePytestCollected = lazyre.New(`\bcollected \d+ items?(?: / \d+ deselected)?(?: / \d+ selected)?`)
	// pytest -v: "test_calc.py::test_add FAILED    [ 66%]".
	rePytestVerbose = lazyre.New(`^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?: \([^)]*\))? *\[ *\d+%\]$`)
	// pytest-xdist -v: "[gw0] [ 33%] PASSED test_calc.py::test_sub".
	rePytestXdistVerbose = lazyre.New(`^\[gw\d+\] \[ *\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)`)
	// pytest's progress: "test_calc.py .F.    [100%]", "...F..   [ 50%]".
	rePytestProgress = lazyre.New(`^(?:\S+\.py )?[.FEsxX]+ *\[ *\d+%\]$`)
	// pytest-xdist's workers: "gw0 I / gw1 I", "gw0 [9] / gw1 [9]", "[gw1]".
	rePytestWorkers = lazyre.New(`^gw\d+ (?:I|C|ok|\[\d+\])(?: / gw\d+ (?:I|C|ok|\[\d+\]))*$`)
	reXdistWorker   = lazyre.New(`\[gw\d+\]`)

	// cargo test: "thread 'tests::adds' (19173) panicked at src/lib.rs:N:N:"
	reRustThread = lazyre.New(`\bthread '([^']*)' \(\d+\) panicked`)
	reRustTests  = lazyre.New(`^running \d+ tests?$`)
	// cargo test -q's progress: "." for each passing test, and with failures
	// the count so far: ".... 5/6".
	reRustProgress = lazyre.New(`^\.* ?\d+/\d+$`)
	// "test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0
	// filtered out; finished in <dur>"
	reRustResult = lazyre.New(`^test result: (\w+)\. (.*)$`)

	// tsc: "calc.ts(5,14): error TS2322: …", a file's line and column.
	reTscPos = lazyre.New(`(\.[A-Za-z][\w+-]*)\(\d+,\d+\):`)
	// eslint's stylish rows: "  2:7   error  'x' is assigned …  no-unused-vars",
	// aligned in columns as wide as the widest row.
	reESLintRow = lazyre.New(`^\s+\d+:\d+\s+(error|warning)\s+(.*\S)\s\s+(\S+)$`)

	// node --test: "# tests 6", "ℹ pass 2" (the fail count stays), and the
	// TAP plan "1..6".
	reNodeCount = lazyre.New(`^(# |ℹ )(tests|suites|pass|skipped|todo|cancelled) \d+$`)
	reTAPPlan   = lazyre.New(`^(\s*)1\.\.\d+$`)
)

// pytestDropped are the counts of pytest's summary that say nothing about
// the failure: an agent that adds a passing test changes them.
var pytestDropped = map[string]bool{"passed": true, "skipped": true, "deselected": true, "xfailed": true, "xpassed": true}

func maskPytestSummary(l string) string {
	m := rePytestSummary.FindStringSubmatch(l)
	if m == nil {
		return l
	}
	var kept []string
	for _, part := range strings.Split(m[1], ", ") {
		_, word, _ := strings.Cut(part, " ")
		switch {
		case pytestDropped[word]:
		case word == "failed" || word == "error" || word == "errors" || word == "warning" || word == "warnings":
			kept = append(kept, part)
		default:
			return l // not pytest's summary
		}
	}
	out := strings.Join(kept, ", ")
	if out == "" {
		out = "no failures"
	}
	if m[2] != "" {
		out += " in " + tokDur
	}
	if strings.HasPrefix(l, "=") {
		out = "== " + out + " =="
	}
	return out
}

func maskRustResult(l string) string {
	m := reRustResult.FindStringSubmatch(l)
	if m == nil {
		return l
	}
	var kept []string
	for _, part := range strings.Split(m[2], "; ") {
		f := strings.Fields(part)
		if len(f) >= 2 && isDigit(f[0][0]) && (f[1] == "passed" || f[1] == "ignored" || f[1] == "measured" || f[1] == "filtered") {
			continue
		}
		kept = append(kept, part)
	}
	return "test result: " + m[1] + ". " + strings.Join(kept, "; ")
}

// runnerRules are applied after the rules of mask.go.
var runnerRules = []rule{
	{"pytest-summary", fSummary, nil, maskPytestSummary},
	{"pytest-collected", fCollected, nil, replace(rePytestCollected, "collected N items")},
	{"pytest-verbose", 0, func(l string) bool { return strings.HasSuffix(l, "%]") }, replace(rePytestVerbose, "$1 $2")},
	{"pytest-xdist", 0, func(l string) bool { return strings.HasPrefix(l, "[gw") }, replace(rePytestXdistVerbose, "$1 $2")},
	{"xdist-worker", fGw, nil, replace(reXdistWorker, "[gw<N>]")},
	{"rust-thread", fThread, nil, replace(reRustThread, "thread '$1' (<tid>) panicked")},
	{"rust-tests", 0, func(l string) bool { return strings.HasPrefix(l, "running ") }, replace(reRustTests, "running N tests")},
	{"rust-result", 0, func(l string) bool { return strings.HasPrefix(l, "test result: ") }, maskRustResult},
	{"tsc-pos", fParenColon, nil, replace(reTscPos, "$1(N,N):")},
	{"eslint-row", fErrWarn, func(l string) bool { return strings.HasPrefix(l, " ") },
		replace(reESLintRow, "  N:N  $1  $2  $3")},
	{"node-count", 0, func(l string) bool { return strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "ℹ ") }, replace(reNodeCount, "$1$2 N")},
	{"tap-plan", fDotDot1, nil, replace(reTAPPlan, "${1}1..N")},
}

// isRunnerNoise reports whether a line only says that tests ran or passed,
// for pytest and pytest-xdist: progress lines, passing -v lines, workers.
func isRunnerNoise(l string) bool {
	switch {
	case strings.HasSuffix(l, "%]") && rePytestProgress.MatchString(l):
		return true
	case strings.HasSuffix(l, " PASSED") || strings.HasSuffix(l, " SKIPPED") || strings.HasSuffix(l, " XFAIL"),
		strings.HasPrefix(l, "PASSED ") || strings.HasPrefix(l, "SKIPPED ") || strings.HasPrefix(l, "XFAIL "):
		return strings.Count(l, " ") == 1 && strings.Contains(l, "::")
	case strings.HasPrefix(l, "gw"):
		return rePytestWorkers.MatchString(l)
	case strings.HasPrefix(l, ".") || l != "" && isDigit(l[0]):
		return reRustProgress.MatchString(l)
	}
	return false
}

// goTestEvent is a line of go test -json.
type goTestEvent struct {
	Action string
	Output *string
}

// goJSONLine reads a line of go test -json: the output it carries, and
// whether it is one. An event that carries no output (start, run, pass,
// fail, with their times and elapsed seconds) is one with no lines; an
// output event stands for its text, so that go test -json normalizes as
// go test -v does.
func goJSONLine(raw []byte) (lines []string, ok bool) {
	if len(raw) < 2 || raw[0] != '{' || !strings.Contains(string(raw[:min(len(raw), 200)]), `"Action":"`) {
		return nil, false
	}
	var ev goTestEvent
	if json.Unmarshal(raw, &ev) != nil || ev.Action == "" {
		return nil, false
	}
	if ev.Action != "output" || ev.Output == nil {
		return nil, true
	}
	return strings.Split(strings.TrimSuffix(*ev.Output, "\n"), "\n"), true
}

// maskRandomDirs masks the random part of a directory name that mktemp or
// the like made outside the temporary directory (which maskTmp masks
// whole): "<workdir>/work/tmp.syyUvcAkkh/x" becomes
// "<workdir>/work/tmp.<rand>/x". A directory's name (a path component
// followed by "/") is random in its last part after ".", "-" or "_" (or
// whole, from 8 bytes and with a digit) when that part has 6 to 32 letters
// and digits, a lower-case letter, and an upper-case letter after its first
// byte, or of one case with digits (oneCaseRandom): names people choose
// for directories rarely look like that, and mktemp's and build tools'
// mostly do. At the end of a path only mktemp's default name, "tmp." and
// 10 letters and digits, and a part of capitals and digits after "-", "."
// or "_", are masked: "pkg.TestHang" is a name.
func maskRandomDirs(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if l[i] != '/' {
			continue
		}
		j := i + 1
		for j < len(l) && (isWordByte(l[j]) || l[j] == '.' || l[j] == '-') {
			j++
		}
		if j == i+1 {
			continue
		}
		comp := l[i+1 : j]
		start := strings.LastIndexAny(comp, ".-_") + 1
		part := comp[start:]
		var random bool
		if j < len(l) && l[j] == '/' {
			random = looksRandom(part) && (start > 0 || len(part) >= 8 && strings.ContainsAny(part, "0123456789"))
		} else {
			// At a path's end, mktemp's default name, or a part of capitals
			// and digits after "-", "." or "_" ("build-0GP586NN").
			random = strings.HasPrefix(comp, "tmp.") && len(part) == 10 && start == 4 && isAlnumString(part) ||
				start > 0 && capsRandom(part)
		}
		if !random {
			i = j - 1
			continue
		}
		b.WriteString(l[last : i+1+start])
		b.WriteString("<rand>")
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

func isAlnumString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func looksRandom(s string) bool {
	if len(s) < 6 || len(s) > 32 {
		return false
	}
	n, ok := countName(s)
	mixed := n.lower > 0 && (n.upper > 1 || n.upper == 1 && !n.upperAt0)
	return ok && (mixed || oneCaseRandom(len(s), n))
}

// nameCounts are the letters and digits of a name.
type nameCounts struct {
	lower, upper, digits int
	upperAt0             bool // its first byte is a capital
}

// countName counts s's letters and digits; ok is false when s has any
// other byte.
func countName(s string) (n nameCounts, ok bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			n.lower++
		case c >= 'A' && c <= 'Z':
			n.upper++
			n.upperAt0 = n.upperAt0 || i == 0
		case isDigit(c):
			n.digits++
		default:
			return n, false
		}
	}
	return n, true
}

// oneCaseRandom reports whether a name of size letters and digits, of one
// case only, looks random as names of capitals and digits do ("0XIPUPMY"):
// 8 or more, a digit among three or more letters.
func oneCaseRandom(size int, n nameCounts) bool {
	return size >= 8 && size <= 32 && n.digits > 0 && (n.lower == 0 && n.upper >= 3 || n.upper == 0 && n.lower >= 3 && n.digits >= 2)
}

// capsRandom reports whether s is a random name of capitals and digits.
func capsRandom(s string) bool {
	n, ok := countName(s)
	return ok && n.lower == 0 && oneCaseRandom(len(s), n)
}
