package signature

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

// A line is a cleaned and masked line of output, with what the passes over
// several lines need to know about it, worked out by classify while the text
// is at hand. The passes then look at these and not at the text, which keeps
// a long output's text out of the cache until it is joined.
type line struct {
	text   string
	indent int // leading spaces and tabs
	kind   kind
}

// kind is a set of facts about a line.
type kind uint32

const (
	kBlank       kind = 1 << iota
	kNoise            // a line that only says that something passed (isNoise)
	kGoRun            // "=== RUN Test", which starts a go test -v output
	kGoEvent          // "=== RUN/PAUSE/CONT/NAME Test"
	kGoResult         // "--- FAIL/PASS/SKIP: Test (…", at any indentation
	kGoEnd            // the end of a package's output: "FAIL", "PASS", "FAIL\tpkg", "ok pkg"
	kFailHeader       // isFailHeader
	kTestAt           // node's "test at file:line"
	kTAPSubtest       // "# Subtest: name"
	kTAPPoint         // "ok N - name" or "not ok N - name"
	kTAPPass          // "ok N - name"
	kYAMLStart        // "---"
	kYAMLEnd          // "..."
	kEqualsRule       // twenty "=" or more
	kDashRule         // twenty "-" or more
	kPyFail           // "FAIL: test", "ERROR: test", "UNEXPECTED SUCCESS: test"
	kPyRan            // "Ran N tests in …"
	kPyVerbose        // "test (…) ... FAIL"
	kRaceRule         // "==================", around a data race report
	kRaceWarning      // "WARNING: DATA RACE"
	kPytestHead       // "____ test_add ____", pytest's header of a failure
	kPytestEnd        // "==== short test summary info ====" and the like
	kFailedLine       // "FAILED t.py::x - msg", "tests::x --- FAILED", "test x ... FAILED"
	kCargoHead        // "---- tests::adds stdout ----", cargo test's header of a failure
	kCargoEnd         // "failures:", before and after cargo test's failure blocks
)

func classify(text string) line {
	l := line{text: text, indent: indent(text)}
	if text == "" {
		l.kind = kBlank
		return l
	}
	t := text[l.indent:]
	var k kind
	if isNoise(text) {
		k |= kNoise
	}
	if strings.HasPrefix(t, "--- ") && isGoResult(text) {
		k |= kGoResult
	}
	if isFailHeader(text) {
		k |= kFailHeader
	}
	if isTAPPoint(text) {
		k |= kTAPPoint
		if strings.HasPrefix(t, "ok") {
			k |= kTAPPass
		}
	}
	switch {
	case strings.HasPrefix(t, "test at "):
		k |= kTestAt
	case strings.HasPrefix(t, "# Subtest: "):
		k |= kTAPSubtest
	case t == "---":
		k |= kYAMLStart
	case t == "...":
		k |= kYAMLEnd
	}
	if l.indent == 0 {
		k |= marginKind(text) | runnerKind(text)
	}
	l.kind = k
	return l
}

// marginKind returns the kinds of a line at the left margin for go test,
// unittest and the race detector.
func marginKind(text string) kind {
	var k kind
	switch {
	case strings.HasPrefix(text, "=== "):
		if strings.HasPrefix(text, "=== RUN ") {
			k |= kGoRun
		}
		if reGoEvent.MatchString(text) {
			k |= kGoEvent
		}
	case text == "FAIL", text == "PASS", strings.HasPrefix(text, "FAIL\t"), strings.HasPrefix(text, "ok "):
		k |= kGoEnd
	case strings.HasPrefix(text, "FAIL: "), strings.HasPrefix(text, "ERROR: "), strings.HasPrefix(text, "UNEXPECTED SUCCESS: "):
		k |= kPyFail
	case strings.HasPrefix(text, "Ran ") && rePyRan.MatchString(text):
		k |= kPyRan
	case text == "WARNING: DATA RACE":
		k |= kRaceWarning
	case strings.Contains(text, " ... ") && rePyVerbose.MatchString(text):
		k |= kPyVerbose
	}
	if text == "==================" {
		k |= kRaceRule
	}
	if isRule(text, '=', 20) {
		k |= kEqualsRule
	}
	if isRule(text, '-', 20) {
		k |= kDashRule
	}
	return k
}

// runnerKind returns the kinds of a line at the left margin for cargo test
// and pytest.
func runnerKind(text string) kind {
	switch {
	case strings.HasPrefix(text, "---- ") && strings.HasSuffix(text, " stdout ----"):
		return kCargoHead
	case text == "failures:":
		return kCargoEnd
	case text[0] == '_' && isPadded(text, '_'):
		return kPytestHead
	case text[0] == '=' && (isPadded(text, '=') || isRule(text, '=', 20)):
		return kPytestEnd
	case strings.HasPrefix(text, "FAILED ") || strings.HasPrefix(text, "ERROR ") ||
		strings.HasSuffix(text, " --- FAILED") || strings.HasPrefix(text, "test ") && strings.HasSuffix(text, " ... FAILED"):
		return kFailedLine
	}
	return 0
}

