package signature

import (
	"slices"
	"strings"
)

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
