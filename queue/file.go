package queue

import (
	"bytes"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// ValidationError is returned when a queue to be written has problems.
type ValidationError = problem.ValidationError

// Load reads and parses the queue at path; a missing file is an empty queue.
func Load(path string) (*Queue, error) {
	data, _, err := fsx.ReadFile(path)
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
	data, _, err := fsx.ReadFile(path)
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
// gets the pieces, each once (see Peek), and returns the keep function of
// ParseSome. It is for a writer that finds what it needs at a look, and
// parses only those pieces.
func UpdateChosen(path string, choose func(pieces func(fn func(piece []byte))) func(piece []byte) bool, fn func(*Queue) error) error {
	return fsx.TransformChunks(path, func(old []byte, _ bool) ([][]byte, error) {
		src := mdpatch.NewSource(old)
		keep := choose(func(fn func(piece []byte)) {
			src.WalkSome(func(piece []byte) bool { fn(piece); return false }, func(int, int) {}, nil)
		})
		return applySome(path, old, parseSource(src, keep), fn)
	})
}

// Heading returns a piece's first line, trimmed: the level-2 heading of
// an issue's piece ("## ISSUE-…"), by which a reader of pieces (see
// UpdateChosen) tells them apart. It is a slice of piece.
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
	clear(values)
	line, rest, _ := bytes.Cut(piece, []byte("\n"))
	title, found := bytes.CutPrefix(bytes.TrimRight(line, " \r"), []byte("## "))
	if id = bytes.TrimSpace(title); !found || !idPattern.Match(id) {
		return nil, false
	}
	// Blank lines, then the table: a header row, a delimiter row of as
	// many cells, and rows up to a blank line or the piece's end; anything
	// else is left to the parser.
	rows, header := 0, 0
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0 && rows == 0:
			continue
		case len(line) == 0:
			return id, rows > 2
		case line[0] != '|' || bytes.IndexByte(line, '\\') >= 0 || bytes.IndexByte(line, '`') >= 0 && bytes.Count(line, []byte("|")) > 3:
			return nil, false
		}
		rows++
		switch rows {
		case 1:
			// Two named columns, as Field | Value.
			inner := bytes.TrimSuffix(line[1:], []byte("|"))
			a, b, _ := bytes.Cut(inner, []byte("|"))
			if header = cellCount(line); header != 2 || len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
				return nil, false
			}
			continue
		case 2:
			if !delimiterRow(line) || cellCount(line) != header {
				return nil, false
			}
			continue
		}
		name, value, found := bytes.Cut(line[1:], []byte("|"))
		if !found {
			continue
		}
		value, _, _ = bytes.Cut(value, []byte("|"))
		for i, n := range names {
			if normEqual(name, n) {
				values[i] = unquoteBytes(bytes.TrimSpace(value))
			}
		}
	}
	return id, rows > 2
}

// unquoteBytes is unquote on bytes.
func unquoteBytes(v []byte) []byte {
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return bytes.TrimSpace(v[1 : len(v)-1])
	}
	return v
}

// cellCount counts a table row's cells, its outer pipes left out.
func cellCount(line []byte) int {
	inner := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("|")), []byte("|"))
	return bytes.Count(inner, []byte("|")) + 1
}

// delimiterRow reports whether line is a table's delimiter row: cells of
// dashes, with colons at their ends.
func delimiterRow(line []byte) bool {
	inner := bytes.TrimSuffix(bytes.TrimPrefix(line, []byte("|")), []byte("|"))
	for more := true; more; {
		var cell []byte
		cell, inner, more = bytes.Cut(inner, []byte("|"))
		cell = bytes.Trim(bytes.TrimSpace(cell), ":")
		if len(cell) == 0 || len(bytes.Trim(cell, "-")) != 0 {
			return false
		}
	}
	return true
}

// normEqual reports whether mdpatch.Norm(string(name)) == norm, without
// making the string.
func normEqual(name []byte, norm string) bool {
	j := 0
	for _, c := range name {
		switch {
		case c == ' ' || c == '-' || c == '_' || c == '\t':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if j >= len(norm) || norm[j] != c {
			return false
		}
		j++
	}
	return j == len(norm)
}
