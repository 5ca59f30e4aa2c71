package signature

import (
	"bytes"
	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"slices"
	"strings"
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

// structure applies the passes that look at more than one line: the lines of
// a verbose go test run go back under the test that wrote them, the lines of
// passing tests go, and independent failure blocks are put in order. Each
// pass is linear in the number of lines, but for the sorting of blocks.
func structure(lines []line, s *scratch) []line {
	has := kinds(lines)
	if has&kGoRun != 0 {
		lines = goVerbose(lines, s)
		has = kinds(lines)
	}
	if has&kNoise != 0 {
		lines = slices.DeleteFunc(lines, func(l line) bool { return l.kind&kNoise != 0 })
	}
	if has&kTAPSubtest != 0 {
		lines = tapBlocks(lines, s)
	}
	if has&kFailHeader != 0 {
		lines = sortIndented(lines, s)
	}
	if has&(kPyFail|kPyVerbose) != 0 {
		lines = sortPython(lines, s)
	}
	if has&kRaceWarning != 0 {
		lines = sortRaces(lines, s)
	}
	if has&kPytestHead != 0 {
		lines = sortBlocks(lines, kPytestHead, kPytestEnd, s)
	}
	if has&kCargoHead != 0 {
		lines = sortBlocks(lines, kCargoHead, kCargoEnd, s)
	}
	if has&kFailedLine != 0 {
		lines = sortFailedLines(lines, s)
	}
	return lines
}

// isPadded reports whether l is "ccc text ccc": pytest's headings, padded
// with c to the terminal's width.
func isPadded(l string, c byte) bool {
	return len(l) >= 8 && l[0] == c && l[1] == c && l[2] == c && l[len(l)-1] == c && l[len(l)-2] == c &&
		l[len(l)-3] == c && strings.Contains(l, " ")
}

// sortBlocks sorts the failure blocks that start with a line of kind head
// at the left margin and run up to the next one or to a line of kind end:
// pytest's ("____ test_x ____" up to a "====" heading), which pytest-xdist
// writes in the order its workers finished, and cargo test's ("---- x
// stdout ----" up to "failures:"), in the order its tests finished.
func sortBlocks(lines []line, head, end kind, s *scratch) []line {
	g := s.regrouper(len(lines), 0)
	for i := 0; i < len(lines); {
		if lines[i].kind&head == 0 || lines[i].indent > 0 {
			g.line(lines[i])
			i++
			continue
		}
		stop := i + 1
		for stop < len(lines) && lines[stop].kind&(head|end) == 0 {
			stop++
		}
		g.block(lines[i:stop])
		i = stop
	}
	return g.result()
}

// sortFailedLines sorts runs of one-line failure reports: pytest's short
// summary ("FAILED t.py::x - msg"), cargo test's ("tests::x --- FAILED",
// "test tests::x ... FAILED"), which follow the order tests finished in.
func sortFailedLines(lines []line, s *scratch) []line {
	g := s.regrouper(len(lines), 0)
	for i, l := range lines {
		if l.kind&kFailedLine != 0 {
			g.block(lines[i : i+1 : i+1])
		} else {
			g.line(l)
		}
	}
	return g.result()
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

// goVerbose rewrites the output of go test -v into the shape of go test
// without -v, so that the interleaving of parallel tests does not matter:
// the lines a test logged (indented, after "=== RUN/CONT/NAME Test") move
// under its "--- FAIL" or "--- SKIP" line, indented one level deeper than it,
// and the lines of passing tests go. Lines of a test that never reported
// (a panic, a timeout) stay, at the end of their package's output.
func goVerbose(lines []line, s *scratch) []line {
	out := s.take(len(lines))
	logs := map[string][]line{}
	var order []string // test names, in the order they started to log (repeats are harmless)
	flush := func() {
		for _, name := range order {
			out = append(out, logs[name]...)
			delete(logs, name)
		}
		order = order[:0]
	}
	cur := ""
	for _, l := range lines {
		switch {
		case l.kind&kGoEvent != 0:
			cur = reGoEvent.FindStringSubmatch(l.text)[1]
		case l.kind&kGoResult != 0:
			indent, verb, name, _ := goResult(l.text)
			out = append(out, l)
			if verb != "PASS" {
				for _, b := range logs[name] {
					out = append(out, classify(indent+"    "+strings.TrimPrefix(b.text, "    ")))
				}
			}
			delete(logs, name)
			cur = ""
		case cur != "" && l.indent > 0:
			if _, ok := logs[cur]; !ok {
				order = append(order, cur)
			}
			logs[cur] = append(logs[cur], l)
		default:
			if l.kind&kGoEnd != 0 {
				flush() // the end of a package
			}
			out = append(out, l)
		}
	}
	flush()
	s.keep(out)
	return out
}

// A regrouper collects runs of blocks that are adjacent but for blank lines,
// and writes each run out sorted (and, with dedupe, without repeats). The
// blank lines between blocks keep their places.
type regrouper struct {
	out     []line
	blocks  [][]line
	gaps    [][]line // gaps[k] lies between blocks[k] and blocks[k+1]; nil while every gap is empty
	pending []line   // blank lines since the last block or line
	dedupe  bool
	s       *scratch // where the keys are made, if not nil
	// scratched says that out and blocks are the scratch's, and go back to
	// it with the result.
	scratched bool
}

// scratch is memory that the passes over a window keep for the next: a long
// output is many windows, and the largest slices of the passes are then
// allocated once, not once a window. Each pass writes the lines it returns
// to one of two buffers, the one the pass before did not write to (which
// may hold the pass's input): the lines structure returns are valid until
// its next call.
type scratch struct {
	next   []int32 // nextShallower's
	counts []int32 // prefixCount's
	lines  [2][]line
	cur    int // the buffer of lines taken last
	blocks [][]line
	keys   []byte
	keyed  []keyedBlock
}

// take returns an empty slice, with room for n lines, for a pass to write
// the lines it returns to; the pass gives it back to keep.
func (s *scratch) take(n int) []line {
	s.cur = 1 - s.cur
	return slices.Grow(s.lines[s.cur][:0], n)
}

// keep keeps out, the lines a pass wrote to the slice take gave it, for
// the next pass but one; the lines of the window before after them go.
func (s *scratch) keep(out []line) {
	if old := s.lines[s.cur]; len(old) > len(out) {
		clear(old[len(out):])
	}
	s.lines[s.cur] = out
}

// regrouper returns a regrouper for a pass over n lines, about blocks of
// them blocks, whose slices are the scratch's.
func (s *scratch) regrouper(n, blocks int) *regrouper {
	return &regrouper{out: s.take(n), blocks: slices.Grow(s.blocks[:0], blocks), s: s, scratched: true}
}

// newRegrouper returns a regrouper for n lines, of which about blocks
// blocks.
func newRegrouper(n, blocks int) *regrouper {
	return &regrouper{out: make([]line, 0, n), blocks: make([][]line, 0, blocks)}
}

func (g *regrouper) block(b []line) {
	if len(g.blocks) > 0 {
		if g.pending != nil && g.gaps == nil {
			g.gaps = make([][]line, len(g.blocks)-1, cap(g.blocks))
		}
		if g.gaps != nil {
			g.gaps = append(g.gaps, g.pending)
		}
	} else {
		g.out = append(g.out, g.pending...)
	}
	g.pending = nil
	g.blocks = append(g.blocks, b)
}

func (g *regrouper) line(l line) {
	if l.kind&kBlank != 0 {
		g.pending = append(g.pending, l)
		return
	}
	if len(g.blocks) > 0 || g.pending != nil {
		g.flush()
	}
	g.out = append(g.out, l)
}

// A keyedBlock is where a block's key is in the regrouper's keys, and the
// block's place among the blocks.
type keyedBlock struct {
	start, end, i int32
}

func (g *regrouper) flush() {
	if len(g.blocks) > 1 {
		// The key of a block is the block as the Writer will write it,
		// without blank lines, so that the next normalization sorts it the
		// same. The keys are parts of one slice of bytes, the scratch's if
		// there is one.
		var buf []byte
		var keys []keyedBlock
		if g.s != nil {
			buf, keys = g.s.keys[:0], g.s.keyed[:0]
		}
		size := 0
		for _, block := range g.blocks {
			for _, l := range block {
				if l.kind&kBlank == 0 {
					size += len(l.text) + 1
				}
			}
		}
		buf = slices.Grow(buf, size)
		keys = slices.Grow(keys, len(g.blocks))
		for i, block := range g.blocks {
			start := len(buf)
			for _, l := range block {
				if l.kind&kBlank != 0 {
					continue // the Writer drops blank lines
				}
				buf = append(buf, l.text...)
				buf = append(buf, '\n')
			}
			keys = append(keys, keyedBlock{int32(start), int32(len(buf)), int32(i)})
		}
		key := func(kb keyedBlock) []byte { return buf[kb.start:kb.end] }
		slices.SortFunc(keys, func(a, b keyedBlock) int {
			if c := bytes.Compare(key(a), key(b)); c != 0 {
				return c
			}
			return int(a.i - b.i) // stable
		})
		// With dedupe, a repeat goes, and so does the last gap (a gap
		// that is not written out whatever its place).
		n := 0
		for k, kb := range keys {
			if g.dedupe && k > 0 && bytes.Equal(key(kb), key(keys[k-1])) {
				continue
			}
			g.out = g.appendBlock(g.out, n, g.blocks[kb.i])
			n++
		}
		if g.s != nil {
			g.s.keys, g.s.keyed = buf, keys
		}
	} else {
		for k, b := range g.blocks {
			g.out = g.appendBlock(g.out, k, b)
		}
	}
	g.out = append(g.out, g.pending...)
	clear(g.blocks)
	g.blocks, g.gaps, g.pending = g.blocks[:0], nil, nil
}

// appendBlock appends to out the k-th block written out, after the gap
// before it.
func (g *regrouper) appendBlock(out []line, k int, b []line) []line {
	if k > 0 && g.gaps != nil {
		out = append(out, g.gaps[k-1]...)
	}
	return append(out, b...)
}

func (g *regrouper) result() []line {
	g.flush()
	if g.scratched {
		g.s.keep(g.out)
		g.s.blocks = g.blocks
	}
	return g.out
}

// prefixCount returns, for each i from 0 to len(lines), how many of
// lines[:i] are of kind k, in buf if it is large enough.
func prefixCount(lines []line, k kind, buf []int32) []int32 {
	n := slices.Grow(buf[:0], len(lines)+1)[:len(lines)+1]
	n[0] = 0
	for i, l := range lines {
		n[i+1] = n[i]
		if l.kind&k != 0 {
			n[i+1]++
		}
	}
	return n
}

// nextShallower returns, for each line, the index of the first non-blank
// line after it indented no deeper than it (len(lines) if none): where an
// indented block that starts there ends. Linear, with a monotonic stack.
// The result is in buf if it is large enough.
func nextShallower(lines []line, buf []int32) []int32 {
	next := slices.Grow(buf[:0], len(lines))[:len(lines)]
	var stack []int32 // indices of non-blank lines, indentation increasing from the bottom
	for i := len(lines) - 1; i >= 0; i-- {
		next[i] = int32(len(lines))
		if lines[i].kind&kBlank != 0 {
			continue
		}
		d := lines[i].indent
		for len(stack) > 0 && lines[stack[len(stack)-1]].indent > d {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			next[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	return next
}

// sortIndented sorts sibling failure blocks: a block is an isFailHeader line
// and the lines after it that are blank or indented deeper (the output of its
// subtests among them, sorted the same way); siblings have the same
// indentation and nothing but blank lines between them. In node's summary of
// failing tests, the "test at file:line" line before a block belongs to it.
func sortIndented(lines []line, s *scratch) []line {
	s.next = nextShallower(lines, s.next)
	s.counts = prefixCount(lines, kFailHeader, s.counts)
	next, headers := s.next, s.counts
	var level func(lo, hi int) []line
	level = func(lo, hi int) []line {
		if headers[hi]-headers[lo] == 0 {
			return slices.Clip(lines[lo:hi]) // no block to sort
		}
		var g *regrouper
		if lo == 0 && hi == len(lines) {
			g = s.regrouper(hi-lo, int(headers[hi])) // the outermost level's
		} else {
			g = newRegrouper(hi-lo, int(headers[hi]-headers[lo]))
			g.s = s
		}
		groupIndent := -1
		for i := lo; i < hi; {
			head := i
			if lines[i].kind&kTestAt != 0 && i+1 < hi &&
				lines[i+1].kind&kFailHeader != 0 && lines[i+1].indent == lines[i].indent {
				head = i + 1
			}
			if lines[head].kind&kFailHeader == 0 {
				g.line(lines[i])
				i++
				continue
			}
			end := min(int(next[head]), hi)
			for end > head+1 && lines[end-1].kind&kBlank != 0 {
				end--
			}
			if d := lines[head].indent; d != groupIndent {
				g.flush() // not a sibling of the blocks before
				groupIndent = d
			}
			body := level(head+1, end)
			if len(body) == end-head-1 && (len(body) == 0 || &body[0] == &lines[head+1]) {
				g.block(lines[i:end:end]) // its lines as they are: no copy
			} else {
				g.block(append(slices.Clip(lines[i:head+1]), body...))
			}
			i = end
		}
		return g.result()
	}
	return level(0, len(lines))
}

// tapBlocks drops the blocks of passing TAP subtests and sorts the blocks of
// failing siblings. A block is a "# Subtest: name" line, its own subtests,
// its "ok N - name" or "not ok N - name" line at the same indentation, and
// the YAML diagnostics ("---" to "...") after it, indented two more.
func tapBlocks(lines []line, s *scratch) []line {
	// point[i]: for a line, the first TAP point at the same indentation
	// after it with no shallower line between (-1 if none).
	point := make([]int, len(lines))
	type entry struct{ indent, point int }
	var stack []entry // indentation increasing from the bottom
	for i := len(lines) - 1; i >= 0; i-- {
		point[i] = -1
		if lines[i].kind&kBlank != 0 {
			continue
		}
		d := lines[i].indent
		for len(stack) > 0 && stack[len(stack)-1].indent > d {
			stack = stack[:len(stack)-1]
		}
		isPoint := lines[i].kind&kTAPPoint != 0
		if top := len(stack) - 1; top >= 0 && stack[top].indent == d {
			// A line at the same indentation does not end the search.
			point[i] = stack[top].point
			if isPoint {
				stack[top].point = i
			}
		} else {
			e := entry{d, -1}
			if isPoint {
				e.point = i
			}
			stack = append(stack, e)
		}
	}
	subtests := prefixCount(lines, kTAPSubtest, nil)
	var level func(lo, hi int) []line
	level = func(lo, hi int) []line {
		if subtests[hi]-subtests[lo] == 0 {
			return slices.Clip(lines[lo:hi]) // no subtest to drop or sort
		}
		var g *regrouper
		if lo == 0 && hi == len(lines) {
			g = s.regrouper(hi-lo, 0) // the outermost level's
		} else {
			g = newRegrouper(hi-lo, 0)
			g.s = s
		}
		for i := lo; i < hi; {
			p := point[i]
			if lines[i].kind&kTAPSubtest == 0 || p < 0 || p >= hi {
				g.line(lines[i])
				i++
				continue
			}
			end := yamlEnd(lines, p, hi)
			if lines[p].kind&kTAPPass != 0 {
				i = end // a passing subtest
				continue
			}
			block := append([]line{lines[i]}, level(i+1, p)...)
			g.block(append(block, lines[p:end]...))
			i = end
		}
		return g.result()
	}
	return level(0, len(lines))
}

// yamlEnd returns the index after the YAML diagnostics block that follows the
// TAP point at p, or p+1 if there is none.
func yamlEnd(lines []line, p, hi int) int {
	d := lines[p].indent + 2
	if p+1 >= hi || lines[p+1].kind&kYAMLStart == 0 || lines[p+1].indent != d {
		return p + 1
	}
	for j := p + 2; j < hi; j++ {
		if lines[j].kind&kBlank != 0 {
			continue
		}
		if lines[j].indent < d {
			return j // unterminated: stop at the shallower line
		}
		if lines[j].indent == d && lines[j].kind&kYAMLEnd != 0 {
			return j + 1
		}
	}
	return hi
}

// sortPython sorts unittest's failure blocks (a line of "=", then "FAIL: x" or
// "ERROR: x", up to the next such block or the "-" line before "Ran N tests"),
// and runs of its verbose "test (…) ... FAIL" lines.
func sortPython(lines []line, s *scratch) []line {
	isHeader := func(i int) bool {
		return i+1 < len(lines) && lines[i].kind&kEqualsRule != 0 && lines[i+1].kind&kPyFail != 0
	}
	isEnd := func(i int) bool {
		return i+1 < len(lines) && lines[i].kind&kDashRule != 0 && lines[i+1].kind&kPyRan != 0
	}
	g := s.regrouper(len(lines), 0)
	verbose := false // whether the blocks being grouped are verbose lines
	for i := 0; i < len(lines); {
		switch {
		case isHeader(i):
			if verbose {
				g.flush()
				verbose = false
			}
			end := i + 2
			for end < len(lines) && !isHeader(end) && !isEnd(end) {
				end++
			}
			stop := end
			for stop > i+2 && lines[stop-1].kind&kBlank != 0 {
				stop--
			}
			g.block(lines[i:stop])
			for _, l := range lines[stop:end] {
				g.line(l)
			}
			i = end
		case lines[i].kind&kPyVerbose != 0:
			if !verbose {
				g.flush()
				verbose = true
			}
			g.block(lines[i : i+1])
			i++
		default:
			g.line(lines[i])
			i++
		}
	}
	return g.result()
}

// sortRaces sorts the data race reports of Go's race detector
// ("==================" / "WARNING: DATA RACE" … "==================") and
// drops repeats: one race found again, with its accesses in another order,
// is the same race.
func sortRaces(lines []line, s *scratch) []line {
	isStart := func(i int) bool {
		return lines[i].kind&kRaceRule != 0 && i+1 < len(lines) && lines[i+1].kind&kRaceWarning != 0
	}
	g := s.regrouper(len(lines), 0)
	g.dedupe = true
	for i := 0; i < len(lines); {
		if isStart(i) {
			end := i + 2
			for end < len(lines) && lines[end].kind&kRaceRule == 0 {
				end++
			}
			if end < len(lines) {
				g.block(lines[i : end+1])
				i = end + 1
				continue
			}
		}
		g.line(lines[i])
		i++
	}
	return g.result()
}
