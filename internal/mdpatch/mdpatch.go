// Package mdpatch finds where headings and tables lie in a markdown file's bytes
// and changes single cells, rows and sections without re-rendering anything else.
//
// goldmark (with its GFM table extension) decides what is a heading and what is
// a table, so a heading inside a fenced code block or an HTML comment is never
// mistaken for one; this package then keeps byte offsets into the original
// source so that every byte it does not change comes out as it went in.
package mdpatch

import (
	"bytes"
	"sort"
	"strings"
	"unsafe"

	"github.com/mattn/go-runewidth"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

var bom = []byte{0xEF, 0xBB, 0xBF}

// Source is a markdown file's bytes, read where a reader asks: lines are
// counted and cuts found as needed, and remembered. It is for one reader
// at a time.
type Source struct {
	// Raw is the file as read, BOM included.
	Raw []byte
	// Text is Raw without a leading UTF-8 BOM; every offset in this package
	// is an offset into Text.
	Text []byte
	// EOL is the line ending new lines are written with: the file's own.
	EOL string

	// lineAt is the last offset Line counted to, and lineNo its line:
	// pieces are read in order, so each count starts where the last ended.
	lineAt, lineNo int
	cutsMemo       []int // cuts, once worked out
}

// NewSource indexes data. It keeps a reference to data, which must not be
// changed afterwards: the values read are views of it.
func NewSource(data []byte) *Source {
	s := &Source{Raw: data, Text: data, EOL: "\n", lineNo: 1}
	if bytes.HasPrefix(data, bom) {
		s.Text = data[len(bom):]
	}
	if i := bytes.IndexByte(s.Text, '\n'); i > 0 && s.Text[i-1] == '\r' {
		s.EOL = "\r\n"
	}
	return s
}

// Appended is NewSource(data) for data that is s.Raw and more after it:
// the cuts s found are not looked for again but from its last one on, nor
// are its lines counted again.
func (s *Source) Appended(data []byte) *Source {
	n := NewSource(data)
	if len(n.Raw)-len(n.Text) != len(s.Raw)-len(s.Text) || len(n.Text) < len(s.Text) {
		return n // a BOM that the addition completed
	}
	n.lineAt, n.lineNo = s.lineAt, s.lineNo
	if c := s.cutsMemo; c != nil {
		last := len(c) - 1
		n.cutsMemo = append(c[:last:last], n.findCutsFrom(c[last])...)
	}
	return n
}

// Line returns the 1-based line number of offset off.
func (s *Source) Line(off int) int {
	off = max(0, min(off, len(s.Text)))
	if off >= s.lineAt {
		s.lineNo += bytes.Count(s.Text[s.lineAt:off], newline)
	} else {
		s.lineNo -= bytes.Count(s.Text[off:s.lineAt], newline)
	}
	s.lineAt = off
	return s.lineNo
}

var newline = []byte{'\n'}

// LineStart returns the offset of the start of the line holding off.
func (s *Source) LineStart(off int) int {
	off = max(0, min(off, len(s.Text)))
	return bytes.LastIndexByte(s.Text[:off], '\n') + 1
}

// LineEnd returns the offset just past the end of the line holding off,
// its line ending included.
func (s *Source) LineEnd(off int) int {
	off = max(0, min(off, len(s.Text)))
	if i := bytes.IndexByte(s.Text[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(s.Text)
}

// BlockKind says what a top-level block is.
type BlockKind int

// The kinds of block this package tells apart.
const (
	Other BlockKind = iota
	Heading
	TableBlock
)

// Block is a top-level block of the document.
type Block struct {
	Kind  BlockKind
	Level int    // heading level
	Title string // heading text
	Start int    // start of the block's first line
	End   int    // end of the block's last line, line ending included
	Table *Table
}

// Table is a GFM table.
type Table struct {
	Header Row
	Delim  Row // the delimiter row: only its line span is set
	Rows   []Row
}

// End is the offset just past the table's last line.
func (t *Table) End() int {
	if len(t.Rows) > 0 {
		return t.Rows[len(t.Rows)-1].End
	}
	return t.Delim.End
}

// Row is one line of a table.
type Row struct {
	Start, End int // the line, its line ending included
	Cells      []Cell
	// Missing counts the cells the header has and this row lacks.
	Missing int
}

// Cell is one cell of a row.
type Cell struct {
	// Start and End delimit the content, surrounding spaces excluded.
	Start, End int
	// RawStart and RawEnd delimit everything between the pipes (or the
	// line's content start or end where there is no outer pipe).
	RawStart, RawEnd int
	// Closed reports whether a pipe follows the cell.
	Closed bool
}

// Value returns the cell's content with `\|` read as a pipe.
func (s *Source) Value(c Cell) string {
	if c.End <= c.Start {
		return ""
	}
	// A view of the source, which is never written to: the cells of a big
	// queue cost no copies.
	return Unescape(unsafe.String(&s.Text[c.Start], c.End-c.Start))
}

// Unescape reads `\|` as a literal pipe.
func Unescape(v string) string {
	if !strings.Contains(v, `\|`) {
		return v
	}
	return strings.ReplaceAll(v, `\|`, "|")
}

// Escape writes a value for a cell: every pipe escaped (so that a
// backslash before a pipe stays a backslash: Unescape(Escape(v)) == v),
// line breaks as spaces.
func Escape(v string) string {
	b := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '|':
			b = append(b, '\\', '|')
		case '\r', '\n':
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(bytes.TrimSpace(b))
}

var mdParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	// Inline content is never needed: cells and headings are read from the
	// source bytes. Without inline parsers goldmark only walks the text.
	parser.WithInlineParsers(),
	parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(),
		util.Prioritized(extension.NewTableParagraphTransformer(), 200))...),
	parser.WithASTTransformers(util.Prioritized(extension.NewTableASTTransformer(), 0)),
)

