package mdpatch

import (
	"bytes"
	"sort"
	"strings"

	"github.com/mattn/go-runewidth"
)

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
