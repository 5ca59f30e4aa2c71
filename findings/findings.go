// Package findings reads and writes what code reviewers find: findings with
// a priority (P0 critical to P3 suggestion), a place and an issue, in the JSON or
// markdown a reviewer prints (seed 003's form). It merges the findings of
// several reviewers, groups them for the feedback, and gives the text that
// stands for them in a failure signature.
//
// All of its exported names are API; the module is at v0.
package findings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Priority is a review finding's priority, P0 (critical) the worst.
type Priority int

// The priorities of seed 003.
const (
	P0 Priority = iota // critical: must fix
	P1                 // major: should fix
	P2                 // minor: nice to fix
	P3                 // suggestion: optional
)

var priorityTitles = [...]string{"Critical", "Major", "Minor", "Suggestion"}

// String returns "P0" to "P3".
func (p Priority) String() string {
	if p < P0 || p > P3 {
		return "P?"
	}
	return "P" + strconv.Itoa(int(p))
}

// Title returns the priority's word, as in seed 003: Critical, Major, Minor, Suggestion.
func (p Priority) Title() string {
	if p < P0 || p > P3 {
		return "?"
	}
	return priorityTitles[p]
}

// MarshalText writes "P0" to "P3".
func (p Priority) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads what ParsePriority reads.
func (p *Priority) UnmarshalText(b []byte) error {
	v, ok := ParsePriority(string(b))
	if !ok {
		return fmt.Errorf("unknown priority %q (want P0, P1, P2 or P3)", b)
	}
	*p = v
	return nil
}

// ParsePriority reads P0 to P3 (any case), or the words of seed 003's
// headings: critical, major, minor, nit (also nits, suggestion, trivial).
func ParsePriority(s string) (Priority, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "p0", "critical":
		return P0, true
	case "p1", "major":
		return P1, true
	case "p2", "minor":
		return P2, true
	case "p3", "nit", "nits", "suggestion", "suggestions", "trivial":
		return P3, true
	}
	return 0, false
}

// Finding is one thing a reviewer found in the change.
type Finding struct {
	Priority   Priority `json:"priority"`
	File       string   `json:"file,omitempty"`
	Line       int      `json:"line,omitempty"` // 0 when unknown
	Issue      string   `json:"issue"`
	Suggestion string   `json:"suggestion,omitempty"`
	Dimensions []string `json:"dimensions,omitempty"` // the reviewers that found it
}

// Location returns "file:line", "file", or "".
func (f Finding) Location() string {
	if f.File != "" && f.Line > 0 {
		return f.File + ":" + strconv.Itoa(f.Line)
	}
	return f.File
}

// ParseError is returned by Parse when the output is neither
// findings nor an explicit "no findings".
type ParseError struct {
	Line int // of the output, from 1; 0 for the whole output
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// MaxText bounds an issue's and a suggestion's length, so that one
// runaway reviewer line cannot flood the feedback.
const MaxText = 2000

// Parse reads a reviewer's output: its findings, or none when it
// says so. It reads
//
//   - JSON: one object per line ({"priority": "P1", "file": "a.go", "line": 3,
//     "issue": "…", "suggestion": "…"}), or an array of them, or an object
//     {"findings": [...]}; "severity" is read when "priority" is missing,
//     other keys are ignored;
//   - markdown in seed 003's form: headings "### P0 Critical", "### P1 Major",
//     "### P2 Minor", "### P3 Suggestion" (any level; P0…P3 or the word is enough),
//     each with items "- file:line - issue", optionally followed by a line
//     "Suggestion: …"; text outside those sections is ignored, and so are
//     items that say "None";
//   - an explicit "no findings" (also "no issues", "none"), alone.
//
// Either may be wrapped in one code fence. Anything else, an empty output
// included, is a *ParseError: a reviewer that printed it must not pass.
func Parse(out []byte) ([]Finding, error) {
	s := cleanOutput(out)
	if strings.TrimSpace(s) == "" {
		return nil, &ParseError{Msg: `printed nothing (want findings, or "no findings")`}
	}
	s, offset := unfence(s)
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, &ParseError{Msg: `printed an empty code block (want findings, or "no findings")`}
	}
	if isNoFindings(t) {
		return nil, nil
	}
	var fs []Finding
	var err error
	if t[0] == '{' || t[0] == '[' {
		fs, err = parseJSONFindings(s, offset)
	} else {
		fs, err = parseMarkdownFindings(s, offset)
	}
	if err != nil {
		return nil, err
	}
	return fs, nil
}

