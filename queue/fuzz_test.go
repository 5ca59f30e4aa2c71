package queue

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzQueue checks that parsing never panics, that a no-op patch returns
// the very bytes parsed, and that a value set reads back after a parse.
func FuzzQueue(f *testing.F) {
	files, _ := filepath.Glob("testdata/roundtrip/*.txtar")
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range ar.Files {
			if strings.HasSuffix(af.Name, ".md") {
				f.Add(af.Data, "in_progress")
				f.Add(bytes.ReplaceAll(af.Data, []byte("\n"), []byte("\r\n")), "a | b")
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, value string) {
		q := Parse(data)
		if got := q.Bytes(); !bytes.Equal(got, data) {
			t.Fatalf("no-op changed the bytes:\n%q\n%q", data, got)
		}
		if len(q.Problems) > 0 || len(q.Issues) == 0 || !plainValue(value) {
			return
		}
		is := q.Issues[0]
		is.Set("Fuzz-Field", value)
		if fs := is.Fields(); len(fs) > 0 {
			is.Set(fs[0].Name, value)
		}
		out := q.Bytes()
		back := Parse(out)
		bis := back.Issue(is.ID)
		if bis == nil {
			t.Fatalf("issue %s lost:\n%s", is.ID, out)
		}
		want := strings.TrimSpace(mdpatch.Unescape(mdpatch.Escape(value)))
		if got, _ := bis.Get("Fuzz-Field"); got != want {
			t.Fatalf("Fuzz-Field reads back %q; want %q\n%s", got, want, out)
		}
	})
}

// plainValue reports whether a value can be a cell's text at all: no
// control characters, no backslash or backtick (whose markdown meaning
// would change what the cell says).
func plainValue(v string) bool {
	for _, r := range v {
		if unicode.IsControl(r) || r == '\\' || r == '`' || r == unicode.ReplacementChar {
			return false
		}
	}
	return true
}
