package queue

import (
	"bytes"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// ValidationError is returned when a queue to be written has problems.
type ValidationError = problem.ValidationError

// Load reads and parses the queue at path, once no program is saving it
// in place (see fsx.ReadSettled); a missing file is an empty queue.
func Load(path string) (*Queue, error) {
	data, _, err := fsx.ReadSettled(path)
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// Update applies fn to the queue at path and writes the result when it
// changed, atomically. The caller holds the directory's lock. A queue with
// problems is refused with a *ValidationError before fn runs. If the file
// changes under it, fn runs again on the new content, so fn must only
// change the queue and capture what it reports.
func Update(path string, fn func(*Queue) error) error {
	return fsx.TransformChunks(path, func(old []byte, _ bool) ([][]byte, error) {
		q := Parse(old)
		if err := apply(path, q, fn); err != nil {
			return nil, err
		}
		return q.result(old), nil
	})
}

// apply runs fn on q, unless q has problems: then the write is refused.
func apply(path string, q *Queue, fn func(*Queue) error) error {
	if len(q.Problems) > 0 {
		return &ValidationError{Path: path, Problems: q.Problems}
	}
	return fn(q)
}

// result is what a writer puts back, in chunks (see fsx.TransformChunks):
// old itself when nothing changed.
func (q *Queue) result(old []byte) [][]byte {
	if !q.Changed() {
		return [][]byte{old}
	}
	return q.src.ApplyChunks(q.edits())
}

// LoadSome is Load with ParseSome: only the issues whose text holds one of
// needles are read.
func LoadSome(path string, needles ...string) (*Queue, error) {
	data, _, err := fsx.ReadSettled(path)
	if err != nil {
		return nil, err
	}
	return ParseSome(data, needles...), nil
}

// UpdateSome is Update for a writer that reads and changes only the issues
// whose text holds one of needles (see ParseSome): fn sees only those, and
// only their problems refuse the write; the rest of the file is kept byte
// for byte. A new issue is numbered from the issues read, so a writer that
// files one has its day's "ISSUE-YYYYMMDD-" among the needles. Should an
// issue changed or added have its ID in a piece not read, fn runs again on
// the whole queue, as Update runs it, which finds an ID given twice.
func UpdateSome(path string, needles []string, fn func(*Queue) error) error {
	return fsx.TransformChunks(path, func(old []byte, _ bool) ([][]byte, error) {
		return applySome(path, old, ParseSome(old, needles...), fn)
	})
}

// applySome runs fn on q, the pieces of old a writer read, and returns what
// it writes; should an issue changed or added have its ID in a piece not
// read, fn runs again on the whole queue.
func applySome(path string, old []byte, q *Queue, fn func(*Queue) error) ([][]byte, error) {
	if err := apply(path, q, fn); err != nil {
		return nil, err
	}
	if q.elsewhere() {
		q = Parse(old)
		if err := apply(path, q, fn); err != nil {
			return nil, err
		}
	}
	return q.result(old), nil
}

// UpdateChosen is UpdateSome for a writer that chooses the pieces to read
// from a look at each piece of the file as it is under the lock: choose
// gives each piece once, in order, to pieces' look, which returns the
// issue ID of a piece it read plainly an issue with that ID alone (Peek
// reads it, ok), or nil; and choose returns keep, asked of each piece by
// its place in the file (0 for the first) whether it is read. It is for a
// writer that finds what it needs at a look, and parses only those
// pieces. A piece not read whose look gave its ID is not searched for the
// IDs of the issues fn changes (see elsewhere): that ID is its only one.
func UpdateChosen(path string, choose Chooser, fn func(*Queue) error) error {
	return fsx.TransformChunks(path, func(old []byte, _ bool) ([][]byte, error) {
		src := mdpatch.NewSource(old)
		var plain bitset // of each piece, by its place: whether the look read its ID
		keep := choose(func(look func(piece []byte) []byte) {
			i := 0
			src.WalkSome(func(piece []byte) bool {
				plain.set(i, look(piece) != nil)
				i++
				return false
			}, func(int, int) {}, nil)
		})
		i := -1
		var searched [][2]int // the pieces not read, and not read plainly at the look
		var known []int       // where the others not read start
		q := parseSourceAt(src, func(start, end int) bool {
			i++
			switch {
			case keep(i):
				return true
			case plain.has(i):
				known = append(known, start)
			case len(searched) > 0 && searched[len(searched)-1][1] == start:
				searched[len(searched)-1][1] = end
			default:
				searched = append(searched, [2]int{start, end})
			}
			return false
		})
		q.skipped, q.plainSkipped = searched, known
		return applySome(path, old, q, fn)
	})
}

// bitset is a set of small ints.
type bitset []uint64

func (b *bitset) set(i int, on bool) {
	for len(*b) <= i/64 {
		*b = append(*b, 0)
	}
	if on {
		(*b)[i/64] |= 1 << (i % 64)
	}
}

func (b bitset) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// Chooser is what chooses the pieces UpdateChosen reads.
type Chooser = func(pieces func(look func(piece []byte) (id []byte))) (keep func(i int) bool)

// Heading returns a piece's first line, trimmed: the level-2 heading of
// an issue's piece ("## ISSUE-…"), by which a chooser of pieces (see
// UpdateChosen) orders issues alike in all else. It is a slice of piece.
func Heading(piece []byte) []byte {
	line, _, _ := bytes.Cut(piece, []byte("\n"))
	return bytes.TrimSpace(line)
}

// Peek reads, without parsing the markdown, the issue ID of a piece (its
// level-2 heading) and the values of the fields named in its first table,
// as they are written (trimmed, backquotes taken off) into values, one for
// each name (values has as many); ok is false when the piece is not plainly
// an issue with a table (a reader then parses it). names are in
// mdpatch.Norm's form (retrycount for Retry-Count). id and values are
// slices of piece: a reader of a big file at a look makes nothing.
func Peek(piece []byte, values [][]byte, names ...string) (id []byte, ok bool) {
	// A look that takes the table for plain, then checks that it was (one
	// search for each byte over the table, not over each row); and if it
	// was not, a careful one, each row looked at for them.
	id, ok, table := peek(piece, values, names, false)
	if ok && (bytes.IndexByte(table, '\\') >= 0 || bytes.IndexByte(table, '\r') >= 0 || bytes.IndexByte(table, '`') >= 0) {
		id, ok, _ = peek(piece, values, names, true)
	}
	return id, ok
}

// peek is Peek, and the table it read; careful, each row is looked at
// for what leaves it to the parser (plainRow). Without care, a caller
// that looks for it in the table does.
func peek(piece []byte, values [][]byte, names []string, careful bool) (id []byte, ok bool, table []byte) {
	clear(values)
	line, rest := cutLine(piece)
	if id = headingID(line); !isID(id) {
		return nil, false, nil
	}
	// Blank lines, then the table: a header row, a delimiter row of as
	// many cells, and rows up to a blank line or the piece's end; anything
	// else is left to the parser, and so is a piece with an issue after
	// its first (headingIn).
	rows, header := 0, 0
	var tableFrom []byte
	for len(rest) > 0 {
		from := rest
		line, rest = cutLine(rest)
		// Rows at the left margin, with spaces, tabs and the carriage
		// return of a CRLF after them; others (a tab before a row, a
		// vertical tab after it) are left to the parser.
		line = trimRowEnd(line)
		switch {
		case len(line) == 0 && rows == 0:
			continue
		case len(line) == 0:
			return id, rows > 2 && !headingIn(rest), table
		case line[0] != '|' || careful && !plainRow(line):
			return nil, false, nil
		}
		if rows == 0 {
			tableFrom = from
		}
		table = tableFrom[:len(tableFrom)-len(rest)]
		rows++
		switch rows {
		case 1:
			if header = headerCells(line); header != 2 {
				return nil, false, nil // two named columns, as Field | Value
			}
		case 2:
			if delimiterRow(line) != header {
				return nil, false, nil
			}
		default:
			if !readRow(line[1:], values, names) {
				return nil, false, nil
			}
		}
	}
	return id, rows > 2, table
}

// headingID is the title of a level-2 heading on line, "## " and the
// title: nil when it is not such a heading.
func headingID(line []byte) []byte {
	title, found := bytes.CutPrefix(bytes.TrimRight(line, " \r"), []byte("## "))
	if !found {
		return nil
	}
	return bytes.TrimSpace(title)
}

// plainRow reports whether a table row holds nothing that leaves it to
// the parser: an escape, a carriage return (which ends a line for the
// parser), or code with a pipe in it.
func plainRow(line []byte) bool {
	return bytes.IndexByte(line, '\\') < 0 && bytes.IndexByte(line, '\r') < 0 && (bytes.IndexByte(line, '`') < 0 || bytes.Count(line, []byte("|")) <= 3)
}

// headerCells is the count of a header row's cells, or 0 when one of its
// first two is blank.
func headerCells(line []byte) int {
	inner := bytes.TrimSuffix(line[1:], []byte("|"))
	cells, blank := 1, true
	for _, c := range inner {
		switch {
		case c >= utf8.RuneSelf:
			return headerCellsBy(inner) // white space beyond ASCII
		case c == '|':
			if blank && cells <= 2 {
				return 0
			}
			cells, blank = cells+1, true
		case c != ' ' && (c < '\t' || c > '\r'):
			blank = false
		}
	}
	if blank && cells <= 2 {
		return 0
	}
	return cells
}

// headerCellsBy is headerCells for a row with bytes beyond ASCII, each
// cell trimmed of all white space.
func headerCellsBy(inner []byte) int {
	a, b, _ := bytes.Cut(inner, []byte("|"))
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return 0
	}
	return bytes.Count(inner, []byte("|")) + 1
}

// readRow reads the row of cells (its first pipe taken off) into values,
// when it is the first of a name's; false when the row is left to the
// parser.
func readRow(cells []byte, values [][]byte, names []string) bool {
	// Most rows are no name's, told by the name's first letter.
	first := normFirst(cells)
	for i, n := range names {
		// A field written twice is read as the parser reads it: the
		// first.
		if values[i] != nil || len(n) > 0 && n[0] != first {
			continue
		}
		bar, ok := nameCell(cells, n)
		if !ok || bar+1 == len(cells) {
			continue // another name, or no value cell, as the parser reads it
		}
		value := cells[bar+1:]
		if j := bytes.IndexByte(value, '|'); j >= 0 {
			if j == 0 {
				return false // "||": the parser reads no value cell, or one
			}
			value = value[:j]
		}
		v := unquoteBytes(bytes.TrimSpace(value))
		if v == nil {
			v = value[:0] // read, and empty: not nil, so that a second is not read
		}
		values[i] = v
	}
	return true
}

// nameCell reports whether the first cell of cells, to its pipe, is the
// name norm (mdpatch.Norm's form), and where that pipe is: one look at the name,
// which most often ends at its second letter.
func nameCell(cells []byte, norm string) (bar int, ok bool) {
	j := 0
	for i, c := range cells {
		switch {
		case c == '|':
			return i, j == len(norm)
		case mdpatch.NameSep(c):
			continue
		}
		if j >= len(norm) || norm[j] != mdpatch.Lower(c) {
			return 0, false
		}
		j++
	}
	return 0, false // no pipe: no value cell
}

// headingIn reports whether text, from a line's start, holds a line the
// parser may read as a level-2 heading: "##" after at most three spaces,
// then a space, a tab or the line's end; or a line of dashes under a line
// that is not blank (a setext heading). A piece is cut where a "## " line
// follows a blank one; any other is an issue after the one the piece
// begins with, which a look at the piece's first table would not see.
// Lines in a fence are looked at too: such a piece is left to the parser.
func headingIn(text []byte) bool {
	for at := 0; ; {
		i := bytes.IndexByte(text[at:], '#')
		if i < 0 {
			break
		}
		p := at + i
		if p+1 < len(text) && text[p+1] == '#' && marginStart(text, p) && (p+2 == len(text) || isBlankByte(text[p+2])) {
			return true
		}
		for at = p; at < len(text) && text[at] == '#'; at++ {
		}
	}
	for at := 0; ; {
		i := bytes.IndexByte(text[at:], '-')
		if i < 0 {
			return false
		}
		p := at + i
		for at = p; at < len(text) && text[at] == '-'; at++ {
		}
		e := at
		for e < len(text) && (text[e] == ' ' || text[e] == '\t') {
			e++
		}
		if marginStart(text, p) && (e == len(text) || text[e] == '\n' || text[e] == '\r') && !blankBefore(text, p) {
			return true
		}
	}
}

// marginStart reports whether the mark at p begins its line, after at
// most three spaces, in text that begins with a line.
func marginStart(text []byte, p int) bool {
	ls := p
	for ls > 0 && text[ls-1] == ' ' && p-ls < 3 {
		ls--
	}
	return ls == 0 || text[ls-1] == '\n' || text[ls-1] == '\r'
}

// blankBefore reports whether the line before the one of p is blank, or
// there is none (text begins after a blank line).
func blankBefore(text []byte, p int) bool {
	ls := bytes.LastIndexAny(text[:p], "\n\r") // the end of the line before
	if ls < 0 {
		return true
	}
	prev := text[:ls]
	if ls > 0 && text[ls] == '\n' && text[ls-1] == '\r' {
		prev = text[:ls-1]
	}
	start := bytes.LastIndexAny(prev, "\n\r") + 1
	return len(bytes.Trim(prev[start:], " \t")) == 0
}

func isBlankByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trimRowEnd is bytes.TrimRight(line, " \t\r"), which builds its set of
// bytes at each call.
func trimRowEnd(line []byte) []byte {
	for len(line) > 0 {
		switch line[len(line)-1] {
		case ' ', '\t', '\r':
			line = line[:len(line)-1]
		default:
			return line
		}
	}
	return line
}

// normFirst is the first byte of name in mdpatch.Norm's form, or 0.
func normFirst(name []byte) byte {
	for _, c := range name {
		if !mdpatch.NameSep(c) {
			return mdpatch.Lower(c)
		}
	}
	return 0
}

// cutLine returns text's first line, without its line ending, and what
// follows that.
func cutLine(text []byte) (line, rest []byte) {
	if i := bytes.IndexByte(text, '\n'); i >= 0 {
		return text[:i], text[i+1:]
	}
	return text, nil
}

// isID reports whether id is an issue's ID, as idPattern says, without
// the regular expression: Peek asks of each of a big queue's issues.
func isID(id []byte) bool {
	rest, ok := bytes.CutPrefix(id, []byte("ISSUE-"))
	if !ok || len(rest) < 12 || rest[8] != '-' {
		return false
	}
	return allDigits(rest[:8]) && allDigits(rest[9:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// unquoteBytes is unquote on bytes.
func unquoteBytes(v []byte) []byte {
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return bytes.TrimSpace(v[1 : len(v)-1])
	}
	return v
}

// delimiterRow returns how many cells line has when it is a table's
// delimiter row (cells of dashes, with a colon at either end or both, and
// spaces or tabs about), or 0.
func delimiterRow(line []byte) int {
	inner := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("|")), []byte("|"))
	i := 0
	space := func() {
		for i < len(inner) && (inner[i] == ' ' || inner[i] == '\t') {
			i++
		}
	}
	for cells := 1; ; cells++ {
		space()
		if i < len(inner) && inner[i] == ':' {
			i++
		}
		dashes := i
		for i < len(inner) && inner[i] == '-' {
			i++
		}
		if i == dashes {
			return 0
		}
		if i < len(inner) && inner[i] == ':' {
			i++
		}
		space()
		if i == len(inner) {
			return cells
		}
		if inner[i] != '|' {
			return 0
		}
		i++
	}
}
