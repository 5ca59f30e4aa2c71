package orchestrate_test

// Tests of the repository itself, as golang.org/x/vuln's all_test.go has:
// the packages' layering, the size of each function, and the one package
// that starts git.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/orchestrate-dev/orchestrate"

// floors puts each package of the module (by its directory, "." for the
// module's root, "internal/" for every package under internal/) on a floor.
// A package imports only packages on its own floor or below: the files and
// their formats at the bottom, the gates above them, the loop above the
// gates, the pool of agents above the loop, and the command at the top. A package missing here fails
// TestLayers: give it its floor.
var floors = map[string]int{
	// 0: leaves, importing no package of the module.
	".":          0, // the files orchestrate ships (the example .orchestrator/)
	"internal/":  0, // atomic files, markdown patching, text cleaning, JSON settings, file problems, running git
	"signature/": 0, // failure signatures
	"findings/":  0, // findings parsed from tools' output
	"results/":   0, // test-level results read from gates' output, judged against a baseline
	"worktree/":  0, // an issue's git worktree: made, merged back, removed
	"prompts/":   0, // the prompt templates
	"agentcli/":  0, // the agent CLIs: profiles, outputs, hooks, trust
	// 1: the files of .orchestrator/ and the settings.
	"config/":    1,
	"queue/":     1,
	"session/":   1,
	"analytics/": 1,
	// 2: running the quality gates.
	"gate/": 2,
	// 2: the claims of several agents on the queue, and what machines
	// share on a git remote (the claims, the queue, the histories, the work).
	"claim/":  2,
	"remote/": 2,
	// 3: the loop: records, checks, runs, hooks, watch.
	"loop/": 3,
	// 4: several agents at once: the pool, the merge train.
	"pool/": 4,
	// 5: the command, and the tests that drive it from outside.
	"cmd/orchestrate/": 5,
	"e2e/":             5,
}

// floorOf returns the floor of the package in directory dir, or false.
func floorOf(dir string) (int, bool) {
	if dir == "." {
		f, ok := floors["."]
		return f, ok
	}
	best, floor := "", 0
	for prefix, f := range floors {
		if prefix != "." && strings.HasPrefix(dir+"/", prefix) && len(prefix) > len(best) {
			best, floor = prefix, f
		}
	}
	return floor, best != ""
}

