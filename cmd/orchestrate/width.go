package main

import (
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
	"golang.org/x/sys/unix"
)

// termWidth is the width, in columns, that the tables of e's stdout fit:
// the terminal's when stdout is one, else $COLUMNS when it is set, else 0
// (no bound: a file or a pipe gets every row whole).
func termWidth(e *env) int {
	if f, ok := e.stdoutFile(); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return 0
}

// minCut is the fewest columns a cut cell keeps, its ellipsis included.
const minCut = 12

// colWidths is the width of each column of a table of header and rows.
func colWidths(header []string, rows [][]string) []int {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = runewidth.StringWidth(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], runewidth.StringWidth(c))
		}
	}
	return widths
}

// A layout is how a table is drawn: its borders and padding, in columns.
type layout struct {
	perCell, extra int
}

var (
	// boxed is renderTable's: "│ a │ b │".
	boxed = layout{perCell: 3, extra: 1}
	// plain is renderPlain's: "a  b", for a terminal too narrow for boxes.
	plain = layout{perCell: 2, extra: -2}
)

// width is how wide l draws a table of header and rows.
func (l layout) width(header []string, rows [][]string) int {
	n := l.extra + l.perCell*len(header)
	for _, w := range colWidths(header, rows) {
		n += w
	}
	return n
}

// minRoom is the fewest columns that a cut column keeps in a boxed table:
// below it, the table is drawn plain.
const minRoom = 20

// fitted is a table made to fit a width: the layout to draw it in, and
// its header and rows, a column cut or left out.
type fitted struct {
	layout layout
	header []string
	rows   [][]string
}

// fitTable makes the table of header and rows fit width columns (0: no
// bound, nothing changes): first without column drop (when dropEmpty,
// only if no row has a value in it), then boxed with column cut cut with
// an ellipsis down to minRoom, else plain with it cut down to minCut.
func fitTable(width int, header []string, rows [][]string, cut, drop int, dropEmpty bool) fitted {
	if width <= 0 || boxed.width(header, rows) <= width {
		return fitted{boxed, header, rows}
	}
	if drop >= 0 && (!dropEmpty || columnEmpty(rows, drop)) {
		header = slices.Delete(slices.Clone(header), drop, drop+1)
		for i := range rows {
			rows[i] = slices.Delete(rows[i], drop, drop+1)
		}
		if drop < cut {
			cut--
		}
	}
	l := boxed
	if room := colWidths(header, rows)[cut] - (boxed.width(header, rows) - width); room < minRoom {
		l = plain
	}
	over := l.width(header, rows) - width
	if over > 0 {
		room := max(colWidths(header, rows)[cut]-over, minCut, runewidth.StringWidth(header[cut]))
		for _, r := range rows {
			if runewidth.StringWidth(r[cut]) > room {
				r[cut] = runewidth.Truncate(r[cut], room, "…")
			}
		}
	}
	return fitted{l, header, rows}
}

// columnEmpty reports whether no row has a value in column col.
func columnEmpty(rows [][]string, col int) bool {
	for _, r := range rows {
		if r[col] != "" {
			return false
		}
	}
	return true
}

// render draws the table as its layout says.
func (f fitted) render(w io.Writer) error {
	if f.layout == plain {
		return renderPlain(w, f.header, f.rows)
	}
	return renderTable(w, f.header, f.rows)
}

// renderPlain prints rows as columns padded to their widths and two spaces
// apart, with no border, the header first: for a narrow terminal.
func renderPlain(w io.Writer, header []string, rows [][]string) error {
	widths := colWidths(header, rows)
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-runewidth.StringWidth(c)))
			}
		}
		b.WriteByte('\n')
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
