package mdpatch

import "bytes"

// cuts returns the offsets where the text may be cut: its start, and the
// start of each line "## …" at the left margin that follows a blank line
// and lies outside fenced code and outside the HTML blocks that a blank
// line does not end (CommonMark's kinds 1 to 5).
func (s *Source) cuts() []int {
	if s.cutsMemo != nil {
		return s.cutsMemo
	}
	if at := s.uncut; at > 0 && s.closedAt(at) {
		// The text up to at was never cut (see Appended): it is not cut
		// now either, but kept as one piece, and only what follows is
		// cut. There the scan is in its first state, as at a cut; at is
		// one if a "## " follows a blank line there, or else what follows
		// up to the first cut after it is the last piece's.
		cuts := s.findCutsFrom(at)
		if !s.cutAt(at) {
			cuts = cuts[1:]
		}
		s.cutsMemo = append([]int{0}, cuts...)
	} else {
		s.cutsMemo = s.findCuts()
	}
	return s.cutsMemo
}

func (s *Source) findCuts() []int { return s.findCutsFrom(0) }

// findCutsFrom is findCuts from a cut on: from, and the cuts after it.
// At a cut the scan is in its first state (the line before blank, no
// fence, no HTML block), so the cuts after one depend only on what follows
// it.
//
// The scan does not look at each line, which costs more than all else on
// a big queue (280,000 lines on 10,000 issues): only the lines where a
// '#', '`', '~' or '<' begins, each found with bytes.IndexByte, can be a
// cut or open a fence or an HTML block. A heading "## " at the left margin
// is a cut when the line before it is blank, and no fence or HTML block is
// open; inside one, the scan looks only for its end.
func (s *Source) findCutsFrom(from int) []int {
	cuts, _ := scan(s.Text, from, true)
	return cuts
}

// closedAt reports whether the text up to at, the start of a line, leaves
// no fence or HTML block open: what follows is cut as if it began the
// text. Only the marks that open or close a block are looked for, not the
// headings.
func (s *Source) closedAt(at int) bool {
	if s.Text[at-1] != '\n' {
		return false
	}
	_, open := scan(s.Text[:at], 0, false)
	return !open
}

// cutAt reports whether a line that starts at at, where no block is open,
// is a cut: a "## " after a blank line.
func (s *Source) cutAt(at int) bool {
	c := cutScan{t: s.Text}
	return bytes.HasPrefix(c.t[at:], []byte("## ")) && c.blankBefore(at)
}

// scan is findCutsFrom of the text t, and whether a block (a fence, an
// HTML block) is open at its end; without cuts, the headings are not
// looked for, and only from is in the cuts returned.
func scan(t []byte, from int, cuts bool) ([]int, bool) {
	// Room for a cut every 512 bytes (an issue as orchestrate writes one
	// is longer): a big queue's cuts are not copied as they grow.
	room := 1
	if cuts {
		room += (len(t) - from) / 512
	}
	c := cutScan{t: t, from: from, cuts: make([]int, 1, room)}
	c.cuts[0] = from
	for i := range cutMarks {
		if i == 0 && !cuts {
			c.next[0], c.found[0] = len(c.t), true // no '#' is looked for
			continue
		}
		c.next[i], c.found[i] = c.findMark(i, from)
	}
	for {
		k := 0
		for i := range c.next {
			if c.next[i] < c.next[k] {
				k = i
			}
		}
		p := c.next[k]
		if p == len(c.t) {
			return c.cuts, false
		}
		if !c.found[k] { // the end of the stretch looked at: on from there
			c.next[k], c.found[k] = c.findMark(k, p)
			continue
		}
		after, open := c.event(p)
		switch {
		case open && after == len(c.t):
			return c.cuts, true // a fence or HTML block that never ends
		case open:
			c.seek(after)
		default:
			c.next[k], c.found[k] = c.findMark(k, after)
		}
	}
}

// cutMarks are the bytes that begin the lines that matter to the cuts.
var cutMarks = [4]byte{'#', '`', '~', '<'}

// cutScan is findCutsFrom's state: the cuts found, and where each of the
// cut marks is next found.
type cutScan struct {
	t     []byte
	from  int
	cuts  []int
	next  [len(cutMarks)]int  // len(t) for none
	found [len(cutMarks)]bool // false: next is only as far as it looked
}

// findMark returns where the mark cutMarks[k] is next found from at on,
// and found true; or, when it is not in the stretch of markStretch bytes
// from at, the end of that stretch (len(t) at the last) and found false.
// Of the '#', only those that begin a line "## " are found: no other is
// a cut, or opens anything.
//
// Each mark is looked for a stretch at a time, so that the four
// searches read the same stretch of the text while it is in the cache:
// a mark the text rarely holds ('~', '<') is not looked for to the end of
// a big text, in a pass of its own.
func (c *cutScan) findMark(k, at int) (next int, found bool) {
	t := c.t
	end := min(at+markStretch, len(t))
	for at < end {
		i := bytes.IndexByte(t[at:end], cutMarks[k])
		if i < 0 {
			break
		}
		p := at + i
		if k != 0 || p > c.from && t[p-1] == '\n' && p+2 < len(t) && t[p+1] == '#' && t[p+2] == ' ' {
			return p, true
		}
		at = p + fenceRun(t[p:], '#') // past a "#" or "###" of no use
	}
	return end, false
}