var ansi = lazyre.New(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

func cleanOutput(out []byte) string {
	s := strings.ToValidUTF8(string(out), "\uFFFD")
	s = ansi.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimPrefix(s, "\uFEFF")
}

// unfence removes one code fence around the whole text; offset is the
// number of lines dropped before it, to keep line numbers right.
func unfence(s string) (string, int) {
	t := strings.Trim(s, "\n \t")
	lead := strings.Count(s[:len(s)-len(strings.TrimLeft(s, "\n \t"))], "\n")
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return s, 0
	}
	mark := t[:3]
	lines := strings.Split(t, "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != mark {
		return s, 0
	}
	return strings.Join(lines[1:len(lines)-1], "\n"), lead + 1
}

var noFindings = lazyre.New(`(?i)^[#*_\s]*(no (findings|issues)( found)?|none)[.!]?[*_\s]*$`)

func isNoFindings(s string) bool { return noFindings.MatchString(s) }

// jsonFinding is a finding as a reviewer writes it: line as a number or a
// string, severity for priority.
type jsonFinding struct {
	Priority   *string         `json:"priority"`
	Severity   *string         `json:"severity"`
	File       string          `json:"file"`
	Line       json.RawMessage `json:"line"`
	Issue      string          `json:"issue"`
	Suggestion string          `json:"suggestion"`
}

func (j jsonFinding) finding() (Finding, error) {
	pr := j.Priority
	if pr == nil {
		pr = j.Severity
	}
	if pr == nil {
		return Finding{}, fmt.Errorf(`a finding needs a "priority" (P0 to P3)`)
	}
	p, ok := ParsePriority(*pr)
	if !ok {
		return Finding{}, fmt.Errorf("unknown priority %q (want P0, P1, P2 or P3)", *pr)
	}
	f := Finding{Priority: p, File: j.File, Issue: j.Issue, Suggestion: j.Suggestion}
	if len(j.Line) > 0 && string(j.Line) != "null" {
		var n json.Number
		raw := bytes.Trim(j.Line, `"`)
		if err := json.Unmarshal(raw, &n); err != nil {
			return Finding{}, fmt.Errorf("line %s is not a line number", j.Line)
		}
		v, err := strconv.Atoi(n.String())
		if err != nil || v < 0 {
			return Finding{}, fmt.Errorf("line %s is not a line number", j.Line)
		}
		f.Line = v
	}
	return f.clean()
}

// clean checks a finding and puts its text in one form.
func (f Finding) clean() (Finding, error) {
	f.File = cleanFile(f.File)
	f.Issue = OneLine(f.Issue)
	f.Suggestion = OneLine(f.Suggestion)
	if f.Issue == "" {
		return f, fmt.Errorf(`a finding needs an "issue"`)
	}
	if f.File == "" {
		f.Line = 0
	}
	return f, nil
}

func cleanFile(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "`*_")
	s = strings.TrimPrefix(s, "./")
	if strings.ContainsAny(s, "\n\r\t") || len(s) > 500 {
		s = OneLine(s)
	}
	return s
}

// OneLine collapses white space (newlines too) to single spaces and bounds
// the length.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > MaxText {
		s = s[:MaxText]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

