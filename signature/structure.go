package signature

import (
	"regexp"
	"slices"
	"strings"
)

// structure applies the passes that look at more than one line, to lines
// already cleaned and masked: the lines of a verbose go test run go back
// under the test that wrote them, the lines of passing tests go, and
// independent failure blocks are put in order. Each pass is linear in the
// number of lines, but for the sorting of blocks.
func structure(lines []string) []string {
	lines = goVerbose(lines)
	lines = slices.DeleteFunc(lines, isNoise)
	lines = tapBlocks(lines)
	lines = sortIndented(lines)
	lines = sortPython(lines)
	lines = sortRaces(lines)
	return lines
}

var (
	reGoEvent  = regexp.MustCompile(`^=== (?:RUN|PAUSE|CONT|NAME)(?:\s+(\S+))?$`)
	reGoResult = regexp.MustCompile(`^(\s*)--- (FAIL|PASS|SKIP): (\S+) \(`)
	reGoOK     = regexp.MustCompile(`^ok\s+\S+\s+(?:<dur>|\(cached\)|\[no tests to run\])`)
	reGoNoTest = regexp.MustCompile(`^\?\s+\S+\s+\[no test files\]$`)
	rePyDots   = regexp.MustCompile(`^[.FEsxu]+$`)
)

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
		l != "" && l != "..." && strings.IndexByte(".FEsxu", l[0]) >= 0 && rePyDots.MatchString(l),
		strings.HasSuffix(l, " ... ok"),
		strings.HasPrefix(t, "✔ "):
		return true
	}
	return false
}

// goVerbose rewrites the output of go test -v into the shape of go test
// without -v, so that the interleaving of parallel tests does not matter:
// the lines a test logged (indented, after "=== RUN/CONT/NAME Test") move
// under its "--- FAIL" or "--- SKIP" line, indented one level deeper than it,
// and the lines of passing tests go. Lines of a test that never reported
// (a panic, a timeout) stay, at the end of their package's output.
func goVerbose(lines []string) []string {
	verbose := false
	for _, l := range lines {
		if strings.HasPrefix(l, "=== RUN ") {
			verbose = true
			break
		}
	}
	if !verbose {
		return lines
	}
	out := make([]string, 0, len(lines))
	logs := map[string][]string{}
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
		if strings.HasPrefix(l, "=== ") {
			if m := reGoEvent.FindStringSubmatch(l); m != nil {
				cur = m[1]
				continue
			}
		}
		if strings.Contains(l, "--- ") {
			if m := reGoResult.FindStringSubmatch(l); m != nil {
				out = append(out, l)
				if m[2] != "PASS" {
					for _, b := range logs[m[3]] {
						out = append(out, m[1]+"    "+strings.TrimPrefix(b, "    "))
					}
				}
				delete(logs, m[3])
				cur = ""
				continue
			}
		}
		if cur != "" && (strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")) {
			if _, ok := logs[cur]; !ok {
				order = append(order, cur)
			}
			logs[cur] = append(logs[cur], l)
			continue
		}
		if l == "FAIL" || l == "PASS" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "ok ") {
			flush() // the end of a package
		}
		out = append(out, l)
	}
	flush()
	return out
}

// A regrouper collects runs of blocks that are adjacent but for blank lines,
// and writes each run out sorted (and, with dedupe, without repeats). The
// blank lines between blocks keep their places.
type regrouper struct {
	out     []string
	blocks  [][]string
	gaps    [][]string // gaps[k] lies between blocks[k] and blocks[k+1]
	pending []string   // blank lines since the last block or line
	dedupe  bool
}

func (g *regrouper) block(b []string) {
	if len(g.blocks) > 0 {
		g.gaps = append(g.gaps, g.pending)
	} else {
		g.out = append(g.out, g.pending...)
	}
	g.pending = nil
	g.blocks = append(g.blocks, b)
}

func (g *regrouper) line(l string) {
	if l == "" {
		g.pending = append(g.pending, l)
		return
	}
	g.flush()
	g.out = append(g.out, l)
}