// sourceFiles calls fn with every Go file of the module (test files when
// tests is true), parsed with mode, and its directory relative to the root.
// It skips testdata, hidden directories and the directories of other modules.
func sourceFiles(t *testing.T, tests bool, mode parser.Mode, fn func(fset *token.FileSet, dir, path string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != "." && fileExists(filepath.Join(path, "go.mod")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") != tests {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode)
		if err != nil {
			return err
		}
		fn(fset, filepath.ToSlash(filepath.Dir(path)), filepath.ToSlash(path), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// imports returns, for each package directory of the module, the package
// directories of the module its non-test files import (in any build).
func imports(t *testing.T) map[string][]string {
	graph := map[string][]string{}
	sourceFiles(t, false, parser.ImportsOnly, func(_ *token.FileSet, dir, _ string, f *ast.File) {
		if _, ok := graph[dir]; !ok {
			graph[dir] = nil
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			var to string
			switch {
			case p == module:
				to = "."
			case strings.HasPrefix(p, module+"/"):
				to = strings.TrimPrefix(p, module+"/")
			default:
				continue
			}
			if !slices.Contains(graph[dir], to) {
				graph[dir] = append(graph[dir], to)
			}
		}
	})
	return graph
}

// TestLayers: no package imports a package on a floor above its own, and
// no package imports itself through others.
func TestLayers(t *testing.T) {
	graph := imports(t)
	if len(graph) < 10 {
		t.Fatalf("found %d packages; is the test run from the module's root?", len(graph))
	}
	dirs := make([]string, 0, len(graph))
	for dir := range graph {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		floor, ok := floorOf(dir)
		if !ok {
			t.Errorf("%s: no floor in all_test.go's floors: give it one", dir)
			continue
		}
		for _, to := range graph[dir] {
			if f, ok := floorOf(to); ok && f > floor {
				t.Errorf("%s (floor %d) imports %s (floor %d), a floor above it", dir, floor, to, f)
			}
		}
	}
	if cycle := findCycle(graph); cycle != nil {
		t.Errorf("import cycle: %s", strings.Join(cycle, " -> "))
	}
}

// findCycle returns a path of imports that comes back to where it began,
// or nil when there is none.
func findCycle(graph map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(p string) []string {
		switch state[p] {
		case onPath:
			i := slices.Index(path, p)
			return append(slices.Clone(path[i:]), p)
		case done:
			return nil
		}
		state[p] = onPath
		path = append(path, p)
		for _, q := range graph[p] {
			if c := visit(q); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[p] = done
		return nil
	}
	keys := make([]string, 0, len(graph))
	for p := range graph {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	for _, p := range keys {
		if c := visit(p); c != nil {
			return c
		}
	}
	return nil
}

func TestFindCycle(t *testing.T) {
	if c := findCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil}); c != nil {
		t.Errorf("a chain: got cycle %v", c)
	}
	if c := findCycle(map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": nil}); c != nil {
		t.Errorf("a diamond: got cycle %v", c)
	}
	got := findCycle(map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"b"}})
	if want := []string{"b", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("b -> c -> b: got %v, want %v", got, want)
	}
	if got := findCycle(map[string][]string{"a": {"a"}}); !slices.Equal(got, []string{"a", "a"}) {
		t.Errorf("a -> a: got %v", got)
	}
}

func TestFloorOf(t *testing.T) {
	for dir, want := range map[string]int{".": 0, "internal/fsx": 0, "queue": 1, "gate": 2, "loop": 3, "pool": 4, "cmd/orchestrate": 5} {
		if got, ok := floorOf(dir); !ok || got != want {
			t.Errorf("floorOf(%q) = %d, %v; want %d", dir, got, ok, want)
		}
	}
	for _, dir := range []string{"cmd", "cmd/other", "queuex", "newpkg"} {
		if f, ok := floorOf(dir); ok {
			t.Errorf("floorOf(%q) = %d, true; want none", dir, f)
		}
	}
}

// The limits on a function outside tests: its lines, from func to its
// closing brace, and its cyclomatic complexity as gocyclo counts it.
const (
	maxLines      = 80
	maxComplexity = 25
)

type size struct{ lines, complexity int }

func (s size) over() bool { return s.lines > maxLines || s.complexity > maxComplexity }

// funcName names a function: its package directory, its receiver's type if
// any, and its name.
func funcName(dir string, fd *ast.FuncDecl) string {
	name := fd.Name.Name
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		name = recvType(fd.Recv.List[0].Type) + "." + name
	}
	return dir + "." + name
}

func recvType(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return "(*" + recvType(x.X) + ")"
	case *ast.IndexExpr:
		return recvType(x.X)
	case *ast.IndexListExpr:
		return recvType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", x)
}

// complexity is the cyclomatic complexity of fn as gocyclo counts it: 1,
// plus 1 for each if, for, range, case clause but default (of switch,
// type switch and select) and each && and ||, in fn and the function
// literals in it.
func complexity(fn ast.Node) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}

func TestComplexity(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int
	}{
		{"", 1},
		{"if a {}", 2},
		{"if a && b || c {} else if d {}", 5},
		{"for {}; for range x {}; for i := 0; i < 1; i++ {}", 4},
		{"switch x { case 1, 2: ; case 3: ; default: }", 3},
		{"switch x.(type) { case int: ; default: }", 2},
		{"select { case <-c: ; case c <- 1: ; default: }", 3},
		{"f := func() { if a {} }; _ = f", 2},
		{"_ = a == b; _ = a + b", 1},
	} {
		src := "package p\nfunc f() {\n" + tc.body + "\n}\n"
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
		if err != nil {
			t.Fatalf("%q: %v", tc.body, err)
		}
		if got := complexity(f.Decls[0]); got != tc.want {
			t.Errorf("complexity of %q = %d, want %d", tc.body, got, tc.want)
		}
	}
}