func parseJSONFindings(s string, offset int) ([]Finding, error) {
	t := strings.TrimSpace(s)
	var whole any
	if json.Unmarshal([]byte(t), &whole) == nil {
		var list []jsonFinding
		switch v := whole.(type) {
		case []any:
			if err := json.Unmarshal([]byte(t), &list); err != nil {
				return nil, &ParseError{Msg: "a JSON array that is not of findings: " + err.Error()}
			}
		case map[string]any:
			if _, ok := v["findings"]; ok {
				var wrap struct{ Findings []jsonFinding }
				if err := json.Unmarshal([]byte(t), &wrap); err != nil {
					return nil, &ParseError{Msg: `"findings" is not a list of findings: ` + err.Error()}
				}
				list = wrap.Findings
			} else {
				var j jsonFinding
				if err := json.Unmarshal([]byte(t), &j); err != nil {
					return nil, &ParseError{Msg: err.Error()}
				}
				list = []jsonFinding{j}
			}
		}
		out := []Finding{}
		for i, j := range list {
			f, err := j.finding()
			if err != nil {
				return nil, &ParseError{Msg: fmt.Sprintf("finding %d: %v", i+1, err)}
			}
			out = append(out, f)
		}
		return out, nil
	}
	// JSON lines: every line that is not blank is one finding.
	out := []Finding{}
	for i, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var j jsonFinding
		dec := json.NewDecoder(strings.NewReader(line))
		if err := dec.Decode(&j); err != nil || dec.More() || line[0] != '{' {
			return nil, &ParseError{Line: i + 1 + offset, Msg: fmt.Sprintf("not a JSON finding: %s", excerptLine(line))}
		}
		f, err := j.finding()
		if err != nil {
			return nil, &ParseError{Line: i + 1 + offset, Msg: err.Error()}
		}
		out = append(out, f)
	}
	return out, nil
}

func excerptLine(s string) string {
	if len(s) > 80 {
		s = s[:80]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strconv.Quote(s)
}

var (
	mdHeading   = lazyre.New(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	mdBold      = lazyre.New(`^ {0,3}(?:\*\*|__)(.+?)(?:\*\*|__):?\s*$`)
	mdItem      = lazyre.New(`^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$`)
	pToken      = lazyre.New(`(?i)\bP([0-3])\b`)
	priorityWrd = lazyre.New(`(?i)^\W*(critical|major|minor|nits?|suggestions?|trivial)\b`)
	suggestion  = lazyre.New(`(?i)^(?:suggestion|suggested fix|fix)\s*:\s*(.*)$`)
	noneItem    = lazyre.New(`(?i)^[(*_\s]*(none|n/a|nothing|no (findings|issues)( found)?)[.)*_\s]*$`)
	// A location: a path (with a dot or a slash, or with a line number),
	// an optional :line or :line:col, then a separator and the issue.
	location = lazyre.New("^[`*_\\[]*([^\\s`*\\[\\]():]+?)(?::(\\d+)(?:[-:]\\d+)?)?[`*_\\]]*(?:\\s+[-–—:]|:)\\s+(.+)$")
)

// headingPriority returns the priority a markdown heading names, if any.
func headingPriority(text string) (Priority, bool) {
	if m := pToken.FindStringSubmatch(text); m != nil {
		return Priority(m[1][0] - '0'), true
	}
	if m := priorityWrd.FindStringSubmatch(text); m != nil {
		return ParsePriority(strings.TrimSuffix(strings.ToLower(m[1]), "s"))
	}
	return 0, false
}

// markdownParser reads seed 003's markdown line by line.
type markdownParser struct {
	out      []Finding
	cur      *Priority // the section we are in, nil outside priority sections
	sections int
	last     *Finding // the item that continuation lines add to
	inSugg   bool     // the last line added to last's suggestion
	fenced   bool
}

func parseMarkdownFindings(s string, offset int) ([]Finding, error) {
	p := markdownParser{out: []Finding{}}
	for _, line := range strings.Split(s, "\n") {
		p.line(line)
	}
	if p.sections == 0 {
		first := strings.TrimSpace(s)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = first[:i]
		}
		return nil, &ParseError{Msg: fmt.Sprintf(`neither JSON findings nor markdown sections (### P0 Critical, ### P1 Major, …), and not "no findings": it begins %s`, excerptLine(first))}
	}
	for i := range p.out {
		f, err := p.out[i].clean()
		if err != nil {
			return nil, &ParseError{Msg: err.Error()}
		}
		p.out[i] = f
	}
	return p.out, nil
}

// line reads one line of the output.
func (p *markdownParser) line(line string) {
	trimmed := strings.TrimSpace(line)
	if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
		p.fenced = !p.fenced
		p.last = nil
		return
	}
	if p.fenced {
		return
	}
	if heading := markdownHeading(line); heading != "" {
		p.last = nil
		if pr, ok := headingPriority(heading); ok {
			p.cur = &pr
			p.sections++
		} else {
			p.cur = nil
		}
		return
	}
	if trimmed == "" {
		p.inSugg = false
		return
	}
	if p.cur != nil {
		p.sectionLine(line, trimmed)
	}
}

