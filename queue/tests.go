package queue

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/results"
)

// FieldTests lists the tests, or linter findings, an issue is about: each
// "GATE: ID" (or "GATE" for a whole gate), separated by "; ", a ";"
// inside one written "\;". An attempt at the issue passes when they pass
// and nothing regressed.
const FieldTests = "Tests"

// Tests returns the units of the issue's Tests field, in its order.
func (is *Issue) Tests() []results.Unit {
	v, _ := is.Get(FieldTests)
	var out []results.Unit
	for _, item := range splitTests(v) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, results.ParseUnit(item))
		}
	}
	return out
}

// SetTests sets the issue's Tests field to units.
func (is *Issue) SetTests(units []results.Unit) {
	items := make([]string, len(units))
	for i, u := range units {
		items[i] = strings.ReplaceAll(u.String(), ";", `\;`)
	}
	is.Set(FieldTests, strings.Join(items, "; "))
}

// splitTests splits a Tests field at its separators, a "\;" kept as ";".
func splitTests(v string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ';':
			b.WriteByte(';')
			i++
		case v[i] == ';':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(v[i])
		}
	}
	return append(out, b.String())
}