// TestFunctionSize: no function outside tests is over maxLines lines or
// over maxComplexity.
func TestFunctionSize(t *testing.T) {
	n := 0
	sourceFiles(t, false, 0, func(fset *token.FileSet, dir, path string, f *ast.File) {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n++
			start := fset.Position(fd.Pos()).Line
			s := size{fset.Position(fd.End()).Line - start + 1, complexity(fd)}
			if s.over() {
				t.Errorf("%s:%d: %s is %d lines (at most %d), complexity %d (at most %d): split it",
					path, start, funcName(dir, fd), s.lines, maxLines, s.complexity, maxComplexity)
			}
		}
	})
	if n < 100 {
		t.Fatalf("read %d functions; is the test run from the module's root?", n)
	}
}

// maxFileLines is the most lines a file outside tests may have.
const maxFileLines = 800

// TestFileSize: no file outside tests is over maxFileLines lines.
func TestFileSize(t *testing.T) {
	n := 0
	sourceFiles(t, false, parser.PackageClauseOnly, func(_ *token.FileSet, _, path string, _ *ast.File) {
		n++
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if lines > maxFileLines {
			t.Errorf("%s is %d lines (at most %d): split it by concept", path, lines, maxFileLines)
		}
	})
	if n < 100 {
		t.Fatalf("read %d files; is the test run from the module's root?", n)
	}
}

// TestGitOneHome holds git to one package: no non-test file outside
// internal/git starts it (exec.Command, exec.CommandContext or
// exec.LookPath with "git"), so that every git command runs with that
// package's environment, timeouts and errors.
func TestGitOneHome(t *testing.T) {
	home := 0
	sourceFiles(t, false, 0, func(fset *token.FileSet, dir, path string, f *ast.File) {
		for _, call := range gitCalls(f) {
			if dir == "internal/git" {
				home++
				continue
			}
			t.Errorf("%s: starts git: run it through internal/git", fset.Position(call.Pos()))
		}
	})
	if home == 0 {
		t.Fatal("found no start of git in internal/git: the test no longer sees one")
	}
}

// gitCalls returns the calls of f that start git: os/exec's Command,
// CommandContext or LookPath with the literal "git" among their arguments.
func gitCalls(f *ast.File) []*ast.CallExpr {
	execName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "os/exec" {
			execName = "exec"
			if imp.Name != nil {
				execName = imp.Name.Name
			}
		}
	}
	if execName == "" {
		return nil
	}
	var calls []*ast.CallExpr
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !slices.Contains([]string{"Command", "CommandContext", "LookPath"}, sel.Sel.Name) {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != execName {
			return true
		}
		for _, arg := range call.Args {
			if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, _ := strconv.Unquote(lit.Value); s == "git" {
					calls = append(calls, call)
				}
			}
		}
		return true
	})
	return calls
}

// cliNames are the agent CLIs' names, as a string of the code would spell
// them (case aside).
var cliNames = []string{"claude", "codex", "gemini", "opencode", "cursor", "aider"}

// cliHomes are the package directories that may name an agent CLI in a
// string: agentcli, which knows them, and the command, whose flags and
// help name them.
var cliHomes = []string{"agentcli", "cmd/orchestrate"}

// TestAgentCLIsKnownOnce: no non-test file outside cliHomes holds a string
// literal naming an agent CLI. What a CLI is (its commands, files, output
// and rules) lives in agentcli; a comment may still name one.
func TestAgentCLIsKnownOnce(t *testing.T) {
	sourceFiles(t, false, 0, func(fset *token.FileSet, dir, path string, f *ast.File) {
		if slices.Contains(cliHomes, dir) {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			lower := strings.ToLower(lit.Value)
			for _, name := range cliNames {
				if strings.Contains(lower, name) {
					t.Errorf("%s: a string names the agent CLI %s: what a CLI is belongs in agentcli/", fset.Position(lit.Pos()), name)
				}
			}
			return true
		})
	})
}

// TestWhereThingsLive: docs/development.md's table of where things live
// gives every package of floors, on its floor.
func TestWhereThingsLive(t *testing.T) {
	data, err := os.ReadFile("docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "## Where things live")
	if !ok {
		t.Fatal("docs/development.md has no section \"Where things live\"")
	}
	for dir, floor := range floors {
		row := fmt.Sprintf("| %d | `%s` |", floor, dir)
		if !strings.Contains(table, row) {
			t.Errorf("docs/development.md's where things live has no row %q", row)
		}
	}
}
