package queue

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

// normCache remembers normalized field names: a queue has few distinct
// names, written many times.
type normCache map[string]string

func (c normCache) of(name string) string {
	if n, ok := c[name]; ok {
		return n
	}
	n := mdpatch.Norm(name)
	if len(c) < 256 {
		c[strings.Clone(name)] = n
	}
	return n
}

func (q *Queue) validate() {
	norms := normCache{}
	var fields []Field
	seen := map[string]int{}
	for _, is := range q.Issues {
		if !idPattern.MatchString(is.ID) {
			q.problem(is.Line, "malformed issue ID %q: want ISSUE-YYYYMMDD-NNN", is.ID)
		} else if first, ok := seen[is.ID]; ok {
			q.problem(is.Line, "duplicate issue ID %s (first at line %d)", is.ID, first)
		} else {
			seen[is.ID] = is.Line
		}
		if is.table == nil {
			q.problem(is.Line, "%s has no | Field | Value | table", is.ID)
			continue
		}
		fields = fields[:0]
		is.table.Each(func(f *Field) {
			n := norms.of(f.Name)
			for _, g := range fields {
				if mdpatch.SameName(g.Name, f.Name) {
					q.problem(f.Line, "%s: field %s given twice (first at line %d)", is.ID, f.Name, g.Line)
					break
				}
			}
			fields = append(fields, *f)
			v := strings.TrimSpace(f.Value)
			switch {
			case v == "":
			case intFields[n]:
				if _, err := parseCount(v); err != nil {
					q.problem(f.Line, "%s: %s %q is not a non-negative integer", is.ID, f.Name, f.Value)
				}
			case boolFields[n]:
				if _, err := ParseBool(v); err != nil {
					q.problem(f.Line, "%s: %s %q is not true or false", is.ID, f.Name, f.Value)
				}
			case n == "status":
				if !validStatus(unquote(v)) {
					q.problem(f.Line, "%s: unknown status %q (want one of %s)", is.ID, f.Value, strings.Join(Statuses, ", "))
				}
			case n == "leaseuntil" || n == "claimedat":
				if _, err := ParseTime(v); err != nil {
					q.problem(f.Line, "%s: %s %q is not a time (want RFC 3339, such as 2026-01-02T15:04:05Z)", is.ID, f.Name, f.Value)
				}
			case n == "tests":
				if _, err := ParseTests(v); err != nil {
					q.problem(f.Line, "%s: %v", is.ID, err)
				}
			}
		})
	}
}

func validStatus(s string) bool {
	if s == StatusCompleted {
		return true
	}
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

func parseCount(v string) (int, error) {
	n, err := strconv.Atoi(strings.Trim(v, "`"))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a non-negative integer: %q", v)
	}
	return n, nil
}

// CheckValue returns an error when value is not valid for the field name:
// counts must be non-negative integers, flags booleans, Status a known one.
func CheckValue(name, value string) error {
	n := mdpatch.Norm(name)
	v := strings.TrimSpace(value)
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("empty field name")
	}
	switch {
	case v == "":
		return nil
	case intFields[n]:
		if _, err := parseCount(v); err != nil {
			return fmt.Errorf("%s %q is not a non-negative integer", CanonicalName(name), value)
		}
	case boolFields[n]:
		if _, err := ParseBool(v); err != nil {
			return fmt.Errorf("%s %q is not true or false", CanonicalName(name), value)
		}
	case n == "priority":
		if !slices.Contains(Priorities, strings.ToLower(unquote(v))) {
			return fmt.Errorf("unknown priority %q (want one of %s)", value, strings.Join(Priorities, ", "))
		}
	case n == "status":
		if !validStatus(unquote(v)) {
			return fmt.Errorf("unknown status %q (want one of %s)", value, strings.Join(Statuses, ", "))
		}
	case n == "leaseuntil" || n == "claimedat":
		if _, err := ParseTime(v); err != nil {
			return fmt.Errorf("%s %q is not a time (want RFC 3339, such as 2026-01-02T15:04:05Z)", CanonicalName(name), value)
		}
	case n == "tests":
		_, err := ParseTests(v)
		return err
	}
	return nil
}

// TextProblems returns a problem for each line of the file that is not
// clean text: a NUL or other control byte (but tab, and a carriage return
// that ends a line), an escape sequence's ESC, invalid UTF-8. Such bytes make
// git and grep read the file as binary and reach the agent and the terminal;
// orchestrate never writes them (textclean), so they came from elsewhere.
func (q *Queue) TextProblems() []Problem {
	var out []Problem
	text := string(q.src.Text)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimSuffix(line, "\r")
		if what, at, bad := textclean.Problem(line); bad {
			out = append(out, Problem{Line: n, Msg: fmt.Sprintf("%s at column %d: not text (remove it; orchestrate writes such bytes as \\xNN)", what, at+1)})
		}
	}
	return out
}
