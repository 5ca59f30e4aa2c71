package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// The JSON of an issue, one encoder for status --json and issue show
// --json: {"id", "status", "line", "fields", and with issue show
// "sections"}, fields and sections in the order of the file. A field's
// value is typed: a count is a number, a flag a boolean, a list of
// signatures an array of strings, an unset value (empty or "null") null;
// a malformed value stays the string it is (validate reports it), and any
// other field is its string as written. It is written without reflection:
// status --json streams a queue of any size.

// valueKind is the JSON type of a field's value.
type valueKind int

const (
	kindString valueKind = iota
	kindCount
	kindBool
	kindList
)

// valueKinds gives the typed fields, by their normalised name (field names
// match loosely: Retry-Count, retry_count and "retry count" are one).
var valueKinds = func() map[string]valueKind {
	m := map[string]valueKind{}
	for k, names := range map[valueKind][]string{
		kindCount: {queue.FieldRetryCount, queue.FieldMaxRetries, queue.FieldSignatureRepeatCount, session.TotalAutoRetries},
		kindBool:  {queue.FieldAutoRetry, queue.FieldHalted, queue.FieldBlocking, loop.FieldApproved, loop.FieldEscalated, session.AutoRetryEnabled},
		kindList:  {queue.FieldPreviousSignatures, loop.FieldRecentSignatures},
	} {
		for _, n := range names {
			m[mdpatch.Norm(n)] = k
		}
	}
	return m
}()

// appendJSONValue appends the JSON value of the field name's value.
func appendJSONValue(b []byte, name, value string) []byte {
	v := strings.TrimSpace(value)
	if v == "" || v == "null" {
		return append(b, "null"...)
	}
	switch valueKinds[mdpatch.Norm(name)] {
	case kindCount:
		if n, err := strconv.Atoi(strings.Trim(v, "`")); err == nil && n >= 0 {
			return strconv.AppendInt(b, int64(n), 10)
		}
	case kindBool:
		if t, err := mdpatch.ParseBool(v); err == nil {
			return strconv.AppendBool(b, t)
		}
	case kindList:
		b = append(b, '[')
		for i, it := range queue.ParseList(v) {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendJSONString(b, it)
		}
		return append(b, ']')
	}
	return appendJSONString(b, value)
}

// jsonWriter writes the JSON objects of issues and session states,
// indented as encoding/json's SetIndent("", "  ") does (a list on one line).
type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

func newJSONWriter(w io.Writer) *jsonWriter {
	return &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

func (j *jsonWriter) str(v string) {
	j.buf = appendJSONString(j.buf[:0], v)
	j.w.Write(j.buf)
}

// key starts the next member of an object at indent: a comma after the
// first, a new line, the indent, the name.
func (j *jsonWriter) key(first bool, indent, name string) {
	if !first {
		j.w.WriteString(",")
	}
	j.w.WriteString("\n" + indent + "  ")
	j.str(name)
	j.w.WriteString(": ")
}

// object writes the name and value pairs as an object, typed or as strings.
func (j *jsonWriter) object(pairs [][2]string, indent string, typed bool) {
	j.w.WriteString("{")
	for i, p := range pairs {
		j.key(i == 0, indent, p[0])
		if typed {
			j.buf = appendJSONValue(j.buf[:0], p[0], p[1])
			j.w.Write(j.buf)
		} else {
			j.str(p[1])
		}
	}
	if len(pairs) > 0 {
		j.w.WriteString("\n" + indent)
	}
	j.w.WriteString("}")
}

// issue writes an issue's object at indent, with its sections when asked
// and its tests' states when given. pairs is scratch space, returned for
// the next issue.
func (j *jsonWriter) issue(is *queue.Issue, indent string, sections bool, pairs [][2]string, tests []loop.TestState) [][2]string {
	j.w.WriteString("{")
	j.key(true, indent, "id")
	j.str(is.ID)
	j.key(false, indent, "status")
	j.str(is.Status())
	j.key(false, indent, "line")
	j.w.WriteString(strconv.Itoa(is.Line))
	j.key(false, indent, "fields")
	pairs = pairs[:0]
	is.EachField(func(f *queue.Field) { pairs = append(pairs, [2]string{f.Name, f.Value}) })
	j.object(pairs, indent+"  ", true)
	if sections {
		j.key(false, indent, "sections")
		pairs = pairs[:0]
		for _, s := range is.Sections() {
			pairs = append(pairs, [2]string{s.Title, s.Body()})
		}
		j.object(pairs, indent+"  ", false)
	}
	if len(tests) > 0 {
		j.key(false, indent, "tests")
		j.w.WriteString("[")
		for i, t := range tests {
			if i > 0 {
				j.w.WriteString(",")
			}
			j.w.WriteString("\n" + indent + "    {\"test\": ")
			j.str(t.Test)
			j.w.WriteString(", \"state\": ")
			j.str(t.State)
			j.w.WriteString("}")
		}
		j.w.WriteString("\n" + indent + "  ]")
	}
	j.w.WriteString("\n" + indent + "}")
	return pairs
}

// writeIssueJSON writes issue show --json's object.
// With tests (the issue's, where each stands in the last gate results),
// its object has "tests": [{"test": "…", "state": "…"}, …] last.
func writeIssueJSON(w io.Writer, is *queue.Issue, tests []loop.TestState) error {
	j := newJSONWriter(w)
	j.issue(is, "", true, nil, tests)
	j.w.WriteString("\n")
	return j.w.Flush()
}

// writeSessionJSON writes session show --json's object: the session
// state's fields, in order, typed.
func writeSessionJSON(w io.Writer, s *session.State) error {
	j := newJSONWriter(w)
	j.object(s.Fields(), "", true)
	j.w.WriteString("\n")
	return j.w.Flush()
}

// writeStatusJSON streams status --json's object, one issue at a time:
// {"session": {…}, "issues": [{…}, …]}.
func writeStatusJSON(w io.Writer, s *session.State, q *queue.Queue) error {
	j := newJSONWriter(w)
	j.w.WriteString("{")
	j.key(true, "", "session")
	j.object(s.Fields(), "  ", true)
	j.key(false, "", "issues")
	j.w.WriteString("[")
	pairs := make([][2]string, 0, 16)
	for i, is := range q.Issues {
		if i > 0 {
			j.w.WriteString(",")
		}
		j.w.WriteString("\n    ")
		pairs = j.issue(is, "    ", false, pairs, nil)
	}
	if len(q.Issues) > 0 {
		j.w.WriteString("\n  ")
	}
	j.w.WriteString("]\n}\n")
	return j.w.Flush()
}

// appendJSONString appends v as a JSON string, as encoding/json writes it
// with HTML escaping off, without reflection.
func appendJSONString(b []byte, v string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(v[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				b = append(b, v[start:i]...)
				if r == utf8.RuneError {
					b = append(b, `\ufffd`...)
				} else {
					b = fmt.Appendf(b, `\u%04x`, r)
				}
				start = i + size
			}
			i += size - 1
			continue
		}
		b = append(b, v[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			b = fmt.Appendf(b, `\u%04x`, c)
		}
		start = i + 1
	}
	b = append(b, v[start:]...)
	return append(b, '"')
}
