// Package results reads a quality gate's output as test-level results: the
// tests (or a linter's findings) that failed, each with its failure block
// and that block's signature, and the tests seen passing where the runner
// lists them. It also judges an attempt at one issue against a baseline:
// the results on the commit the work started from.
//
// A gate whose runner is not known, or whose failure cannot be split into
// tests (a build or compile failure, a collection error), is one whole
// unit: the gate itself.
//
// All of its exported names are API; the module is at v0.
package results

import "strings"

// Unit is one test, or one linter finding, of one gate; a Unit with an
// empty ID is the gate as a whole.
type Unit struct {
	Gate string // the gate's name, as in config.yaml
	// ID names the test within its gate, in the runner's own terms:
	// "github.com/x/y TestName" (go test: the package, a space, the
	// top-level test), "tests/test_x.py::test_y" (pytest's node ID),
	// "src/a.test.js › suite › name" (jest, vitest), "file::name" (node
	// --test), "crate tests::name" (cargo test), "file: rule: message"
	// (a linter's finding: no line number, which moves with every edit).
	ID string
}

// String returns the unit as the Tests field of an issue holds it:
// "GATE: ID", or "GATE" for a whole gate.
func (u Unit) String() string {
	if u.ID == "" {
		return u.Gate
	}
	return u.Gate + ": " + u.ID
}

// ParseUnit reads what String writes: the gate is the text before the
// first ": ", the ID the rest; a text without ": " is a whole gate.
func ParseUnit(s string) Unit {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ": "); i >= 0 {
		return Unit{Gate: strings.TrimSpace(s[:i]), ID: strings.TrimSpace(s[i+2:])}
	}
	return Unit{Gate: s}
}

// Failed is a unit that failed, with what it printed.
type Failed struct {
	Unit
	// Block is the unit's failure block as the runner printed it: its
	// header, assertion, diff and stack, without the other tests' lines.
	Block string
	// Signature is the block's failure signature (signature.Of, the Fail
	// class): the same failure of the same test signs the same wherever
	// and whenever it ran.
	Signature string
}

// Report is one gate's test-level results.
type Report struct {
	Gate string
	// Runner names the runner the output was read as: "go", "go-json",
	// "junit", "pytest", "jest", "vitest", "node", "cargo", "lint"; ""
	// when no runner was recognized.
	Runner string
	// Whole is true when the gate's failure is one unit, the gate itself:
	// its runner is unknown, or it failed before its tests ran (a build,
	// compile or collection error). Failed then holds that one unit.
	Whole bool
	// Failed are the units that failed, in the order of the output.
	Failed []Failed
	// More counts the failed units past MaxUnits: read, not kept in Failed.
	More int
	// Passed are the IDs of the tests seen passing, where the runner
	// lists them (go test -v or -json, JUnit, pytest -v, jest, vitest,
	// node, cargo); nil where it lists only failures.
	Passed []string
}

// Passing reports whether the gate passed: nothing in it failed.
func (r *Report) Passing() bool { return len(r.Failed) == 0 }