// markStretch is how far findMark looks at a time.
const markStretch = 16 << 10

// find returns the place of b in the text from at on, or len(t).
func (c *cutScan) find(b byte, at int) int {
	if at >= len(c.t) {
		return len(c.t)
	}
	if i := bytes.IndexByte(c.t[at:], b); i >= 0 {
		return at + i
	}
	return len(c.t)
}

// seek finds each mark from at, a line start, on: a mark found at or
// after it already is not looked for again (the text is not searched to
// its end for a mark it does not hold after each fence).
func (c *cutScan) seek(at int) {
	for i := range cutMarks {
		if c.next[i] < at {
			c.next[i], c.found[i] = c.findMark(i, at)
		}
	}
}

// lineStart returns where the line of the mark at p starts, and whether
// the mark begins it after at most indent spaces.
func (c *cutScan) lineStart(p, indent int) (int, bool) {
	ls := p
	for ls > c.from && c.t[ls-1] == ' ' && p-ls < indent {
		ls--
	}
	return ls, ls == c.from || c.t[ls-1] == '\n'
}

// event takes in the mark at p. It returns where to look for the mark
// again; or, when its line opens a fence or an HTML block, the start of
// the line after the block's end (len(t) for none) and open true.
func (c *cutScan) event(p int) (after int, open bool) {
	t := c.t
	b := t[p]
	run := fenceRun(t[p:], b)
	if b == '#' { // a "## " that begins a line (findMark)
		if c.blankBefore(p) {
			c.cuts = append(c.cuts, p)
		}
		return p + run, false
	}
	ls, ok := c.lineStart(p, 3)
	if !ok {
		return p + run, false
	}
	le, _ := lineEnd(t, ls)
	switch {
	case (b == '`' || b == '~') && run >= 3 && opensFence(b, t[p+run:le]):
		return c.fenceEnd(b, run, le), true
	case b == '<' && le-p > 1:
		if end := htmlBlockEnd(t[p:le]); end != "" && !bytes.Contains(bytes.ToLower(t[p+1:le]), []byte(end)) {
			return c.htmlEnd(end, le), true
		}
	}
	return p + run, false
}

// blankBefore reports whether the line before the one that starts at p
// (after the scan's first) is blank.
func (c *cutScan) blankBefore(p int) bool {
	ps := bytes.LastIndexByte(c.t[c.from:p-1], '\n') + 1 + c.from
	return len(bytes.TrimSpace(c.t[ps:p])) == 0
}

// fenceEnd returns the start of the line after the one that closes a
// fence of n marks b opened before at: a line of at least n of them after
// at most three spaces, and only white space after; len(t) for none.
func (c *cutScan) fenceEnd(b byte, n, at int) int {
	t := c.t
	for p := c.find(b, at); p < len(t); p = c.find(b, p) {
		run := fenceRun(t[p:], b)
		if ls, ok := c.lineStart(p, 3); ok && ls >= at && run >= n {
			le, _ := lineEnd(t, p)
			if closesFence(t[p+run : le]) {
				return le
			}
		}
		p += run
	}
	return len(t)
}

// opensFence reports whether a line of marks b, then info, opens a
// fence: a backquote in the info of a fence of backquotes makes the line
// a paragraph (code inline).
func opensFence(b byte, info []byte) bool {
	return b != '`' || bytes.IndexByte(info, '`') < 0
}

// closesFence reports whether what follows a fence's marks on a line
// (its line ending included) lets the line close the fence: spaces and
// tabs only. Another white space, a vertical tab say, makes it a line of
// the fence's content.
func closesFence(rest []byte) bool {
	for _, c := range rest {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// htmlEnd returns the start of the line after the first line from at on
// that holds end, in any case; len(t) for none.
func (c *cutScan) htmlEnd(end string, at int) int {
	for ls, le, more := at, at, at < len(c.t); more; ls = le {
		le, more = lineEnd(c.t, ls)
		if bytes.Contains(bytes.ToLower(c.t[ls:le]), []byte(end)) {
			return le
		}
	}
	return len(c.t)
}

// lineEnd returns the end of the line that starts at ls, past its line
// ending, and whether one ends it.
func lineEnd(t []byte, ls int) (le int, more bool) {
	if i := bytes.IndexByte(t[ls:], '\n'); i >= 0 {
		return ls + i + 1, true
	}
	return len(t), false
}

func fenceRun(b []byte, c byte) int {
	n := 0
	for n < len(b) && b[n] == c {
		n++
	}
	return n
}

// htmlBlockEnd returns what ends the HTML block that line starts, for the
// kinds a blank line does not end, or "".
func htmlBlockEnd(line []byte) string {
	l := bytes.ToLower(line)
	for _, tag := range []string{"script", "pre", "style", "textarea"} {
		if bytes.HasPrefix(l[1:], []byte(tag)) {
			rest := l[1+len(tag):]
			if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '>' || rest[0] == '\n' || rest[0] == '\r' {
				return "</" + tag + ">"
			}
		}
	}
	switch {
	case bytes.HasPrefix(l, []byte("<!--")):
		return "-->"
	case bytes.HasPrefix(l, []byte("<?")):
		return "?>"
	case bytes.HasPrefix(l, []byte("<![cdata[")):
		return "]]>"
	case len(l) > 2 && l[1] == '!' && ('a' <= l[2] && l[2] <= 'z'):
		return ">"
	}
	return ""
}
