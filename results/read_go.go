package results

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

var (
	// go test's line for a package: "ok  \tpkg\t0.1s", "FAIL\tpkg\t0.1s",
	// "FAIL\tpkg [build failed]", "?   \tpkg\t[no test files]".
	reGoPackage = lazyre.New(`^(ok  |FAIL|\?   )\t(\S+)(?:[ \t](.*))?$`)
	// "--- FAIL: TestX (0.00s)", indented for a subtest.
	reGoResult = lazyre.New(`^(\s*)--- (FAIL|PASS|SKIP): (\S+)(?: \(.*\))?$`)
	// "=== RUN   TestX", "=== CONT  TestX", "=== NAME  TestX".
	reGoRun = lazyre.New(`^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)$`)
)

// maxRunning is how many running tests' output go test -v's reader keeps
// at once (each at most MaxBlock).
const maxRunning = 256

// goTest is a test of the package being read, waiting for the package's
// name, which go test prints after its tests.
type goTest struct {
	name  string
	block boundedText
}

// goText reads go test's text output, -v or not: a unit is the package
// and its top-level test ("example.com/m/pkg TestX"); a failing subtest
// counts for its top-level test, and a panic for the test that was
// running. A package that failed to build or set up fails the gate whole.
type goText struct {
	u      *units
	seen   bool
	failed []*goTest // the failed tests of the package being read
	more   int       // and those past MaxUnits
	passed []string
	// running holds the output of each test started and not done (-v).
	running map[string]*boundedText
	current string  // the test the output is of (-v)
	inFail  *goTest // the failed test whose indented lines follow
	panic   *boundedText
	build   bool // "# pkg" lines: a build's errors follow
}

func newGoText() *goText { return &goText{u: newUnits(), running: map[string]*boundedText{}} }

func (g *goText) runner() string   { return "go" }
func (g *goText) recognized() bool { return g.seen }

// top returns a test's top-level test: "TestX" of "TestX/case".
func top(name string) string {
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

func (g *goText) line(l string) {
	if m := goPackage(l); m != nil {
		g.seen = true
		g.endPackage(m[1], m[2], m[3])
		return
	}
	if m := reGoRun.FindStringSubmatch(l); m != nil {
		g.seen = true
		g.run(m[1], top(m[2]))
		return
	}
	if m := reGoResult.FindStringSubmatch(l); m != nil {
		g.seen = true
		g.result(m[1] != "", m[2], m[3], l)
		return
	}
	g.other(l)
}

func (g *goText) run(verb, name string) {
	g.current, g.inFail, g.panic, g.build = name, nil, nil, false
	if verb == "RUN" && g.running[name] == nil && len(g.running) < maxRunning {
		g.running[name] = &boundedText{}
	}
}

// result reads a "--- FAIL", "--- PASS" or "--- SKIP" line.
func (g *goText) result(sub bool, verb, name, l string) {
	g.panic, g.build = nil, false
	if sub {
		if g.inFail != nil {
			g.inFail.block.add(l)
		}
		return
	}
	out := g.running[name]
	delete(g.running, name)
	switch verb {
	case "FAIL":
		t := &goTest{name: name}
		t.block.add(l)
		if out != nil {
			t.block.add(strings.TrimRight(out.String(), "\n"))
		}
		g.keep(t)
		g.inFail = t
	case "PASS":
		g.inFail = nil
		if len(g.passed) < MaxPassed {
			g.passed = append(g.passed, name)
		}
	default:
		g.inFail = nil
	}
}

// other reads a line that is not go test's own: a test's output, a panic,
// a build's errors.
func (g *goText) other(l string) {
	switch {
	case g.panic != nil:
		g.panic.add(l)
		return
	case strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: "):
		g.startPanic(l)
		return
	case strings.HasPrefix(l, "# "):
		g.build = true
		g.u.wholeBlock.add(l)
		return
	case g.build:
		g.u.wholeBlock.add(l)
		return
	}
	indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
	switch {
	case indented && g.inFail != nil:
		g.inFail.block.add(l)
	case g.running[g.current] != nil && l != "FAIL" && l != "PASS" && !strings.HasPrefix(l, "exit status "):
		g.running[g.current].add(l)
	default:
		g.inFail = nil
	}
}

// keep keeps a failed test of the package, or counts it past MaxUnits.
func (g *goText) keep(t *goTest) {
	if len(g.failed) < MaxUnits {
		g.failed = append(g.failed, t)
	} else {
		g.more++
	}
}

// startPanic keeps a panic's lines in the block of the test that panicked:
// the last one reported failed, else the one running.
func (g *goText) startPanic(l string) {
	t := g.inFail
	if t == nil && g.current != "" {
		t = &goTest{name: g.current}
		if out := g.running[g.current]; out != nil {
			t.block.add(strings.TrimRight(out.String(), "\n"))
		}
		g.keep(t)
	}
	if t == nil {
		t = &goTest{} // outside any test: the package's
		g.failed = append(g.failed, t)
	}
	g.panic = &t.block
	g.panic.add(l)
}

// endPackage reads a package's line: its tests' results are the package's.
func (g *goText) endPackage(status, pkg, rest string) {
	if strings.Contains(rest, "[build failed]") || strings.Contains(rest, "[setup failed]") {
		g.u.setWhole()
	}
	if status == "FAIL" && len(g.failed) == 0 && !g.u.whole {
		g.u.fail(pkg) // failed, no test did: TestMain, a timeout, an exit
	}
	g.flush(pkg)
}

// flush files the package's tests under its name.
func (g *goText) flush(pkg string) {
	for _, t := range g.failed {
		id := strings.TrimSpace(pkg + " " + t.name)
		if b, fresh := g.u.fail(id); b != nil && fresh {
			*b = t.block
		}
	}
	g.u.more += g.more
	g.more = 0
	for _, name := range g.passed {
		g.u.pass(strings.TrimSpace(pkg + " " + name))
	}
	g.failed, g.passed, g.inFail, g.panic, g.current, g.build = nil, nil, nil, nil, "", false
	clear(g.running)
}

func (g *goText) finish() *units {
	if len(g.failed) > 0 || len(g.passed) > 0 || g.more > 0 {
		g.flush("") // the package's line never came: the output was cut
	}
	return g.u
}

// goPackage is reGoPackage's match of l, tried only on a line that begins
// as a package's result does.
func goPackage(l string) []string {
	if !strings.HasPrefix(l, "ok  \t") && !strings.HasPrefix(l, "FAIL\t") && !strings.HasPrefix(l, "?   \t") {
		return nil
	}
	return reGoPackage.FindStringSubmatch(l)
}
