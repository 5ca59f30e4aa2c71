package loop

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocSaysWhereRulesLive keeps doc.go's map of the package true to its
// files: every file of the package is named there, and each name given in
// parentheses after a file is declared in that file.
func TestDocSaysWhereRulesLive(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	declared := map[string]map[string]bool{} // file → its top-level names
	var doc string
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if path == "doc.go" {
			doc = f.Doc.Text()
			continue
		}
		if f.Doc != nil {
			t.Errorf("%s has a package comment; the package's is doc.go's", path)
		}
		declared[path] = topLevelNames(f)
	}
	doc = strings.Join(strings.Fields(doc), " ")
	if doc == "" {
		t.Fatal("doc.go has no package comment")
	}

	fileRE := regexp.MustCompile(`\b([a-z]\w*\.go)\b`)
	namesRE := regexp.MustCompile(`\(([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*)\)`)
	mentioned := map[string]bool{}
	marks := fileRE.FindAllStringSubmatchIndex(doc, -1)
	for i, m := range marks {
		file := doc[m[2]:m[3]]
		mentioned[file] = true
		names, ok := declared[file]
		if !ok {
			t.Errorf("doc.go names %s, which is not a file of the package", file)
			continue
		}
		end := len(doc)
		if i+1 < len(marks) {
			end = marks[i+1][0]
		}
		for _, g := range namesRE.FindAllStringSubmatch(doc[m[1]:end], -1) {
			for _, name := range strings.Split(g[1], ", ") {
				if !names[name] {
					t.Errorf("doc.go says %s is in %s; it is not declared there", name, file)
				}
			}
		}
	}
	for file := range declared {
		if !mentioned[file] {
			t.Errorf("doc.go does not say what %s holds", file)
		}
	}
}

// topLevelNames returns the names a file declares at its top level,
// methods' included.
func topLevelNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[d.Name.Name] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
	return names
}
