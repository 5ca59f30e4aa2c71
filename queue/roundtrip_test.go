package queue

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var testNow = time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)

// applyOps runs the operations of a golden case on q. One per line:
//
//	set ID NAME=VALUE
//	section ID TITLE=BODY        (\n in BODY is a line break)
//	add NAME=VALUE;… | TITLE=BODY;…
func applyOps(t *testing.T, q *Queue, ops string) {
	t.Helper()
	for _, line := range strings.Split(ops, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || line == "crlf" || line == "bom" || line == "nofinalnewline" {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "set", "section":
			id, kv, _ := strings.Cut(rest, " ")
			is := q.Issue(id)
			if is == nil {
				t.Fatalf("op %q: no issue %s", line, id)
			}
			k, v, _ := strings.Cut(kv, "=")
			if verb == "set" {
				is.Set(k, v)
			} else {
				is.SetSection(k, strings.ReplaceAll(v, `\n`, "\n"))
			}
		case "add":
			f, s, _ := strings.Cut(rest, "|")
			q.Add(testNow, pairs(f), pairs(s))
		default:
			t.Fatalf("unknown op %q", line)
		}
	}
}

func pairs(s string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			m[strings.TrimSpace(k)] = strings.ReplaceAll(v, `\n`, "\n")
		}
	}
	return m
}

// TestRoundTrip runs every case of testdata/roundtrip: the input must come
// out byte for byte when nothing changes, and as want.md after the ops,
// with every other byte kept. A case whose ops say "crlf" or "bom" runs on
// the input with CRLF line endings or a BOM, and must keep them.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/roundtrip/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden cases")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var input, ops []byte
			wantIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input.md":
					input = f.Data
				case "ops":
					ops = f.Data
				case "want.md":
					wantIdx = i
				}
			}
			crlf := bytes.Contains(ops, []byte("\ncrlf")) || bytes.HasPrefix(ops, []byte("crlf"))
			bom := bytes.Contains(ops, []byte("\nbom")) || bytes.HasPrefix(ops, []byte("bom"))
			noEOL := bytes.Contains(ops, []byte("\nnofinalnewline")) || bytes.HasPrefix(ops, []byte("nofinalnewline"))
			if noEOL {
				input = bytes.TrimRight(input, "\n")
			}
			in := input
			if crlf {
				in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
			}
			if bom {
				in = append([]byte("\xEF\xBB\xBF"), in...)
			}

			q := Parse(in)
			if len(q.Problems) > 0 {
				t.Fatalf("input has problems: %v", q.Problems)
			}
			if got := q.Bytes(); !bytes.Equal(got, in) {
				t.Fatalf("a no-op changed the file:\n%s", got)
			}
			// Setting every field to its own value is a no-op too.
			for _, is := range q.Issues {
				for _, f := range is.Fields() {
					is.Set(f.Name, f.Value)
				}
			}
			if got := q.Bytes(); !bytes.Equal(got, in) || q.Changed() {
				t.Fatalf("re-setting every field changed the file:\n%s", got)
			}

			q = Parse(in)
			applyOps(t, q, string(ops))
			out := q.Bytes()
			if crlf {
				if bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
					t.Errorf("output has a bare LF:\n%q", out)
				}
				out = bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))
			}
			if bom {
				if !bytes.HasPrefix(out, []byte("\xEF\xBB\xBF")) {
					t.Errorf("output lost its BOM")
				}
				out = bytes.TrimPrefix(out, []byte("\xEF\xBB\xBF"))
			}
			if noEOL {
				if bytes.HasSuffix(out, []byte("\n")) && len(q.added) == 0 {
					t.Errorf("output gained a final newline")
				}
				if !bytes.HasSuffix(out, []byte("\n")) {
					out = append(out, '\n') // txtar ends every file with one
				}
			}
			// What was written must parse back, clean, with what was set.
			back := Parse(q.Bytes())
			if len(back.Problems) > 0 {
				t.Errorf("output has problems: %v\n%s", back.Problems, out)
			}
			for _, is := range q.All() {
				bis := back.Issue(is.ID)
				if bis == nil {
					t.Errorf("output lost issue %s", is.ID)
					continue
				}
				for _, f := range is.Fields() {
					if got, _ := bis.Get(f.Name); got != strings.TrimSpace(f.Value) {
						t.Errorf("%s %s reads back %q; want %q", is.ID, f.Name, got, f.Value)
					}
				}
			}
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want.md"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = out
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantIdx < 0 {
				t.Fatalf("no want.md; run with -update")
			}
			if want := ar.Files[wantIdx].Data; !bytes.Equal(out, want) {
				t.Errorf("after the ops:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}
