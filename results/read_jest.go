package results

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

var (
	// jest: "FAIL src/a.test.js", "PASS src/b.test.js (5.2 s)".
	reJestFile = lazyre.New(`^(FAIL|PASS) (\S+)(?: \(.*\))?$`)
	// jest's failure header: "  ● suite › name".
	reJestHeader = lazyre.New(`^  ● (.+)$`)
	// jest --verbose: "    ✓ name (3 ms)", "  ✕ name", "    suite".
	reJestTest  = lazyre.New(`^( +)(✓|✕|○|✎) (.+?)(?: \(\d+(?:\.\d+)? m?s\))?$`)
	reJestSuite = lazyre.New(`^( +)([^ ●].*)$`)
	reJestEnd   = lazyre.New(`^(Test Suites|Tests|Snapshots|Time|Ran all test suites|Summary of all failing tests)\b`)

	// vitest: " FAIL  src/a.test.js > suite > name", and a suite that
	// failed to load: " FAIL  src/a.test.js [ src/a.test.js ]".
	reVitestFail  = lazyre.New(`^ FAIL  (.+)$`)
	reVitestSuite = lazyre.New(`^\S+ \[ .* \]$`)
	reVitestRule  = lazyre.New(`^⎯+(?:\[\d+/\d+\])?⎯*$|^⎯+ Failed (Tests|Suites) \d+ ⎯+$`)
	// vitest's file line " ❯ src/a.test.js (3 tests | 1 failed) 8ms" and
	// its tests "   ✓ suite > name 1ms"; --reporter=verbose: " ✓ src/a.test.js > suite > name".
	reVitestFile = lazyre.New(`^ (?:❯|✓|×|↓) (\S+) \(\d+ tests?`)
	// "(3 tests | 1 skipped)", "(2 tests | 1 todo)": how many of a
	// passing file's tests did not run.
	reVitestSkipped = lazyre.New(`\(\d+ tests?((?: \| \d+ (?:skipped|todo))+)\)`)
	reVitestTest    = lazyre.New(`^ +(✓|×) (.+?)(?: \d+ms)?$`)
)

// jest reads jest's output: a unit is "FILE › suite › name", its block
// the lines under its "●" header. A suite that failed to run fails the
// gate whole.
type jest struct {
	u     *units
	seen  bool
	file  string
	cur   *boundedText // the block being read; nil between blocks
	stack []string     // the suites of --verbose's tree
	whole bool         // the block being read is a suite's that failed to run
}

func newJest() *jest { return &jest{u: newUnits()} }

func (j *jest) runner() string   { return "jest" }
func (j *jest) recognized() bool { return j.seen && j.file != "" }

func (j *jest) line(l string) {
	if m := reJestFile.FindStringSubmatch(l); m != nil {
		j.file, j.cur, j.stack, j.whole = m[2], nil, nil, false
		return
	}
	if reJestEnd.MatchString(l) {
		j.seen = j.seen || strings.HasPrefix(l, "Tests:")
		j.cur, j.whole = nil, false
		return
	}
	if j.file == "" {
		return
	}
	if m := reJestHeader.FindStringSubmatch(l); m != nil {
		j.header(m[1])
		return
	}
	switch {
	case j.whole:
		j.u.wholeBlock.add(l)
	case j.cur != nil:
		j.cur.add(strings.TrimPrefix(l, "  "))
	default:
		j.tree(l)
	}
}

// header starts the block of a "●" header.
func (j *jest) header(title string) {
	j.cur, j.whole = nil, false
	switch title {
	case "Test suite failed to run":
		j.u.setWhole()
		j.whole = true
		j.u.wholeBlock.add(j.file)
	case "Console":
	default:
		if b, fresh := j.u.fail(j.file + " › " + title); fresh {
			j.cur = b
		}
	}
}

// tree reads --verbose's tree of suites and tests: its passing tests.
func (j *jest) tree(l string) {
	if m := reJestTest.FindStringSubmatch(l); m != nil {
		depth := len(m[1])/2 - 1
		j.stack = j.stack[:min(max(depth, 0), len(j.stack))]
		if m[2] == "✓" {
			j.u.pass(strings.Join(append(append([]string{j.file}, j.stack...), m[3]), " › "))
		}
		return
	}
	if m := reJestSuite.FindStringSubmatch(l); m != nil {
		depth := len(m[1])/2 - 1
		j.stack = append(j.stack[:min(max(depth, 0), len(j.stack))], m[2])
	}
}

func (j *jest) finish() *units { return j.u }

// vitest reads vitest's output: a unit is "FILE › suite › name" (its ">"
// read as "›"), its block the lines under its "FAIL" header. A suite that
// failed to load fails the gate whole.
type vitest struct {
	u     *units
	seen  bool
	file  string
	cur   *boundedText
	whole bool
}

func newVitest() *vitest { return &vitest{u: newUnits()} }

func (v *vitest) runner() string   { return "vitest" }
func (v *vitest) recognized() bool { return v.seen }

// vitestID reads "a.test.js > suite > name" as "a.test.js › suite › name".
func vitestID(s string) string { return strings.ReplaceAll(s, " > ", " › ") }

func (v *vitest) line(l string) {
	switch {
	case strings.HasPrefix(l, " RUN  v"), strings.HasPrefix(strings.TrimSpace(l), "Test Files  "):
		v.seen = true
		v.cur, v.whole = nil, false
		return
	case reVitestRule.MatchString(l):
		v.seen = true
		v.cur, v.whole = nil, false
		return
	}
	if m := reVitestFail.FindStringSubmatch(l); m != nil {
		v.cur, v.whole = nil, false
		if reVitestSuite.MatchString(m[1]) {
			v.u.setWhole()
			v.whole = true
			v.u.wholeBlock.add(l)
		} else if b, fresh := v.u.fail(vitestID(m[1])); fresh {
			v.cur = b
		}
		return
	}
	switch {
	case v.whole:
		v.u.wholeBlock.add(l)
	case v.cur != nil:
		v.cur.add(l)
	default:
		v.listing(l)
	}
}

// skippedIn is how Report.Passed lists a file of vitest's whose tests
// passed but some did not run, as vitest's line of it counts them: "FILE
// (1 skipped)". It stands for the file's tests only beside a baseline that
// lists it the same (see seenPassing): a test of an issue that its
// attempt skipped is not seen to pass.
func skippedIn(file, counts string) string {
	return file + " (" + strings.TrimPrefix(strings.TrimSpace(counts), "| ") + ")"
}

// listing reads the lines of files and tests: the passing tests.
func (v *vitest) listing(l string) {
	if m := reVitestFile.FindStringSubmatch(l); m != nil {
		v.file = m[1]
		if strings.HasPrefix(l, " ✓ ") {
			// A file whose tests all passed: vitest lists them only
			// when one failed, so the file stands for its tests; one
			// with some skipped is listed with how many (see
			// SkippedIn), as it stands for them only when as many
			// were skipped on the baseline.
			if m := reVitestSkipped.FindStringSubmatch(l); m != nil {
				v.u.pass(skippedIn(v.file, m[1]))
			} else {
				v.u.pass(v.file)
			}
		}
		return
	}
	m := reVitestTest.FindStringSubmatch(l)
	if m == nil || m[1] != "✓" {
		return
	}
	id := vitestID(m[2])
	if !strings.HasPrefix(l, "   ") || v.file == "" { // --reporter=verbose: the file is in it
		v.u.pass(id)
		return
	}
	v.u.pass(v.file + " › " + id)
}

func (v *vitest) finish() *units { return v.u }