// Walk parses the source and calls fn with each top-level heading and
// table, in order; everything else between them is left out. The text is
// parsed in pieces cut before level-2 headings that cannot be anything but
// headings (see cuts), so that the syntax tree of only one piece is in
// memory at a time; each piece parses as it does within the whole.
func (s *Source) Walk(fn func(Block)) {
	cuts := s.cuts()
	for i, start := range cuts {
		end := len(s.Text)
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		s.walkPiece(start, end, fn)
	}
}

// WalkSome is Walk over the pieces for which keep, given each piece's
// text, returns true; skip is called with the start and end of each other
// piece. Every piece after the first begins with a level-2 heading, so
// that what a piece holds is whole in it: a reader can find what it needs
// with a look at each piece's bytes, and parse only those pieces.
func (s *Source) WalkSome(keep func(piece []byte) bool, skip func(start, end int), fn func(Block)) {
	s.WalkSomeAt(func(start, end int) bool { return keep(s.Text[start:end]) }, skip, fn)
}

// WalkSomeAt is WalkSome for a keep given where each piece lies in the
// text, its start and end, rather than its bytes.
func (s *Source) WalkSomeAt(keep func(start, end int) bool, skip func(start, end int), fn func(Block)) {
	cuts := s.cuts()
	for i, start := range cuts {
		end := len(s.Text)
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		if keep(start, end) {
			s.walkPiece(start, end, fn)
		} else {
			skip(start, end)
		}
	}
}

// WalkPiece is Walk over one piece WalkSome skipped, from start to end.
func (s *Source) WalkPiece(start, end int, fn func(Block)) { s.walkPiece(start, end, fn) }

// Blocks returns what Walk finds.
func (s *Source) Blocks() []Block {
	var blocks []Block
	s.Walk(func(b Block) { blocks = append(blocks, b) })
	return blocks
}

