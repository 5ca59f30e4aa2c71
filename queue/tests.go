package queue

import (
	"fmt"
	"strings"

	"github.com/orchestrate-dev/orchestrate/results"
)

// FieldTests lists the tests, or a linter's findings, an issue is about:
// items separated by "; ", each a results.Unit as "GATE: ID", or "GATE"
// for a gate as a whole. A ";" inside an item is written "\;", a
// backslash "\\". Filing writes it; a person may too.
const FieldTests = "Tests"

// TestsSep separates the items of FieldTests.
const TestsSep = "; "

// SplitTests reads the items of a Tests value, "\;" read as ";" and "\\"
// as a backslash (any other backslash is itself), each item trimmed; an
// empty item (two separators in a row, or a trailing one) is kept as "".
// An empty value has no items.
func SplitTests(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var items []string
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && (v[i+1] == ';' || v[i+1] == '\\'):
			b.WriteByte(v[i+1])
			i++
		case c == ';':
			items = append(items, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(items, strings.TrimSpace(b.String()))
}

// ParseTests reads a Tests value into its units, in order, or says what is
// wrong with its first malformed item: an empty one, or one with no gate.
func ParseTests(v string) ([]results.Unit, error) {
	var units []results.Unit
	for i, it := range SplitTests(v) {
		if it == "" {
			return nil, fmt.Errorf("item %d of Tests is empty (items are separated by %q; write a ';' inside one as \\;)", i+1, TestsSep)
		}
		u := results.ParseUnit(it)
		if u.Gate == "" {
			return nil, fmt.Errorf("item %d of Tests, %q, names no gate (want GATE: TEST, or GATE for the gate as a whole)", i+1, it)
		}
		units = append(units, u)
	}
	return units, nil
}

// FormatTests writes units as a Tests value: what ParseTests reads back.
func FormatTests(units []results.Unit) string {
	items := make([]string, len(units))
	for i, u := range units {
		s := strings.ReplaceAll(u.String(), `\`, `\\`)
		items[i] = strings.ReplaceAll(s, ";", `\;`)
	}
	return strings.Join(items, TestsSep)
}

// Tests returns the units of the issue's Tests field, in order; its
// malformed items (which Parse reports) are left out.
func (is *Issue) Tests() []results.Unit {
	v, ok := is.Get(FieldTests)
	if !ok {
		return nil
	}
	var units []results.Unit
	for _, it := range SplitTests(v) {
		if u := results.ParseUnit(it); it != "" && u.Gate != "" {
			units = append(units, u)
		}
	}
	return units
}

// SetTests sets the issue's Tests field to units; none clears it.
func (is *Issue) SetTests(units []results.Unit) {
	if len(units) == 0 && is.Field(FieldTests) == nil {
		return
	}
	is.Set(FieldTests, FormatTests(units))
}
