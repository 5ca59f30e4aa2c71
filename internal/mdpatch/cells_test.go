package mdpatch

import (
	"strings"
	"testing"
)

// Table-driven tests of the cell rules: escaping, the field table's edits
// (a cell changed in place, its padding and its column's width kept, a row
// added in the table's style), loose field names and booleans.

func TestEscapeRules(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a|b", `a\|b`},
		{"||", `\|\|`},
		{`a\|b`, `a\\|b`}, // a backslash before a pipe stays a backslash
		{"two\nlines", "two lines"},
		{"crlf\r\nline", "crlf  line"},
		{"  padded  ", "padded"},
		{"\nleading break", "leading break"},
		{"ends in a pipe |", `ends in a pipe \|`},
	} {
		got := Escape(tc.in)
		if got != tc.want {
			t.Errorf("Escape(%q) = %q; want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\r\n") {
			t.Errorf("Escape(%q) = %q: a line break in a cell ends the table", tc.in, got)
		}
		// What Escape writes, Unescape reads back (line breaks aside).
		if back := Unescape(got); !strings.ContainsAny(tc.in, "\r\n") && back != strings.TrimSpace(tc.in) {
			t.Errorf("Unescape(Escape(%q)) = %q; want it back", tc.in, back)
		}
	}
}