// markdownHeading returns the text of a heading, or of a bold line that
// names a priority; "" for any other line.
func markdownHeading(line string) string {
	if m := mdHeading.FindStringSubmatch(line); m != nil {
		return m[2]
	}
	if m := mdBold.FindStringSubmatch(line); m != nil {
		if _, ok := headingPriority(m[1]); ok {
			return m[1]
		}
	}
	return ""
}

// sectionLine reads a line that is not blank inside a priority section: a
// suggestion, an item, the continuation of one, or prose.
func (p *markdownParser) sectionLine(line, trimmed string) {
	plain := strings.ReplaceAll(strings.ReplaceAll(trimmed, "**", ""), "__", "")
	plain = strings.TrimSpace(strings.TrimLeft(plain, "-*+> "))
	if m := suggestion.FindStringSubmatch(plain); m != nil {
		if p.last != nil {
			p.last.Suggestion = strings.TrimSpace(p.last.Suggestion + " " + m[1])
			p.inSugg = true
		}
		return
	}
	if m := mdItem.FindStringSubmatch(line); m != nil && (len(m[1]) < 2 || p.last == nil) {
		p.item(strings.TrimSpace(m[2]))
		return
	}
	if p.last != nil && (line[0] == ' ' || line[0] == '\t') {
		// An indented line continues the item (or its suggestion).
		if p.inSugg {
			p.last.Suggestion += " " + trimmed
		} else {
			p.last.Issue += " " + trimmed
		}
		return
	}
	if !noneItem.MatchString(trimmed) {
		p.last = nil // prose between items: ignored
	}
}

// item reads a list item's text: a finding, or "None".
func (p *markdownParser) item(text string) {
	if noneItem.MatchString(text) {
		p.last = nil
		return
	}
	f := Finding{Priority: *p.cur, Issue: text}
	if l := location.FindStringSubmatch(text); l != nil && (strings.ContainsAny(l[1], "./") || l[2] != "") {
		f.File, f.Issue = l[1], l[3]
		f.Line, _ = strconv.Atoi(l[2])
	}
	p.out = append(p.out, f)
	p.last, p.inSugg = &p.out[len(p.out)-1], false
}

// findingKey is what makes two findings the same for Merge: the
// file, the line, and the issue without regard to case, spacing or a final
// period.
func findingKey(f Finding) string {
	issue := strings.ToLower(strings.TrimRight(OneLine(f.Issue), ". "))
	return f.File + "\x00" + strconv.Itoa(f.Line) + "\x00" + issue
}

