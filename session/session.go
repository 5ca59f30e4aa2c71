// Package session reads and patches session_state.md, the counters of the
// current run, in its "## Auto-Retry State" table.
//
// All of its exported names are API: Load, Parse and Update, State with its
// methods, and the names of the table's fields. The module is at v0: the API
// follows session_state.md and changes with it.
package session

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// The fields of the Auto-Retry State table.
const (
	TotalAutoRetries = "total_auto_retries"
	LastRetryReason  = "last_retry_reason"
	AutoRetryEnabled = "auto_retry_enabled"
	RunID            = "run_id"
	RunStarted       = "run_started"
)

// sectionTitle is the heading of the section this package reads.
const sectionTitle = "Auto-Retry State"

// fieldOrder lists the table's fields in the order a new table gets them.
var fieldOrder = []string{TotalAutoRetries, LastRetryReason, AutoRetryEnabled, RunID, RunStarted}

// template is what a missing session_state.md starts as.
const template = `# Session State

## Auto-Retry State

| Field | Value |
|-------|-------|
| total_auto_retries | 0 |
| last_retry_reason | null |
| auto_retry_enabled | true |
| run_id | |
| run_started | |
`

// State is a parsed session_state.md and the changes made to it since.
type State struct {
	src      *mdpatch.Source
	table    *mdpatch.FieldTable // nil when the file has no such table
	pending  [][2]string         // fields of a section this change appends
	Problems []problem.Problem
	// Line is the line of the Auto-Retry State heading, 0 when missing.
	Line int
}

// Parse reads a session state. An empty input reads as a new session_state.md (see template).
func Parse(data []byte) *State {
	if len(data) == 0 {
		data = []byte(template)
	}
	s := &State{src: mdpatch.NewSource(data)}
	blocks := s.src.Blocks()
	for i, b := range blocks {
		if b.Kind != mdpatch.Heading || b.Level != 2 || mdpatch.Norm(b.Title) != mdpatch.Norm(sectionTitle) {
			continue
		}
		s.Line = s.src.Line(b.Start)
		if i+1 < len(blocks) && blocks[i+1].Kind == mdpatch.TableBlock {
			var missing []int
			s.table, missing = s.src.FieldTable(blocks[i+1].Table)
			for _, line := range missing {
				s.problem(line, "table row has a missing cell")
			}
		} else {
			s.problem(s.Line, "## %s has no | Field | Value | table", sectionTitle)
		}
		break
	}
	s.validate()
	sort.SliceStable(s.Problems, func(i, j int) bool { return s.Problems[i].Line < s.Problems[j].Line })
	return s
}

func (s *State) problem(line int, format string, args ...any) {
	s.Problems = append(s.Problems, problem.Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

func (s *State) validate() {
	if s.table == nil {
		return
	}
	for _, f := range s.table.Fields() {
		v := strings.TrimSpace(f.Value)
		if v == "" {
			continue
		}
		switch mdpatch.Norm(f.Name) {
		case mdpatch.Norm(TotalAutoRetries):
			if n, err := strconv.Atoi(strings.Trim(v, "`")); err != nil || n < 0 {
				s.problem(f.Line, "%s %q is not a non-negative integer", f.Name, f.Value)
			}
		case mdpatch.Norm(AutoRetryEnabled):
			if _, err := mdpatch.ParseBool(v); err != nil {
				s.problem(f.Line, "%s %q is not true or false", f.Name, f.Value)
			}
		}
	}
}

// Get returns a field's value and whether it is set: present, not empty and
// not "null".
func (s *State) Get(name string) (string, bool) {
	var v string
	if s.table != nil {
		if f := s.table.Field(name); f != nil {
			v = strings.TrimSpace(f.Value)
		}
	} else {
		for _, p := range s.pending {
			if mdpatch.Norm(p[0]) == mdpatch.Norm(name) {
				v = p[1]
			}
		}
	}
	return v, v != "" && v != "null"
}

// TotalAutoRetries returns total_auto_retries (0 when unset).
func (s *State) TotalAutoRetries() int {
	v, _ := s.Get(TotalAutoRetries)
	n, err := strconv.Atoi(strings.Trim(v, "`"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// AutoRetryEnabled returns auto_retry_enabled (true when unset).
func (s *State) AutoRetryEnabled() bool {
	v, ok := s.Get(AutoRetryEnabled)
	if !ok {
		return true
	}
	b, err := mdpatch.ParseBool(v)
	return err != nil || b
}

// Set changes a field, adding its row when missing, and the section when
// the file has none.
func (s *State) Set(name, value string) {
	if s.table != nil {
		s.table.Set(name, name, value)
		return
	}
	if s.pending == nil {
		for _, f := range fieldOrder {
			v := ""
			switch f {
			case TotalAutoRetries:
				v = "0"
			case LastRetryReason:
				v = "null"
			case AutoRetryEnabled:
				v = "true"
			}
			s.pending = append(s.pending, [2]string{f, v})
		}
	}
	for i, p := range s.pending {
		if mdpatch.Norm(p[0]) == mdpatch.Norm(name) {
			s.pending[i][1] = value
			return
		}
	}
	s.pending = append(s.pending, [2]string{name, value})
}

// Fields returns the table's fields as name and value pairs, in order.
func (s *State) Fields() [][2]string {
	if s.table == nil {
		return s.pending
	}
	var out [][2]string
	for _, f := range s.table.Fields() {
		out = append(out, [2]string{f.Name, f.Value})
	}
	return out
}

// Bytes returns the file with every change applied; every other byte is
// the one parsed.
func (s *State) Bytes() []byte {
	if s.table != nil {
		return s.src.Apply(s.table.Edits())
	}
	if s.pending == nil {
		return s.src.Raw
	}
	lines := []string{"## " + sectionTitle, ""}
	lines = append(lines, mdpatch.NewTableLines(s.pending)...)
	text := s.src.Text
	if len(text) > 0 && !s.src.IsBlankLine(s.src.LineStart(len(text)-1)) {
		lines = append([]string{""}, lines...)
	}
	return s.src.Apply([]mdpatch.Edit{s.src.InsertLines(len(text), lines...)})
}