func TestUnescapeRules(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"no pipe", "no pipe"},
		{`a\|b`, "a|b"},
		{`a\\|b`, `a\|b`},
		{`\|\|`, "||"},
		{`back\slash`, `back\slash`},
	} {
		if got := Unescape(tc.in); got != tc.want {
			t.Errorf("Unescape(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

// fieldTable parses text and returns its first table as fields.
func fieldTable(t *testing.T, text string) (*Source, *FieldTable) {
	t.Helper()
	s := NewSource([]byte(text))
	for _, b := range s.Blocks() {
		if b.Kind == TableBlock {
			ft, missing := s.FieldTable(b.Table)
			if len(missing) > 0 {
				t.Fatalf("rows without a value at lines %v", missing)
			}
			return s, ft
		}
	}
	t.Fatalf("no table in %q", text)
	return nil, nil
}

func TestFieldTableSet(t *testing.T) {
	for _, tc := range []struct {
		name       string
		in         string
		field, val string
		want       string
	}{
		{"a cell in place",
			"| Field | Value |\n|---|---|\n| Status | pending |\n",
			"Status", "resolved",
			"| Field | Value |\n|---|---|\n| Status | resolved |\n"},
		{"the same value changes nothing",
			"| Field | Value |\n|---|---|\n| Status |   pending |\n",
			"Status", "pending",
			"| Field | Value |\n|---|---|\n| Status |   pending |\n"},
		{"an aligned column keeps its width",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n| Count  | 1       |\n",
			"Count", "10",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n| Count  | 10      |\n"},
		{"a value wider than an aligned column keeps one space",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n| Count  | 1       |\n",
			"Count", "1234567890",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n| Count  | 1234567890 |\n"},
		{"a pipe is escaped",
			"| Field | Value |\n|---|---|\n| Summary | x |\n",
			"Summary", "a | b",
			"| Field | Value |\n|---|---|\n| Summary | a \\| b |\n"},
		{"a line break becomes a space",
			"| Field | Value |\n|---|---|\n| Summary | x |\n",
			"Summary", "one\ntwo",
			"| Field | Value |\n|---|---|\n| Summary | one two |\n"},
		{"names match loosely",
			"| Field | Value |\n|---|---|\n| Retry-Count | 1 |\n",
			"retry_count", "2",
			"| Field | Value |\n|---|---|\n| Retry-Count | 2 |\n"},
		{"an empty cell",
			"| Field | Value |\n|---|---|\n| Approved | |\n",
			"Approved", "yes",
			"| Field | Value |\n|---|---|\n| Approved | yes |\n"},
		{"a new field is a row in the table's style",
			"| Field | Value |\n|---|---|\n| Status | pending |\n\nafter\n",
			"Halted", "true",
			"| Field | Value |\n|---|---|\n| Status | pending |\n| Halted | true |\n\nafter\n"},
		{"a new field in an aligned table",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n",
			"Gate", "unit",
			"| Field  | Value   |\n|--------|---------|\n| Status | pending |\n| Gate   | unit    |\n"},
		{"no outer pipes: a value ending in a pipe is closed",
			"Field | Value\n--- | ---\nSummary | x\n",
			"Summary", "ends |",
			"Field | Value\n--- | ---\nSummary | ends \\| |\n"},
		{"CRLF: a new row ends as the file's lines do",
			"| Field | Value |\r\n|---|---|\r\n| Status | pending |\r\n",
			"Gate", "unit",
			"| Field | Value |\r\n|---|---|\r\n| Status | pending |\r\n| Gate | unit |\r\n"},
		{"a BOM stays",
			"\ufeff| Field | Value |\n|---|---|\n| Status | pending |\n",
			"Status", "stuck",
			"\ufeff| Field | Value |\n|---|---|\n| Status | stuck |\n"},
		{"no final line ending: a new row keeps it so",
			"| Field | Value |\n|---|---|\n| Status | pending |",
			"Gate", "unit",
			"| Field | Value |\n|---|---|\n| Status | pending |\n| Gate | unit |"},
	} {
		s, ft := fieldTable(t, tc.in)
		ft.Set(tc.field, tc.field, tc.val)
		got := string(s.Apply(ft.Edits()))
		if got != tc.want {
			t.Errorf("%s: Set(%s, %q):\n got %q\nwant %q", tc.name, tc.field, tc.val, got, tc.want)
		}
		if ft.Changed() != (tc.in != tc.want) {
			t.Errorf("%s: Changed() = %v", tc.name, ft.Changed())
		}
		f := ft.Field(tc.field)
		if f == nil || f.Value != strings.ReplaceAll(strings.TrimSpace(tc.val), "\n", " ") {
			t.Errorf("%s: Field(%s) after Set = %+v; want %q", tc.name, tc.field, f, tc.val)
		}
		// What was written reads back the same.
		if _, again := fieldTable(t, got); again.Field(tc.field) == nil || again.Field(tc.field).Value != f.Value {
			t.Errorf("%s: %s reads back as %+v; want %q", tc.name, tc.field, again.Field(tc.field), f.Value)
		}
	}
}

func TestFieldTableReadsFields(t *testing.T) {
	_, ft := fieldTable(t, "| Field | Value |\n|---|---|\n| Status | pending |\n| Summary | a \\| b |\n| Empty | |\n")
	var got []string
	ft.Each(func(f *Field) { got = append(got, f.Name+"="+f.Value) })
	want := "Status=pending Summary=a | b Empty="
	if strings.Join(got, " ") != want {
		t.Errorf("Each = %q; want %q", strings.Join(got, " "), want)
	}
	fs := ft.Fields()
	if len(fs) != 3 || fs[1].Line != 4 {
		t.Errorf("Fields = %+v; want 3 fields, Summary on line 4", fs)
	}
	if ft.Field("summary") == nil || ft.Field("Missing") != nil {
		t.Errorf("Field: loose match or absent field wrong")
	}
	if ft.Changed() {
		t.Errorf("a table read and not set is Changed")
	}
}

func TestSameNameRules(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"Retry-Count", "retry_count", true},
		{"Retry-Count", "RetryCount", true},
		{"Retry-Count", "retry count", true},
		{"Retry-Count", "Retry-Counts", false},
		{"Status", "State", false},
		{"", "-", true},
		{"a", "", false},
	} {
		if got := SameName(tc.a, tc.b); got != tc.same {
			t.Errorf("SameName(%q, %q) = %v; want %v", tc.a, tc.b, got, tc.same)
		}
		if got := Norm(tc.a) == Norm(tc.b); got != tc.same {
			t.Errorf("Norm(%q) == Norm(%q) is %v; want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestParseBoolRules(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
		ok   bool
	}{
		{"true", true, true}, {"TRUE", true, true}, {"yes", true, true}, {"1", true, true},
		{" `true` ", true, true},
		{"false", false, true}, {"No", false, true}, {"0", false, true},
		{"", false, false}, {"maybe", false, false}, {"2", false, false}, {"y", false, false},
	} {
		got, err := ParseBool(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseBool(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestNewTableLinesRules(t *testing.T) {
	got := strings.Join(NewTableLines([][2]string{{"Status", "pending"}, {"Empty", ""}, {"Pipe|Name", "a|b"}}), "\n")
	want := "| Field | Value |\n|-------|-------|\n| Status | pending |\n| Empty | |\n| Pipe\\|Name | a\\|b |"
	if got != want {
		t.Errorf("NewTableLines =\n%s\nwant\n%s", got, want)
	}
	_, ft := fieldTable(t, got+"\n")
	if f := ft.Field("Pipe|Name"); f == nil || f.Value != "a|b" {
		t.Errorf("NewTableLines' escaped row reads back as %+v", f)
	}
}

func TestSourceLines(t *testing.T) {
	s := NewSource([]byte("one\ntwo\r\nthree"))
	for _, tc := range []struct{ off, line, start, end int }{
		{0, 1, 0, 4}, // the line ending included
		{3, 1, 0, 4},
		{4, 2, 4, 9},
		{9, 3, 9, 14},
		{14, 3, 9, 14},
	} {
		if l, st, e := s.Line(tc.off), s.LineStart(tc.off), s.LineEnd(tc.off); l != tc.line || st != tc.start || e != tc.end {
			t.Errorf("offset %d: line %d [%d, %d); want %d [%d, %d)", tc.off, l, st, e, tc.line, tc.start, tc.end)
		}
	}
	if s.EOL != "\n" {
		t.Errorf("EOL = %q; want the first line's", s.EOL)
	}
	if !NewSource([]byte("a\nb\n\n  \n")).IsBlankLine(4) || NewSource([]byte("a\nb\n")).IsBlankLine(2) {
		t.Errorf("IsBlankLine wrong")
	}
}

func TestApplyOrder(t *testing.T) {
	s := NewSource([]byte("abcdef"))
	got := string(s.Apply([]Edit{
		{Start: 4, End: 6, New: "EF"},
		{Start: 0, End: 0, New: "2", Seq: 2},
		{Start: 0, End: 0, New: "1", Seq: 1},
		{Start: 2, End: 3, New: ""},
	}))
	if got != "12abdEF" {
		t.Errorf("Apply = %q; want %q", got, "12abdEF")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Apply of overlapping edits did not panic")
		}
	}()
	s.Apply([]Edit{{Start: 0, End: 3}, {Start: 2, End: 4}})
}

// FuzzSourceLines checks Line, LineStart and LineEnd against a count from
// the start of the text, at offsets visited in any order (Line counts on
// from the offset it last counted to).
func FuzzSourceLines(f *testing.F) {
	f.Add("one\ntwo\r\nthree", []byte{0, 14, 3, 9, 4, 200})
	f.Add("\n\n\n", []byte{3, 0, 2, 1})
	f.Add("", []byte{0, 5})
	f.Fuzz(func(t *testing.T, text string, offs []byte) {
		s := NewSource([]byte(text))
		for _, o := range offs {
			off := int(o) % (len(text) + 1)
			line := 1 + strings.Count(text[:off], "\n")
			start := strings.LastIndex(text[:off], "\n") + 1
			end := len(text)
			if i := strings.Index(text[off:], "\n"); i >= 0 {
				end = off + i + 1
			}
			if l, st, e := s.Line(off), s.LineStart(off), s.LineEnd(off); l != line || st != start || e != end {
				t.Fatalf("%q at %d: line %d [%d, %d); want %d [%d, %d)", text, off, l, st, e, line, start, end)
			}
		}
	})
}