func kinds(lines []line) kind {
	var k kind
	for _, l := range lines {
		k |= l.kind
	}
	return k
}

// isPadded reports whether l is "ccc text ccc": pytest's headings, padded
// with c to the terminal's width.
func isPadded(l string, c byte) bool {
	return len(l) >= 8 && l[0] == c && l[1] == c && l[2] == c && l[len(l)-1] == c && l[len(l)-2] == c &&
		l[len(l)-3] == c && strings.Contains(l, " ")
}

var (
	reGoEvent  = lazyre.New(`^=== (?:RUN|PAUSE|CONT|NAME)(?:\s+(\S+))?$`)
	reGoOK     = lazyre.New(`^ok\s+\S+\s+(?:<dur>|\(cached\)|\[no tests to run\])`)
	reGoNoTest = lazyre.New(`^\?\s+\S+\s+\[no test files\]$`)
	rePyRan    = lazyre.New(`^Ran \d+ tests? in `)
	// unittest -v: "test_add (__main__.CalcTest.test_add) ... FAIL".
	rePyVerbose = lazyre.New(`^\S+ \(\S+\) \.\.\. (?:FAIL|ERROR|skipped|expected failure|unexpected success)`)
)

// goResult reads go test's result line of a test, "--- FAIL: TestX (…"
// ("--- PASS", "--- SKIP"), at any indentation: the indentation, the
// verb and the test's name, and whether it is one. The regexp that says the
// same is goResultSpec, in the tests.
func goResult(l string) (indent, verb, name string, ok bool) {
	i := 0
	for i < len(l) && isRESpace(l[i]) {
		i++
	}
	rest := l[i:]
	if len(rest) < len("--- FAIL: ") || rest[:4] != "--- " || rest[8:10] != ": " {
		return "", "", "", false
	}
	verb = rest[4:8]
	if verb != "FAIL" && verb != "PASS" && verb != "SKIP" {
		return "", "", "", false
	}
	j := 10
	for j < len(rest) && !isRESpace(rest[j]) {
		j++
	}
	if j == 10 || !strings.HasPrefix(rest[j:], " (") {
		return "", "", "", false
	}
	return l[:i], verb, rest[10:j], true
}

// isGoResult reports whether l is a result line (see goResult).
func isGoResult(l string) bool {
	_, _, _, ok := goResult(l)
	return ok
}

// isRESpace reports whether c is a space as \s is in a regexp: a space,
// tab, newline, form feed or carriage return.
func isRESpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// isNoise reports whether a line only says that something passed, or varies
// and says nothing: go test's "=== RUN", "--- PASS", "PASS", "ok pkg",
// "? pkg [no test files]" and "-test.shuffle N"; unittest's progress dots and
// "... ok"; node's "✔ passed (1.2ms)". (Passing TAP test points go with
// their blocks, in tapBlocks.)
func isNoise(l string) bool {
	t := trimIndent(l)
	switch {
	case l == "PASS",
		strings.HasPrefix(l, "=== ") && reGoEvent.MatchString(l),
		strings.HasPrefix(t, "--- PASS: "),
		strings.HasPrefix(l, "ok") && reGoOK.MatchString(l),
		strings.HasPrefix(l, "?") && reGoNoTest.MatchString(l),
		strings.HasPrefix(l, "-test.shuffle "),
		l != "" && l != "..." && isProgressDots(l),
		strings.HasSuffix(l, " ... ok"),
		strings.HasPrefix(t, "✔ "),
		isRunnerNoise(l):
		return true
	}
	return false
}

// isProgressDots reports whether l is made of unittest's progress letters
// only: ".", "F", "E", "s", "x", "u".
func isProgressDots(l string) bool {
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '.', 'F', 'E', 's', 'x', 'u':
		default:
			return false
		}
	}
	return true
}

// isFailHeader reports whether a line opens an indented failure block: go
// test's "--- FAIL: TestX (…)" (and "--- SKIP"), node's "✖ test (…)".
func isFailHeader(l string) bool {
	t := trimIndent(l)
	return strings.HasPrefix(t, "--- FAIL: ") || strings.HasPrefix(t, "--- SKIP: ") ||
		strings.HasPrefix(t, "✖ ") && t != "✖ failing tests:"
}

// isTAPPoint reports whether l is a TAP test point, numbered N by the tap rule.
func isTAPPoint(l string) bool {
	t := trimIndent(l)
	t, _ = strings.CutPrefix(t, "not ")
	return strings.HasPrefix(t, "ok N") && (len(t) == 4 || !isWordByte(t[4]))
}

func isRule(l string, c byte, n int) bool {
	if len(l) < n {
		return false
	}
	for i := 0; i < len(l); i++ {
		if l[i] != c {
			return false
		}
	}
	return true
}

func indent(l string) int {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return i
}

// trimIndent returns l without its indentation (spaces and tabs).
func trimIndent(l string) string { return l[indent(l):] }
