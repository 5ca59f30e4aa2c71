package mdpatch

import (
	"fmt"
	"strings"
)

// FieldTable is a two-column | Field | Value | table read as named fields,
// with the changes made to it since.
type FieldTable struct {
	src    *Source
	table  *Table
	fields []*Field
	edits  map[int]Edit // by the changed cell's RawStart
}

// Field is one row of a field table.
type Field struct {
	Name  string // as written
	Value string // as written, `\|` read as a pipe
	Line  int

	cell    Cell
	pending bool // a row this change adds
}

// FieldTable reads t as fields. It returns the lines of rows that lack a
// cell, which are left out.
func (s *Source) FieldTable(t *Table) (*FieldTable, []int) {
	ft := &FieldTable{src: s, table: t}
	var missing []int
	for _, r := range t.Rows {
		line := s.Line(r.Start)
		if len(r.Cells) < 2 {
			missing = append(missing, line)
			continue
		}
		ft.fields = append(ft.fields, &Field{
			Name:  s.Value(r.Cells[0]),
			Value: s.Value(r.Cells[1]),
			Line:  line,
			cell:  r.Cells[1],
		})
	}
	return ft, missing
}

// Fields returns the fields in table order, added ones last.
func (ft *FieldTable) Fields() []*Field { return ft.fields }

// Field returns the field named name (matched loosely, see Norm), or nil.
func (ft *FieldTable) Field(name string) *Field {
	n := Norm(name)
	for _, f := range ft.fields {
		if Norm(f.Name) == n {
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
		ft.fields = append(ft.fields, &Field{Name: newName, Value: Unescape(esc), pending: true})
		return
	}
	f.Value = Unescape(esc)
	if f.pending {
		return
	}
	if string(ft.src.Text[f.cell.Start:f.cell.End]) == esc {
		delete(ft.edits, f.cell.RawStart)
		return
	}
	if ft.edits == nil {
		ft.edits = map[int]Edit{}
	}
	ft.edits[f.cell.RawStart] = ft.src.SetCell(f.cell, esc, ft.src.Aligned(ft.table, 1))
}

// Changed reports whether the table differs from what was parsed.
func (ft *FieldTable) Changed() bool {
	if len(ft.edits) > 0 {
		return true
	}
	for _, f := range ft.fields {
		if f.pending {
			return true
		}
	}
	return false
}

// Edits returns the edits that make the file say what the table says now:
// changed cells, and the added rows after the table's last row.
func (ft *FieldTable) Edits() []Edit {
	edits := make([]Edit, 0, len(ft.edits)+1)
	for _, e := range ft.edits {
		edits = append(edits, e)
	}
	var rows []string
	for _, f := range ft.fields {
		if f.pending {
			rows = append(rows, ft.src.NewRow(ft.table, []string{Escape(f.Name), Escape(f.Value)}))
		}
	}
	if len(rows) > 0 {
		e := ft.src.InsertLines(ft.table.End(), rows...)
		e.Seq = 1
		edits = append(edits, e)
	}
	return edits
}

// NewTableLines renders a new field table in the style of model (the
// seed's style when model is nil), without line endings.
func (s *Source) NewTableLines(model *Table, rows [][2]string) []string {
	if model == nil {
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
	lines := []string{s.lineText(model.Header.Start), s.lineText(model.Delim.Start)}
	for _, r := range rows {
		lines = append(lines, s.NewRow(model, []string{Escape(r[0]), Escape(r[1])}))
	}
	return lines
}

func (s *Source) lineText(off int) string {
	end := s.LineEnd(off)
	for end > off && (s.Text[end-1] == '\n' || s.Text[end-1] == '\r') {
		end--
	}
	return string(s.Text[off:end])
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