func (s *Source) walkPiece(start, end int, fn func(Block)) {
	doc := mdParser.Parse(text.NewReader(s.Text[start:end]))
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		s.collect(n, start, fn)
	}
}

// collect calls fn with n if it is a heading or a table; off is the offset
// of the parsed piece in the text.
func (s *Source) collect(n ast.Node, off int, fn func(Block)) {
	switch n := n.(type) {
	case *ast.Heading:
		fn(s.heading(n, off))
	case *extast.Table:
		if t, ok := s.table(n, off); ok {
			fn(Block{Kind: TableBlock, Start: t.Header.Start, End: t.End(), Table: t})
		}
	}
}

// cuts returns the offsets where the text may be cut: its start, and the
// start of each line "## …" at the left margin that follows a blank line
// and lies outside fenced code and outside the HTML blocks that a blank
// line does not end (CommonMark's kinds 1 to 5).
func (s *Source) cuts() []int {
	if s.cutsMemo == nil {
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
	// Room for a cut every 512 bytes (an issue as orchestrate writes one
	// is longer): a big queue's cuts are not copied as they grow.
	c := cutScan{t: s.Text, from: from, cuts: make([]int, 1, 1+(len(s.Text)-from)/512)}
	c.cuts[0] = from
	for i := range cutMarks {
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
			return c.cuts
		}
		if !c.found[k] { // the end of the stretch looked at: on from there
			c.next[k], c.found[k] = c.findMark(k, p)
			continue
		}
		after, open := c.event(p)
		switch {
		case open && after == len(c.t):
			return c.cuts // a fence or HTML block that never ends
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

func (s *Source) heading(n *ast.Heading, off int) Block {
	b := Block{Kind: Heading, Level: n.Level}
	lines := n.Lines()
	var title []byte
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		if i > 0 {
			title = append(title, ' ')
		}
		title = append(title, bytes.TrimSpace(s.Text[off+seg.Start:off+seg.Stop])...)
	}
	b.Title = string(title)
	pos := off + n.Pos()
	if lines.Len() > 0 && off+lines.At(0).Start < pos {
		pos = off + lines.At(0).Start
	}
	b.Start = s.LineStart(pos)
	b.End = s.LineEnd(pos)
	if lines.Len() > 0 {
		last := lines.At(lines.Len() - 1)
		end := s.LineEnd(off + last.Start)
		if isSetext(n, lines) && end < len(s.Text) {
			end = s.LineEnd(end) // the underline
		}
		if end > b.End {
			b.End = end
		}
	}
	return b
}

func isSetext(n *ast.Heading, lines *text.Segments) bool {
	// An ATX heading's text starts after its #s on the same line as the block.
	return n.Pos() == lines.At(0).Start && n.Level <= 2
}

func (s *Source) table(n *extast.Table, off int) (*Table, bool) {
	t := &Table{}
	first := true
	for r := n.FirstChild(); r != nil; r = r.NextSibling() {
		row := s.row(r, off)
		if first {
			t.Header = row
			t.Delim = Row{Start: row.End, End: s.LineEnd(row.End)}
			first = false
			continue
		}
		t.Rows = append(t.Rows, row)
	}
	if first {
		return nil, false
	}
	return t, true
}

func (s *Source) row(r ast.Node, off int) Row {
	start := s.LineStart(off + r.Pos())
	row := Row{Start: start, End: s.LineEnd(off + r.Pos())}
	lineEnd := row.End
	for lineEnd > row.Start && (s.Text[lineEnd-1] == '\n' || s.Text[lineEnd-1] == '\r') {
		lineEnd--
	}
	for c := r.FirstChild(); c != nil; c = c.NextSibling() {
		lines := c.Lines()
		if lines.Len() == 0 {
			row.Missing++
			continue
		}
		seg := lines.At(0)
		cell := Cell{Start: off + seg.Start, End: off + seg.Stop}
		if cell.End < cell.Start {
			cell.End = cell.Start
		}
		i := cell.Start
		for i > row.Start && isBlank(s.Text[i-1]) {
			i--
		}
		cell.RawStart = i
		if i > row.Start && s.Text[i-1] == '|' {
			// the cell opens after a pipe
		} else {
			cell.RawStart = cell.Start
		}
		j := cell.End
		for j < lineEnd && isBlank(s.Text[j]) {
			j++
		}
		cell.RawEnd = j
		cell.Closed = j < lineEnd && s.Text[j] == '|'
		if !cell.Closed {
			// The last cell without an outer pipe: its trailing spaces are
			// the line's own trailing whitespace.
			cell.RawEnd = lineEnd
		}
		row.Cells = append(row.Cells, cell)
	}
	return row
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// Edit replaces Text[Start:End] with New. Edits at the same offset apply in
// the order of their Seq.
type Edit struct {
	Start, End int
	New        string
	Seq        int
}

// Apply returns Raw with the edits applied. Edits must not overlap.
func (s *Source) Apply(edits []Edit) []byte {
	if len(edits) == 0 {
		return s.Raw
	}
	return bytes.Join(s.ApplyChunks(edits), nil)
}

// ApplyChunks is Apply giving the result as chunks to be written one after
// another: slices of the source between the edits, and the edits' text.
func (s *Source) ApplyChunks(edits []Edit) [][]byte {
	if len(edits) == 0 {
		return [][]byte{s.Raw}
	}
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].Start != edits[j].Start {
			return edits[i].Start < edits[j].Start
		}
		return edits[i].Seq < edits[j].Seq
	})
	out := make([][]byte, 0, 2*len(edits)+2)
	out = append(out, s.Raw[:len(s.Raw)-len(s.Text)])
	pos := 0
	for _, e := range edits {
		if e.Start < pos {
			panic("mdpatch: overlapping edits")
		}
		out = append(out, s.Text[pos:e.Start], []byte(e.New))
		pos = e.End
	}
	return append(out, s.Text[pos:])
}

