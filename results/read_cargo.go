package results

import (
	"path"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

var (
	// "     Running unittests src/lib.rs (target/debug/deps/calc-0123abcd)".
	reCargoRunning = lazyre.New(`^\s+Running (?:unittests )?\S+ \((\S+)\)$`)
	reCargoDoc     = lazyre.New(`^\s+Doc-tests (\S+)$`)
	reCargoHash    = lazyre.New(`-[0-9a-f]{8,}$`)
	// "test tests::adds ... FAILED", "test tests::subs ... ok"; -q: "tests::adds --- FAILED".
	reCargoTest   = lazyre.New(`^test (\S+) \.\.\. (ok|FAILED|ignored)`)
	reCargoQuiet  = lazyre.New(`^(\S+) --- FAILED$`)
	reCargoStdout = lazyre.New(`^---- (\S+) stdout ----$`)
)

// cargo reads cargo test's output: a unit is the test target and the
// test's path ("calc tests::adds", "api api_adds"; the path alone with
// -q, which does not name the target), its block the test's "---- stdout"
// section. A compile error before the tests ran fails the gate whole.
type cargo struct {
	u      *units
	seen   bool
	target string
	ran    bool // a "running N tests" line came
	cur    *boundedText
	err    bool // reading a compile error
}

func newCargo() *cargo { return &cargo{u: newUnits()} }

func (c *cargo) runner() string   { return "cargo" }
func (c *cargo) recognized() bool { return c.seen }

func (c *cargo) id(name string) string { return strings.TrimSpace(c.target + " " + name) }

func (c *cargo) line(l string) {
	switch {
	case strings.HasPrefix(l, "running ") && (strings.HasSuffix(l, " tests") || strings.HasSuffix(l, " test")):
		c.seen, c.ran, c.cur = true, true, nil
		return
	case strings.HasPrefix(l, "test result: "):
		c.seen, c.cur = true, nil
		return
	case strings.HasPrefix(l, "error[E") || strings.HasPrefix(l, "error: could not compile"):
		if !c.ran {
			c.seen, c.err = true, true
			c.u.setWhole()
		}
	}
	if c.err {
		c.u.wholeBlock.add(l)
		return
	}
	if m := reCargoRunning.FindStringSubmatch(l); m != nil {
		c.target, c.cur = reCargoHash.ReplaceAllString(path.Base(m[1]), ""), nil
		return
	}
	if m := reCargoDoc.FindStringSubmatch(l); m != nil {
		c.target, c.cur = m[1]+" (doc)", nil
		return
	}
	c.testLine(l)
}

func (c *cargo) testLine(l string) {
	if m := matchIf(strings.HasPrefix(l, "test "), reCargoTest, l); m != nil {
		switch m[2] {
		case "ok":
			c.u.pass(c.id(m[1]))
		case "FAILED":
			c.u.fail(c.id(m[1]))
		}
		return
	}
	if m := matchIf(strings.HasSuffix(l, " --- FAILED"), reCargoQuiet, l); m != nil {
		c.u.fail(c.id(m[1]))
		return
	}
	if m := reCargoStdout.FindStringSubmatch(l); m != nil {
		c.cur, _ = c.u.fail(c.id(m[1]))
		return
	}
	if l == "failures:" {
		c.cur = nil
		return
	}
	if c.cur != nil {
		c.cur.add(l)
	}
}

func (c *cargo) finish() *units { return c.u }
