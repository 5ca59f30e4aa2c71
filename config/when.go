package config

import (
	"fmt"
	"strconv"
	"strings"
)

// When is a human gate's condition on the issues the loop works on, such as
// `priority == critical` or `type == feature && priority != low`.
//
// The language is small on purpose:
//
//	expr   = all { "||" all }
//	all    = clause { "&&" clause }
//	clause = FIELD ( "==" | "!=" ) VALUE
//
// FIELD is an issue field, matched as the queue matches names (case, spaces,
// "-" and "_" aside); a "task." or "issue." prefix is allowed, as in the
// seed's `task.priority`. VALUE is a word, or a string in single or double
// quotes; it is compared with the field's value without regard to case, and
// an unset field is the empty string. && binds tighter than ||; there are no
// parentheses.
//
// A priority is a word or its number, as in seed 003's `task.priority ==
// 1`: critical is 1, high 2, medium 3, low 4, on either side. A clause
// that can never hold is an error, and so is a group of && that cannot:
// a priority that is none of these, a status other than pending and
// in_progress (only open issues are looked at), one field equal to two
// values, or equal and not equal to one.
type When struct {
	Text string
	any  [][]Clause // any of these, each all of its clauses
}

// Clause is one comparison of a When.
type Clause struct {
	Field string
	Not   bool // !=
	Value string
}

// String returns the expression as written.
func (w *When) String() string { return w.Text }

// Match reports whether the fields that get returns satisfy the expression.
// get returns a field's value and whether the field is set.
func (w *When) Match(get func(field string) (string, bool)) bool {
	for _, all := range w.any {
		ok := true
		for _, c := range all {
			v, _ := get(c.Field)
			v = strings.TrimSpace(v)
			if normField(c.Field) == "priority" {
				if p, ok := canonPriority(v); ok {
					v = p
				}
			}
			if strings.EqualFold(v, c.Value) == c.Not {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Fields returns the fields the expression looks at, in order, each once.
func (w *When) Fields() []string {
	var out []string
	seen := map[string]bool{}
	for _, all := range w.any {
		for _, c := range all {
			if !seen[c.Field] {
				seen[c.Field] = true
				out = append(out, c.Field)
			}
		}
	}
	return out
}

// parseWhen parses a when: expression.
func parseWhen(text string) (*When, error) {
	toks, err := lexWhen(text)
	if err != nil {
		return nil, err
	}
	w := &When{Text: strings.TrimSpace(text)}
	var all []Clause
	for i := 0; ; {
		if i+2 >= len(toks) {
			switch {
			case i >= len(toks) && i == 0:
				return nil, fmt.Errorf("empty expression (want e.g. priority == critical)")
			case i >= len(toks):
				return nil, fmt.Errorf("%q needs a comparison after it", toks[i-1].text)
			default:
				return nil, fmt.Errorf("incomplete comparison at %q (want FIELD == VALUE or FIELD != VALUE)", toks[i].text)
			}
		}
		f, op, v := toks[i], toks[i+1], toks[i+2]
		if f.kind != tokWord {
			return nil, fmt.Errorf("want a field name, got %q", f.text)
		}
		if op.kind != tokOp || (op.text != "==" && op.text != "!=") {
			return nil, fmt.Errorf("want == or != after %q, got %q", f.text, op.text)
		}
		if v.kind != tokWord && v.kind != tokString {
			return nil, fmt.Errorf("want a value after %q, got %q", f.text+" "+op.text, v.text)
		}
		field := f.text
		for _, prefix := range []string{"task.", "issue."} {
			if len(field) > len(prefix) && strings.EqualFold(field[:len(prefix)], prefix) {
				field = field[len(prefix):]
			}
		}
		if strings.Contains(field, ".") {
			return nil, fmt.Errorf("unknown field %q (want an issue field such as priority, type, status)", f.text)
		}
		c, err := clause(field, op.text == "!=", strings.TrimSpace(v.text), f.text+" "+op.text+" "+v.text)
		if err != nil {
			return nil, err
		}
		all = append(all, c)
		i += 3
		if i == len(toks) {
			if err := possible(all); err != nil {
				return nil, err
			}
			w.any = append(w.any, all)
			return w, nil
		}
		switch c := toks[i]; {
		case c.kind == tokOp && c.text == "&&":
		case c.kind == tokOp && c.text == "||":
			if err := possible(all); err != nil {
				return nil, err
			}
			w.any = append(w.any, all)
			all = nil
		default:
			return nil, fmt.Errorf("want && or || after %s %s %s, got %q", f.text, op.text, v.text, c.text)
		}
		i++
	}
}

type tokKind int

const (
	tokWord tokKind = iota
	tokString
	tokOp
)

type token struct {
	kind tokKind
	text string
}

func lexWhen(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated string %s", s[i:])
			}
			toks = append(toks, token{tokString, s[i+1 : i+1+j]})
			i += j + 2
		case strings.HasPrefix(s[i:], "==") || strings.HasPrefix(s[i:], "!=") ||
			strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||"):
			toks = append(toks, token{tokOp, s[i : i+2]})
			i += 2
		case c == '=' || c == '!' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>':
			return nil, fmt.Errorf("unexpected %q (the operators are ==, !=, && and ||)", string(c))
		case c < ' ' || c == 0x7f:
			return nil, fmt.Errorf("unexpected control character")
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\"'=!&|()<>", rune(s[j])) && s[j] >= ' ' {
				j++
			}
			toks = append(toks, token{tokWord, s[i:j]})
			i = j
		}
	}
	return toks, nil
}

