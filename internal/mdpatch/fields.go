package mdpatch

import (
	"fmt"
	"strings"
)

// FieldTable is a two-column | Field | Value | table read as named fields,
// with the changes made to it since.
type FieldTable struct {
	src     *Source
	model   Row          // the last row: the style of new rows
	end     int          // the end of the table's last line
	aligned []bool       // by column: padded to one width in every row
	fields  []Field      // the rows parsed, never appended to: pointers stay valid
	added   []*Field     // rows this change adds
	edits   map[int]Edit // by the changed cell's RawStart
}

// Field is one row of a field table.
type Field struct {
	Name  string // as written
	Value string // as written, `\|` read as a pipe
	Line  int

	cell cell32
}

// cell32 is a Cell kept compactly: a big queue has many.
type cell32 struct {
	start, end, rawStart, rawEnd int32
	closed                       bool
}

func compact(c Cell) cell32 {
	return cell32{int32(c.Start), int32(c.End), int32(c.RawStart), int32(c.RawEnd), c.Closed}
}

func (c cell32) full() Cell {
	return Cell{Start: int(c.start), End: int(c.end), RawStart: int(c.rawStart), RawEnd: int(c.rawEnd), Closed: c.closed}
}

// FieldTable reads t as fields. It returns the lines of rows that lack a
// cell, which are left out.
func (s *Source) FieldTable(t *Table) (*FieldTable, []int) {
	ft := &FieldTable{src: s, model: t.Header, end: t.End()}
	if len(t.Rows) > 0 {
		ft.model = t.Rows[len(t.Rows)-1]
	}
	for col := range t.Header.Cells {
		ft.aligned = append(ft.aligned, s.Aligned(t, col))
	}
	var missing []int
	ft.fields = make([]Field, 0, len(t.Rows))
	for _, r := range t.Rows {
		line := s.Line(r.Start)
		if len(r.Cells) < 2 {
			missing = append(missing, line)
			continue
		}
		ft.fields = append(ft.fields, Field{
			Name:  s.Value(r.Cells[0]),
			Value: s.Value(r.Cells[1]),
			Line:  line,
			cell:  compact(r.Cells[1]),
		})
	}
	return ft, missing
}

// Fields returns the fields in table order, added ones last.
func (ft *FieldTable) Fields() []*Field {
	out := make([]*Field, 0, len(ft.fields)+len(ft.added))
	for i := range ft.fields {
		out = append(out, &ft.fields[i])
	}
	return append(out, ft.added...)
}

// Each calls fn with each field in table order, added ones last.
func (ft *FieldTable) Each(fn func(*Field)) {
	for i := range ft.fields {
		fn(&ft.fields[i])
	}
	for _, f := range ft.added {
		fn(f)
	}
}

// Field returns the field named name (matched loosely, see Norm), or nil.
func (ft *FieldTable) Field(name string) *Field {
	for i := range ft.fields {
		if SameName(ft.fields[i].Name, name) {
			return &ft.fields[i]
		}
	}
	for _, f := range ft.added {
		if SameName(f.Name, name) {
			return f
		}
	}
	return nil
}

// Set changes the field named name to value, or adds a row spelled newName
// when there is none. Setting a field to what the file says changes nothing.
func (ft *FieldTable) Set(name, newName, value string) {
	esc := Escape(value)
	f := ft.Field(name)
	if f == nil {
		ft.added = append(ft.added, &Field{Name: newName, Value: Unescape(esc)})
		return
	}
	f.Value = Unescape(esc)
	if f.cell == (cell32{}) {
		return // an added row
	}
	c := f.cell.full()
	if string(ft.src.Text[c.Start:c.End]) == esc {
		delete(ft.edits, c.RawStart)
		return
	}
	if ft.edits == nil {
		ft.edits = map[int]Edit{}
	}
	ft.edits[c.RawStart] = ft.src.SetCell(c, esc, len(ft.aligned) > 1 && ft.aligned[1])
}

// Changed reports whether the table differs from what was parsed.
func (ft *FieldTable) Changed() bool {
	return len(ft.edits) > 0 || len(ft.added) > 0
}

// Edits returns the edits that make the file say what the table says now:
// changed cells, and the added rows after the table's last row.
func (ft *FieldTable) Edits() []Edit {
	edits := make([]Edit, 0, len(ft.edits)+1)
	for _, e := range ft.edits {
		edits = append(edits, e)
	}
	var rows []string
	for _, f := range ft.added {
		rows = append(rows, ft.src.NewRow(ft.model, ft.aligned, []string{Escape(f.Name), Escape(f.Value)}))
	}
	if len(rows) > 0 {
		e := ft.src.InsertLines(ft.end, rows...)
		e.Seq = 1
		edits = append(edits, e)
	}
	return edits
}

// NewTableLines renders a new field table in the seed's style, without
// line endings.
func NewTableLines(rows [][2]string) []string {
	lines := []string{"| Field | Value |", "|-------|-------|"}
	for _, r := range rows {
		v := Escape(r[1])
		if v == "" {
			lines = append(lines, "| "+Escape(r[0])+" | |")
		} else {
			lines = append(lines, "| "+Escape(r[0])+" | "+v+" |")
		}
	}
	return lines
}

// Problem is something wrong in a file, at a line.
type Problem struct {
	Line int
	Msg  string
}

// ParseBool reads true/false, yes/no and 1/0, in any case.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "`")) {
	case "true", "yes", "1":
		return true, nil
	case "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", v)
}

// ValidationError is returned when a file to be written has problems; its
// message names the first one as path:line: message.
type ValidationError struct {
	Path     string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	msg := e.Problems[0].Format(e.Path)
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more; see orchestrate validate)", n)
	}
	return msg
}

// Format writes the problem as path:line: message.
func (p Problem) Format(path string) string {
	return fmt.Sprintf("%s:%d: %s", path, p.Line, p.Msg)
}
