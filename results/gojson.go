package results

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// goEvent is one line of go test -json (test2json's TestEvent).
type goEvent struct {
	Action      string
	Package     string
	ImportPath  string // build-output, build-fail
	Test        string
	Output      string
	FailedBuild string
}

// goJSON reads go test -json's events: a unit is the package and its
// top-level test, its block the output events of that test (its "--- FAIL"
// line first, without the "=== RUN" lines), as go test's text reader makes
// it, so that both sign the same.
type goJSON struct {
	u    *units
	seen bool
	// out holds the output of each test started and not done, by
	// package and top-level test; pkgOut each package's own output.
	out       map[[2]string]*boundedText
	pkgOut    map[string]*boundedText
	pkgFailed map[string]bool // a test of the package failed
	failLine  map[[2]string]string
}

func newGoJSON() *goJSON {
	return &goJSON{u: newUnits(), out: map[[2]string]*boundedText{}, pkgOut: map[string]*boundedText{}, pkgFailed: map[string]bool{}, failLine: map[[2]string]string{}}
}

func (g *goJSON) runner() string   { return "go-json" }
func (g *goJSON) recognized() bool { return g.seen }

func (g *goJSON) line(l string) {
	if !strings.HasPrefix(l, "{") || !strings.Contains(l, `"Action"`) {
		return
	}
	var e goEvent
	if json.Unmarshal([]byte(l), &e) != nil || e.Action == "" {
		return
	}
	g.seen = true
	switch {
	case e.Action == "build-output":
		g.u.wholeBlock.add(strings.TrimSuffix(e.Output, "\n"))
	case e.Action == "build-fail":
		g.u.setWhole()
	case e.Test != "":
		g.test(e)
	default:
		g.pkg(e)
	}
}

// test reads an event of a test.
func (g *goJSON) test(e goEvent) {
	key := [2]string{e.Package, top(e.Test)}
	switch e.Action {
	case "output":
		b := g.out[key]
		if b == nil && len(g.out) < maxRunning {
			b = &boundedText{}
			g.out[key] = b
		}
		l := strings.TrimSuffix(e.Output, "\n")
		switch {
		case isGoFailLine(l, key[1]):
			g.failLine[key] = l
		case b != nil && !strings.HasPrefix(l, "=== "):
			b.add(l)
		}
	case "pass", "fail", "skip":
		if e.Test != key[1] {
			return // a subtest: its lines are its top-level test's
		}
		b, failLine := g.out[key], g.failLine[key]
		delete(g.out, key)
		delete(g.failLine, key)
		id := strings.TrimSpace(e.Package + " " + key[1])
		switch e.Action {
		case "pass":
			g.u.pass(id)
		case "fail":
			g.pkgFailed[e.Package] = true
			if blk, fresh := g.u.fail(id); blk != nil && fresh {
				if failLine == "" {
					failLine = "--- FAIL: " + key[1]
				}
				blk.add(failLine)
				if b != nil {
					blk.add(b.String())
				}
			}
		}
	}
}

// isGoFailLine reports whether l is the "--- FAIL" line of top-level test
// name, which the block starts with.
func isGoFailLine(l, name string) bool {
	return strings.HasPrefix(l, "--- FAIL: "+name+" ")
}

// pkg reads an event of a package.
func (g *goJSON) pkg(e goEvent) {
	switch e.Action {
	case "output":
		b := g.pkgOut[e.Package]
		if b == nil && len(g.pkgOut) < maxRunning {
			b = &boundedText{}
			g.pkgOut[e.Package] = b
		}
		b.add(strings.TrimSuffix(e.Output, "\n"))
		if strings.Contains(e.Output, "[build failed]") || strings.Contains(e.Output, "[setup failed]") {
			g.u.setWhole()
		}
	case "fail":
		if e.FailedBuild != "" {
			g.u.setWhole()
		} else if !g.pkgFailed[e.Package] {
			// failed, and no test did: TestMain, a timeout, a panic
			// outside any test.
			if blk, fresh := g.u.fail(e.Package); blk != nil && fresh && g.pkgOut[e.Package] != nil {
				blk.add(g.pkgOut[e.Package].String())
			}
		}
		fallthrough
	case "pass", "skip":
		delete(g.pkgOut, e.Package)
		delete(g.pkgFailed, e.Package)
	}
}

func (g *goJSON) finish() *units {
	// A test still running when the output ended (a timeout, a crash)
	// failed.
	keys := slices.SortedFunc(maps.Keys(g.out), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, key := range keys {
		b := g.out[key]
		if blk, fresh := g.u.fail(strings.TrimSpace(key[0] + " " + key[1])); blk != nil && fresh {
			blk.add(b.String())
		}
	}
	clear(g.out)
	return g.u
}

// ReadGoJSON reads the events go test -json wrote (to a report file): see
// Read. Lines that are not events are left out.
func ReadGoJSON(gate string, data []byte, opt signature.Options) Report {
	r := &Reader{gate: gate, opt: opt, parsers: []parser{newGoJSON()}, keep: headTail{max: MaxBlock / 2}}
	r.Write(data)
	return r.report(nil)
}
