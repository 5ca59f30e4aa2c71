package mdpatch

import (
	"fmt"
	"strings"
)

// FieldTable is a two-column | Field | Value | table read as named fields,
// with the changes made to it since. A big queue has many, so a table keeps
// only offsets into the source and makes a Field when one is asked for.
type FieldTable struct {
	src     *Source
	model   []cell32       // the cells of the last row: the style of new rows
	start   int32          // the start of the model row's line
	end     int32          // the end of the table's last line
	aligned uint64         // bit i: column i is padded to one width in every row
	rows    []row32        // the rows parsed
	set     map[int]*Field // the rows this change set, by index
	added   []*Field       // rows this change adds
	edits   map[int]Edit   // by the changed cell's RawStart
}

// row32 is a parsed row: its name's span, its value cell, its line.
type row32 struct {
	nameStart, nameEnd int32
	value              cell32
	line               int32
}

// Field is one row of a field table. Fields are read-only: Set changes them.
type Field struct {
	Name  string // as written
	Value string // as written, `\|` read as a pipe
	Line  int

	cell cell32
}

// cell32 is a Cell kept compactly.
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
	model := t.Header
	if len(t.Rows) > 0 {
		model = t.Rows[len(t.Rows)-1]
	}
	ft := &FieldTable{src: s, start: int32(model.Start), end: int32(t.End())}
	for _, c := range model.Cells {
		ft.model = append(ft.model, compact(c))
	}
	for col := range t.Header.Cells {
		if col < 64 && s.Aligned(t, col) {
			ft.aligned |= 1 << col
		}
	}
	var missing []int
	ft.rows = make([]row32, 0, len(t.Rows))
	for _, r := range t.Rows {
		line := s.Line(r.Start)
		if len(r.Cells) < 2 {
			missing = append(missing, line)
			continue
		}
		ft.rows = append(ft.rows, row32{
			nameStart: int32(r.Cells[0].Start), nameEnd: int32(r.Cells[0].End),
			value: compact(r.Cells[1]), line: int32(line),
		})
	}
	return ft, missing
}

func (ft *FieldTable) isAligned(col int) bool { return col < 64 && ft.aligned&(1<<col) != 0 }

// name returns row i's name, a view of the source.
func (ft *FieldTable) name(i int) string {
	r := ft.rows[i]
	return ft.src.Value(Cell{Start: int(r.nameStart), End: int(r.nameEnd)})
}

// field returns row i as a Field: the one Set made, or a new one.
func (ft *FieldTable) field(i int) *Field {
	if f, ok := ft.set[i]; ok {
		return f
	}
	r := ft.rows[i]
	return &Field{Name: ft.name(i), Value: ft.src.Value(r.value.full()), Line: int(r.line), cell: r.value}
}

// Fields returns the fields in table order, added ones last.
func (ft *FieldTable) Fields() []*Field {
	out := make([]*Field, 0, len(ft.rows)+len(ft.added))
	for i := range ft.rows {
		out = append(out, ft.field(i))
	}
	return append(out, ft.added...)
}

// Each calls fn with each field in table order, added ones last. The Field
// is valid only during the call.
func (ft *FieldTable) Each(fn func(*Field)) {
	var f Field
	for i, r := range ft.rows {
		if sf, ok := ft.set[i]; ok {
			fn(sf)
			continue
		}
		f = Field{Name: ft.name(i), Value: ft.src.Value(r.value.full()), Line: int(r.line), cell: r.value}
		fn(&f)
	}
	for _, f := range ft.added {
		fn(f)
	}
}

// index returns the index of the row named name, or -1.
func (ft *FieldTable) index(name string) int {
	for i := range ft.rows {
		if SameName(ft.name(i), name) {
			return i
		}
	}
	return -1
}

// Field returns the field named name (matched loosely, see Norm), or nil.
func (ft *FieldTable) Field(name string) *Field {
	if i := ft.index(name); i >= 0 {
		return ft.field(i)
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
	i := ft.index(name)
	if i < 0 {
		for _, f := range ft.added {
			if SameName(f.Name, name) {
				f.Value = Unescape(esc)
				return
			}
		}
		ft.added = append(ft.added, &Field{Name: newName, Value: Unescape(esc)})
		return
	}
	f := ft.field(i)
	f.Value = Unescape(esc)
	if ft.set == nil {
		ft.set = map[int]*Field{}
	}
	ft.set[i] = f
	c := f.cell.full()
	if string(ft.src.Text[c.Start:c.End]) == esc {
		delete(ft.edits, c.RawStart)
		return
	}
	if ft.edits == nil {
		ft.edits = map[int]Edit{}
	}
	ft.edits[c.RawStart] = ft.src.SetCell(c, esc, ft.isAligned(1))
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
		rows = append(rows, ft.src.NewRow(ft.modelRow(), ft.isAligned, []string{Escape(f.Name), Escape(f.Value)}))
	}
	if len(rows) > 0 {
		e := ft.src.InsertLines(int(ft.end), rows...)
		e.Seq = 1
		edits = append(edits, e)
	}
	return edits
}

func (ft *FieldTable) modelRow() Row {
	r := Row{Start: int(ft.start)}
	for _, c := range ft.model {
		r.Cells = append(r.Cells, c.full())
	}
	return r
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
