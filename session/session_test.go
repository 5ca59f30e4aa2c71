package session

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden patches each testdata case's input.md with the ops (one
// NAME=VALUE a line) and compares with want.md; a no-op must return the
// very bytes read. "crlf" in the ops runs the case with CRLF line endings.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var in, ops []byte
			want := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input.md":
					in = f.Data
				case "ops":
					ops = f.Data
				case "want.md":
					want = i
				}
			}
			crlf := bytes.Contains(ops, []byte("crlf\n"))
			if crlf {
				in = bytes.ReplaceAll(in, []byte("\n"), []byte("\r\n"))
			}
			s := Parse(in)
			if len(s.Problems) > 0 {
				t.Fatalf("problems: %v", s.Problems)
			}
			if got := s.Bytes(); len(in) > 0 && !bytes.Equal(got, in) {
				t.Fatalf("a no-op changed the file:\n%s", got)
			}
			for _, line := range strings.Split(string(ops), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					s.Set(k, v)
				}
			}
			out := s.Bytes()
			back := Parse(out)
			for _, line := range strings.Split(string(ops), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok {
					if got, _ := back.Get(k); got != v && !(v == "null" && got == "null") {
						t.Errorf("%s reads back %q; want %q", k, got, v)
					}
				}
			}
			if crlf {
				if bytes.Count(out, []byte("\n")) != bytes.Count(out, []byte("\r\n")) {
					t.Errorf("a bare LF in the output")
				}
				out = bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n"))
			}
			if *update {
				if want < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want.md"})
					want = len(ar.Files) - 1
				}
				ar.Files[want].Data = out
				os.WriteFile(file, txtar.Format(ar), 0o644)
				return
			}
			if want < 0 || !bytes.Equal(out, ar.Files[want].Data) {
				t.Errorf("got:\n%s", out)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	s := Parse([]byte("## Auto-Retry State\n\n| Field | Value |\n|---|---|\n| total_auto_retries | x |\n| auto_retry_enabled | maybe |\n| run_id |\n"))
	want := []string{
		`5: total_auto_retries "x" is not a non-negative integer`,
		`6: auto_retry_enabled "maybe" is not true or false`,
		`7: table row has a missing cell`,
	}
	var got []string
	for _, p := range s.Problems {
		got = append(got, p.Format("")[1:])
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s := Parse([]byte("## Auto-Retry State\n\nno table\n")); len(s.Problems) != 1 {
		t.Errorf("a section without a table: %v", s.Problems)
	}
}

func TestDefaults(t *testing.T) {
	s := Parse(nil)
	if s.TotalAutoRetries() != 0 || !s.AutoRetryEnabled() {
		t.Errorf("defaults: %d %v", s.TotalAutoRetries(), s.AutoRetryEnabled())
	}
	if _, ok := s.Get(LastRetryReason); ok {
		t.Errorf("last_retry_reason null reads as set")
	}
}