// Aligned reports whether column col of t is padded to one width in every
// row, as a person or a formatter aligns a table.
func (s *Source) Aligned(t *Table, col int) bool {
	if col >= len(t.Header.Cells) || len(t.Rows) == 0 {
		return false
	}
	w := s.rawWidth(t.Header.Cells[col])
	for _, r := range t.Rows {
		if col >= len(r.Cells) || s.rawWidth(r.Cells[col]) != w {
			return false
		}
	}
	return true
}

// width is the display width of text: what aligns columns on a screen.
func width(b []byte) int { return runewidth.StringWidth(string(b)) }

// padding returns a cell's left and right padding, an empty cell's spaces
// split between the two.
func (s *Source) padding(c Cell) (left, right int) {
	left, right = c.Start-c.RawStart, c.RawEnd-c.End
	if c.Start == c.End && left > 1 {
		right += left - 1
		left = 1
	}
	return left, right
}

// SetCell returns the edit that puts value (already escaped) in cell c,
// keeping the cell's padding; in an aligned column (keepWidth) the column's
// width is kept too where the value fits.
func (s *Source) SetCell(c Cell, value string, keepWidth bool) Edit {
	left, right := s.padding(c)
	if c.Closed {
		right = s.rightPad(c, left, value, keepWidth)
	} else {
		value = closeEscapedPipe(value)
	}
	return Edit{Start: c.RawStart, End: c.RawEnd, New: pad(left) + value + pad(right)}
}

func (s *Source) rawWidth(c Cell) int { return width(s.Text[c.RawStart:c.RawEnd]) }

// rightPad returns the right padding of value in cell c: the cell's own,
// or, in an aligned column, what keeps the column's width (at least one
// space where the column had one).
func (s *Source) rightPad(c Cell, left int, value string, keepWidth bool) int {
	_, right := s.padding(c)
	if c.Start == c.End {
		right = min(left, 1) // an empty cell: pad as on the left
	}
	if keepWidth {
		if r := s.rawWidth(c) - left - runewidth.StringWidth(value); r >= min(right, 1) {
			return r
		}
		return min(right, 1)
	}
	return right
}