// Merge merges the findings of several reviewers: the same finding
// (same file, line and issue, case and spacing aside) found twice is kept
// once, at the worse of its priorities, with the first suggestion given and
// the dimensions of all who found it. The result is sorted by Sort.
func Merge(lists ...[]Finding) []Finding {
	var out []Finding
	index := map[string]int{}
	for _, list := range lists {
		for _, f := range list {
			k := findingKey(f)
			i, seen := index[k]
			if !seen {
				f.Dimensions = append([]string(nil), f.Dimensions...)
				index[k] = len(out)
				out = append(out, f)
				continue
			}
			m := &out[i]
			m.Priority = min(m.Priority, f.Priority)
			if m.Suggestion == "" {
				m.Suggestion = f.Suggestion
			}
			for _, d := range f.Dimensions {
				if !containsString(m.Dimensions, d) {
					m.Dimensions = append(m.Dimensions, d)
				}
			}
		}
	}
	Sort(out)
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Sort sorts findings worst first, then by file, line and issue.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		switch {
		case a.Priority != b.Priority:
			return a.Priority < b.Priority
		case a.File != b.File:
			return a.File < b.File
		case a.Line != b.Line:
			return a.Line < b.Line
		}
		return a.Issue < b.Issue
	})
}

// AtOrAbove returns the findings at priority p or worse.
func AtOrAbove(fs []Finding, p Priority) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Priority <= p {
			out = append(out, f)
		}
	}
	return out
}

// SignatureText is the text that stands for a set of findings in a failure
// signature: one line per finding, "P1 file - issue", sorted. Line numbers,
// suggestions, the reviewers that found them and the order they came in are
// left out, so that the same findings after an edit that moved them, or
// worded the advice differently, are the same failure; the priority, the
// file and the issue's words make a finding, and one more or one fewer is a
// different failure.
func SignatureText(fs []Finding) string {
	lines := make([]string, 0, len(fs))
	for _, f := range fs {
		file := f.File
		if file == "" {
			file = "-"
		}
		lines = append(lines, fmt.Sprintf("%s %s - %s", f.Priority, file, OneLine(f.Issue)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// JSONLines writes findings as JSON lines, the form a synthesis
// command reads on its stdin.
func JSONLines(fs []Finding) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, f := range fs {
		enc.Encode(f) // a Finding always encodes
	}
	return b.Bytes()
}

// Markdown writes findings grouped by priority in seed 003's form:
// "### P0 Critical", then "- file:line - issue" and "  Suggestion: …".
// Parse reads it back.
func Markdown(fs []Finding) string {
	var b strings.Builder
	for i, g := range Groups(fs, P3) {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "### %s %s\n", g.Priority, g.Title)
		for _, it := range g.Items {
			b.WriteString("- ")
			if it.Location != "" {
				b.WriteString(it.Location + " - ")
			}
			b.WriteString(it.Issue + "\n")
			if it.Suggestion != "" {
				b.WriteString("  Suggestion: " + it.Suggestion + "\n")
			}
		}
	}
	return b.String()
}

// Group is the findings of one priority, for the feedback.
type Group struct {
	Priority string // P0 to P3
	Title    string // Critical, Major, Minor, Suggestion
	Blocking bool   // at fail_on or worse: these fail the gate
	Items    []Item
}

// Item is one finding in the feedback.
type Item struct {
	Location   string // file:line, file, or ""
	Issue      string
	Suggestion string
	Dimensions []string
}

// Groups groups findings by priority, worst first, leaving out
// priorities without findings; failOn marks the groups that block.
func Groups(fs []Finding, failOn Priority) []Group {
	sorted := append([]Finding(nil), fs...)
	Sort(sorted)
	var out []Group
	for _, f := range sorted {
		if len(out) == 0 || out[len(out)-1].Priority != f.Priority.String() {
			out = append(out, Group{Priority: f.Priority.String(), Title: f.Priority.Title(), Blocking: f.Priority <= failOn})
		}
		g := &out[len(out)-1]
		g.Items = append(g.Items, Item{Location: f.Location(), Issue: f.Issue, Suggestion: f.Suggestion, Dimensions: f.Dimensions})
	}
	return out
}
