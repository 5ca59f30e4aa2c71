package mdpatch

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

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