// NewRow renders a row of cells (already escaped) in the style of model,
// a table's last row: its indentation, outer pipes and padding, and the
// widths of the columns for which aligned is true.
func (s *Source) NewRow(model Row, aligned func(col int) bool, cells []string) string {
	var b bytes.Buffer
	var indentEnd int
	if len(model.Cells) > 0 {
		indentEnd = model.Cells[0].RawStart
		if indentEnd > model.Start && s.Text[indentEnd-1] == '|' {
			indentEnd--
		}
	}
	b.Write(s.Text[model.Start:indentEnd])
	for i, v := range cells {
		col := min(i, len(model.Cells)-1)
		c := model.Cells[col]
		if i > 0 || (c.RawStart > model.Start && s.Text[c.RawStart-1] == '|') {
			b.WriteByte('|') // a separator, or the row's opening pipe
		}
		left, _ := s.padding(c)
		last := i == len(cells)-1
		right := 0
		if c.Closed || !last {
			right = s.rightPad(c, left, v, aligned(col))
			if !c.Closed && !last {
				right = max(right, 1) // before a separator the last cell lacked
			}
		}
		if last && !c.Closed {
			v = closeEscapedPipe(v)
		}
		b.WriteString(pad(left))
		b.WriteString(v)
		b.WriteString(pad(right))
		if last && c.Closed {
			b.WriteByte('|')
		}
	}
	return b.String()
}

// closeEscapedPipe ends with a pipe a row without outer pipes whose last
// value ends with an escaped pipe, which GFM would read as the outer one.
func closeEscapedPipe(v string) string {
	if strings.HasSuffix(v, `\|`) {
		return v + " |"
	}
	return v
}

func pad(n int) string {
	if n <= 0 {
		return ""
	}
	const spaces = "                                                                "
	if n <= len(spaces) {
		return spaces[:n]
	}
	return string(bytes.Repeat([]byte{' '}, n))
}

// InsertLines returns the edit that inserts lines (without line endings)
// at offset at, which is a line start or the end of the text. At the end of
// a text without a final line ending the new lines keep it that way.
func (s *Source) InsertLines(at int, lines ...string) Edit {
	var b bytes.Buffer
	if at == len(s.Text) && at > 0 && s.Text[at-1] != '\n' {
		for _, l := range lines {
			b.WriteString(s.EOL)
			b.WriteString(l)
		}
		return Edit{Start: at, End: at, New: b.String()}
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteString(s.EOL)
	}
	return Edit{Start: at, End: at, New: b.String()}
}

// IsBlankLine reports whether the line starting at off holds only spaces.
func (s *Source) IsBlankLine(off int) bool {
	end := s.LineEnd(off)
	return len(bytes.TrimSpace(s.Text[off:end])) == 0
}

// Norm folds a field name for matching: case, spaces, '-' and '_' ignored.
func Norm(name string) string {
	if isNorm(name) {
		return name
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		if !NameSep(name[i]) {
			b = append(b, Lower(name[i]))
		}
	}
	return string(b)
}

func isNorm(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; NameSep(c) || Lower(c) != c {
			return false
		}
	}
	return true
}

// SameName reports whether Norm(a) == Norm(b), without allocating.
func SameName(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && NameSep(a[i]) {
			i++
		}
		for j < len(b) && NameSep(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if Lower(a[i]) != Lower(b[j]) {
			return false
		}
		i++
		j++
	}
}

// NameSep reports whether c is left out of a name in Norm's form: a
// space, a tab, a dash or an underscore.
func NameSep(c byte) bool { return c == ' ' || c == '-' || c == '_' || c == '\t' }

// Lower is c in lower case, for an ASCII letter; c itself for any other
// byte.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