func (g *regrouper) flush() {
	if len(g.blocks) > 1 {
		keys := make([]string, len(g.blocks))
		for i, b := range g.blocks {
			keys[i] = strings.Join(b, "\n")
		}
		idx := make([]int, len(g.blocks))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(a, b int) int {
			if c := strings.Compare(keys[a], keys[b]); c != 0 {
				return c
			}
			return a - b // stable, and O(n log n) moves
		})
		sorted := make([][]string, 0, len(idx))
		for k, i := range idx {
			if g.dedupe && k > 0 && keys[i] == keys[idx[k-1]] {
				g.gaps = g.gaps[:len(g.gaps)-1]
				continue
			}
			sorted = append(sorted, g.blocks[i])
		}
		g.blocks = sorted
	}
	for k, b := range g.blocks {
		if k > 0 {
			g.out = append(g.out, g.gaps[k-1]...)
		}
		g.out = append(g.out, b...)
	}
	g.out = append(g.out, g.pending...)
	g.blocks, g.gaps, g.pending = nil, nil, nil
}

func (g *regrouper) result() []string {
	g.flush()
	return g.out
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

// nextShallower returns, for each line, the index of the first non-blank
// line after it indented no deeper than it (len(lines) if none): where an
// indented block that starts there ends. Linear, with a monotonic stack.
func nextShallower(lines []string) []int {
	next := make([]int, len(lines))
	var stack []int // indices of non-blank lines, indentation increasing from the bottom
	for i := len(lines) - 1; i >= 0; i-- {
		next[i] = len(lines)
		if lines[i] == "" {
			continue
		}
		d := indent(lines[i])
		for len(stack) > 0 && indent(lines[stack[len(stack)-1]]) > d {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			next[i] = stack[len(stack)-1]
		}
		stack = append(stack, i)
	}
	return next
}

// isFailHeader reports whether a line opens an indented failure block: go
// test's "--- FAIL: TestX (…)" (and "--- SKIP"), node's "✖ test (…)".
func isFailHeader(l string) bool {
	t := trimIndent(l)
	return strings.HasPrefix(t, "--- FAIL: ") || strings.HasPrefix(t, "--- SKIP: ") ||
		strings.HasPrefix(t, "✖ ") && t != "✖ failing tests:"
}

// sortIndented sorts sibling failure blocks: a block is an isFailHeader line
// and the lines after it that are blank or indented deeper (the output of its
// subtests among them, sorted the same way); siblings have the same
// indentation and nothing but blank lines between them. In node's summary of
// failing tests, the "test at file:line" line before a block belongs to it.
func sortIndented(lines []string) []string {
	has := false
	for _, l := range lines {
		if isFailHeader(l) {
			has = true
			break
		}
	}
	if !has {
		return lines
	}
	next := nextShallower(lines)
	var level func(lo, hi int) []string
	level = func(lo, hi int) []string {
		g := &regrouper{out: make([]string, 0, hi-lo)}
		groupIndent := -1
		for i := lo; i < hi; {
			head := i
			if strings.HasPrefix(trimIndent(lines[i]), "test at ") && i+1 < hi &&
				isFailHeader(lines[i+1]) && indent(lines[i+1]) == indent(lines[i]) {
				head = i + 1
			}
			if !isFailHeader(lines[head]) {
				g.line(lines[i])
				i++
				continue
			}
			end := min(next[head], hi)
			for end > head+1 && lines[end-1] == "" {
				end--
			}
			if d := indent(lines[head]); d != groupIndent {
				g.flush() // not a sibling of the blocks before
				groupIndent = d
			}
			block := append(slices.Clip(lines[i:head+1]), level(head+1, end)...)
			g.block(block)
			i = end
		}
		return g.result()
	}
	return level(0, len(lines))
}

func isTAPSubtest(l string) bool {
	return strings.HasPrefix(trimIndent(l), "# Subtest: ")
}

// isTAPPoint reports whether l is a TAP test point, numbered N by the tap rule.
func isTAPPoint(l string) bool {
	t := trimIndent(l)
	t, _ = strings.CutPrefix(t, "not ")
	return strings.HasPrefix(t, "ok N") && (len(t) == 4 || !isWordByte(t[4]))
}

// tapBlocks drops the blocks of passing TAP subtests and sorts the blocks of
// failing siblings. A block is a "# Subtest: name" line, its own subtests,
// its "ok N - name" or "not ok N - name" line at the same indentation, and
// the YAML diagnostics ("---" to "...") after it, indented two more.
func tapBlocks(lines []string) []string {
	has := false
	for _, l := range lines {
		if isTAPSubtest(l) {
			has = true
			break
		}
	}
	if !has {
		return lines
	}
	// point[i]: for a line, the first TAP point at the same indentation
	// after it with no shallower line between (-1 if none).
	point := make([]int, len(lines))
	type entry struct{ indent, point int }
	var stack []entry // indentation increasing from the bottom
	for i := len(lines) - 1; i >= 0; i-- {
		point[i] = -1
		if lines[i] == "" {
			continue
		}
		d := indent(lines[i])
		for len(stack) > 0 && stack[len(stack)-1].indent > d {
			stack = stack[:len(stack)-1]
		}
		isPoint := isTAPPoint(lines[i])
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
	var level func(lo, hi int) []string
	level = func(lo, hi int) []string {
		g := &regrouper{out: make([]string, 0, hi-lo)}
		for i := lo; i < hi; {
			p := point[i]
			if !isTAPSubtest(lines[i]) || p < 0 || p >= hi {
				g.line(lines[i])
				i++
				continue
			}
			end := yamlEnd(lines, p, hi)
			if strings.HasPrefix(trimIndent(lines[p]), "ok") {
				i = end // a passing subtest
				continue
			}
			block := append([]string{lines[i]}, level(i+1, p)...)
			g.block(append(block, lines[p:end]...))
			i = end
		}
		return g.result()
	}
	return level(0, len(lines))
}

// yamlEnd returns the index after the YAML diagnostics block that follows the
// TAP point at p, or p+1 if there is none.
func yamlEnd(lines []string, p, hi int) int {
	d := indent(lines[p]) + 2
	if p+1 >= hi || trimIndent(lines[p+1]) != "---" || indent(lines[p+1]) != d {
		return p + 1
	}
	for j := p + 2; j < hi; j++ {
		if lines[j] == "" {
			continue
		}
		if indent(lines[j]) < d {
			return j // unterminated: stop at the shallower line
		}
		if indent(lines[j]) == d && trimIndent(lines[j]) == "..." {
			return j + 1
		}
	}
	return hi
}

var (
	rePyRan     = regexp.MustCompile(`^Ran \d+ tests? in `)
	rePyVerbose = regexp.MustCompile(`^\S+ \(\S+\) \.\.\. (?:FAIL|ERROR|skipped|expected failure|unexpected success)`)
)

func isRule(l string, c byte, n int) bool {
	return len(l) >= n && strings.Trim(l, string(c)) == ""
}

// sortPython sorts unittest's failure blocks (a line of "=", then "FAIL: x" or
// "ERROR: x", up to the next such block or the "-" line before "Ran N tests"),
// and runs of its verbose "test (…) ... FAIL" lines.
func sortPython(lines []string) []string {
	isHeader := func(i int) bool {
		return i+1 < len(lines) && isRule(lines[i], '=', 20) &&
			(strings.HasPrefix(lines[i+1], "FAIL: ") || strings.HasPrefix(lines[i+1], "ERROR: ") ||
				strings.HasPrefix(lines[i+1], "UNEXPECTED SUCCESS: "))
	}
	isEnd := func(i int) bool {
		return i+1 < len(lines) && isRule(lines[i], '-', 20) && rePyRan.MatchString(lines[i+1])
	}
	has := false
	for i := range lines {
		if isHeader(i) || strings.Contains(lines[i], " ... ") && rePyVerbose.MatchString(lines[i]) {
			has = true
			break
		}
	}
	if !has {
		return lines
	}
	g := &regrouper{out: make([]string, 0, len(lines))}
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
			for stop > i+2 && lines[stop-1] == "" {
				stop--
			}
			g.block(lines[i:stop])
			for _, l := range lines[stop:end] {
				g.line(l)
			}
			i = end
		case strings.Contains(lines[i], " ... ") && rePyVerbose.MatchString(lines[i]):
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
func sortRaces(lines []string) []string {
	const rule = "=================="
	isStart := func(i int) bool {
		return lines[i] == rule && i+1 < len(lines) && lines[i+1] == "WARNING: DATA RACE"
	}
	has := false
	for i := range lines {
		if isStart(i) {
			has = true
			break
		}
	}
	if !has {
		return lines
	}
	g := &regrouper{out: make([]string, 0, len(lines)), dedupe: true}
	for i := 0; i < len(lines); {
		if isStart(i) {
			end := i + 2
			for end < len(lines) && lines[end] != rule {
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
