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
	"strings"
	"unsafe"
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
	// cutsMemo are the cuts, once worked out. A piece between two may
	// hold several (see cuts): each is a cut, and the pieces parse alike
	// however many it holds.
	cutsMemo []int
	// uncut is where the text of a source never cut ends, in a source
	// that Appended made of it (and of each such source it made): 0 for
	// none.
	uncut int
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
	} else if n.uncut = s.uncut; n.uncut == 0 {
		// s was never cut (a reader of its pieces found nothing to read
		// in it): should n be, s's text may be kept as one piece (see
		// cuts).
		n.uncut = len(s.Text)
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

// IsBlankLine reports whether the line starting at off holds only spaces.
func (s *Source) IsBlankLine(off int) bool {
	end := s.LineEnd(off)
	return len(bytes.TrimSpace(s.Text[off:end])) == 0
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