// priorities are the priorities of issues, most urgent first: the number
// of each is its place, from 1.
var priorities = []string{PriorityCritical, PriorityHigh, PriorityMedium, PriorityLow}

// canonPriority returns the priority word for a word or a number, or false.
func canonPriority(v string) (string, bool) {
	for i, p := range priorities {
		if strings.EqualFold(v, p) || v == strconv.Itoa(i+1) {
			return p, true
		}
	}
	return "", false
}

// openStatuses are the statuses of the issues a when: looks at.
var openStatuses = []string{"pending", "in_progress"}

// clause makes a comparison, its value in canonical form, or says why it
// can never hold (text is the clause as written).
func clause(field string, not bool, value, text string) (Clause, error) {
	c := Clause{Field: field, Not: not, Value: value}
	switch normField(field) {
	case "priority":
		p, ok := canonPriority(value)
		if !ok {
			return c, fmt.Errorf("%s can never be true: a priority is critical (1), high (2), medium (3) or low (4)", text)
		}
		c.Value = p
	case "status":
		ok := false
		for _, s := range openStatuses {
			ok = ok || strings.EqualFold(value, s)
		}
		if !ok {
			return c, fmt.Errorf("%s can never be true: when: looks at open issues, whose status is pending or in_progress", text)
		}
	}
	return c, nil
}

// possible says why a group of && can never hold: one field equal to two
// values, or equal to a value and not equal to it.
func possible(all []Clause) error {
	for i, a := range all {
		for _, b := range all[i+1:] {
			if normField(a.Field) != normField(b.Field) {
				continue
			}
			same := strings.EqualFold(a.Value, b.Value)
			switch {
			case !a.Not && !b.Not && !same:
				return fmt.Errorf("%s == %s && %s == %s can never be true: one field, two values", a.Field, a.Value, b.Field, b.Value)
			case a.Not != b.Not && same:
				return fmt.Errorf("%s == %s && %s != %s can never be true", a.Field, a.Value, b.Field, b.Value)
			}
		}
	}
	return nil
}

// normField is a field name as the queue matches names: case, spaces, "-"
// and "_" aside.
func normField(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if c != ' ' && c != '-' && c != '_' && c != '\t' {
			b.WriteRune(c)
		}
	}
	return b.String()
}
