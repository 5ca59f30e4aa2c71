package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

var statusCmd = &command{
	name:    "status",
	summary: "show the issues and the session state",
	usage: `Usage: orchestrate status [--json]

Prints the session state and a table of the issues: ID, status, priority,
retries (Retry-Count/Max-Retries), the identical-failure count, whether it is
halted, and its summary.

With --json, prints one object:
  {"session": {"<field>": "<value>", …},
   "issues": [{"id": "…", "status": "…", "line": N,
               "fields": {"<field name as written>": "<raw value>", …}}, …]}

Examples:
  orchestrate status
  orchestrate status --json | jq '.issues[] | select(.status == "stuck") | .id'

Exit codes: 0 shown, 1 error (a malformed file: its problems are printed
as file:line: message after what could be shown), 2 usage.
`,
	run: runStatus,
}

// issueJSON is the JSON shape of an issue.
type issueJSON struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Line     int               `json:"line"`
	Fields   map[string]string `json:"fields"`
	Sections map[string]string `json:"sections,omitempty"`
}

func toJSON(is *queue.Issue, sections bool) issueJSON {
	j := issueJSON{ID: is.ID, Status: is.Status(), Line: is.Line, Fields: map[string]string{}}
	for _, f := range is.Fields() {
		j.Fields[f.Name] = f.Value
	}
	if sections {
		j.Sections = map[string]string{}
		for _, s := range is.Sections() {
			j.Sections[s.Title] = s.Body()
		}
	}
	return j
}

func runStatus(e *env, args []string) error {
	fs := e.flags("status")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	ws := e.ws()
	if err := ws.Exists(); err != nil {
		return err
	}
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil {
		return err
	}
	s, err := session.Load(ws.Path(loop.StateFile))
	if err != nil {
		return err
	}
	if e.json {
		if err := writeStatusJSON(e.stdout, s, q); err != nil {
			return err
		}
	} else {
		if err := printStatus(e, q, s); err != nil {
			return err
		}
	}
	return reportProblems(e, ws.Path(loop.QueueFile), q.Problems, ws.Path(loop.StateFile), s.Problems)
}

func printStatus(e *env, q *queue.Queue, s *session.State) error {
	run, _ := s.Get(session.RunID)
	if run == "" {
		run = "(none: orchestrate session start)"
	}
	enabled := "enabled"
	if !s.AutoRetryEnabled() {
		enabled = "disabled (auto_retry_enabled: false)"
	}
	if e.ws().SentinelExists() {
		enabled = "disabled (no_auto_retry sentinel)"
	}
	fmt.Fprintf(e.stdout, "run %s: %d auto-retries, auto-retry %s\n", run, s.TotalAutoRetries(), enabled)
	if len(q.Issues) == 0 {
		fmt.Fprintln(e.stdout, "no issues")
		return nil
	}
	counts := map[string]int{}
	rows := make([][]string, 0, len(q.Issues))
	for _, is := range q.Issues {
		counts[is.Status()]++
		pri, _ := is.Get(queue.FieldPriority)
		halted := ""
		if is.Bool(queue.FieldHalted, false) {
			halted = "halted"
		}
		summary := ""
		if sec := is.Section(queue.SectionSummary); sec != nil {
			summary = firstLine(textclean.Text(sec.Body()), 60)
		}
		row := []string{
			is.ID, is.Status(), pri,
			strconv.Itoa(is.Int(queue.FieldRetryCount, 0)) + "/" + strconv.Itoa(is.Int(queue.FieldMaxRetries, queue.DefaultMaxRetries)),
			strconv.Itoa(is.Int(queue.FieldSignatureRepeatCount, 0)),
			halted, summary,
		}
		for i := range row {
			row[i] = textclean.Line(row[i]) // no escape sequence from the queue reaches the terminal
		}
		rows = append(rows, row)
	}
	if err := renderTable(e.stdout, []string{"ID", "Status", "Priority", "Retries", "Repeats", "Halted", "Summary"}, rows); err != nil {
		return err
	}
	var parts []string
	known := 0
	for _, st := range queue.Statuses {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			known += counts[st]
		}
	}
	if n := len(q.Issues) - known; n > 0 {
		parts = append(parts, fmt.Sprintf("%d with an unknown status", n))
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", plural(len(q.Issues), "issue"), strings.Join(parts, ", "))
	return nil
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// reportProblems prints every problem of the given files (path, problems
// pairs) on stderr and returns an exit-1 error if there were any.
func reportProblems(e *env, pairs ...any) error {
	n := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		path := pairs[i].(string)
		for _, p := range pairs[i+1].([]queue.Problem) {
			fmt.Fprintln(e.stderr, p.Format(path))
			n++
		}
	}
	if n > 0 {
		return withCode(exitError, fmt.Errorf("%d problem(s); fix them by hand, then run orchestrate validate", n))
	}
	return nil
}

// writeStatusJSON streams the status object, one issue at a time, with each
// issue's fields in the order of its table.
func writeStatusJSON(w io.Writer, s *session.State, q *queue.Queue) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	str := func(v string) {
		buf = appendJSONString(buf[:0], v)
		bw.Write(buf)
	}
	object := func(pairs [][2]string, indent string) {
		bw.WriteString("{")
		for i, p := range pairs {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n" + indent + "  ")
			str(p[0])
			bw.WriteString(": ")
			str(p[1])
		}
		if len(pairs) > 0 {
			bw.WriteString("\n" + indent)
		}
		bw.WriteString("}")
	}
	bw.WriteString("{\n  \"session\": ")
	object(s.Fields(), "  ")
	bw.WriteString(",\n  \"issues\": [")
	pairs := make([][2]string, 0, 16)
	for i, is := range q.Issues {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    {\n      \"id\": ")
		str(is.ID)
		bw.WriteString(",\n      \"status\": ")
		str(is.Status())
		bw.WriteString(",\n      \"line\": " + strconv.Itoa(is.Line) + ",\n      \"fields\": ")
		pairs = pairs[:0]
		is.EachField(func(f *queue.Field) {
			pairs = append(pairs, [2]string{f.Name, f.Value})
		})
		object(pairs, "      ")
		bw.WriteString("\n    }")
	}
	if len(q.Issues) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
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
