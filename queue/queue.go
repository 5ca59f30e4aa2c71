// Package queue reads, validates and patches issue_queue.md, the markdown
// issue queue, changing only the bytes of what changed.
//
// Its API is the reading and writing of the queue: Load, LoadSome, Parse,
// ParseSome, Update and UpdateSome; Queue, Issue, Field and Section with their
// methods; Problem and ValidationError; and the names of the seed's format
// (the Field, Status and Section constants, SeedFields, Statuses,
// DefaultMaxRetries). CanonicalName, CheckValue, ParseBool, FormatList and
// ParseList are helpers the orchestrate command and its packages share for
// the values of fields; they are not API and may change. The module is at
// v0: the API follows issue_queue.md and changes with it.
package queue

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

// The fields of the seed's format, in its order and spelling.
const (
	FieldType                 = "Type"
	FieldPriority             = "Priority"
	FieldStatus               = "Status"
	FieldSource               = "Source"
	FieldCategory             = "Category"
	FieldCreated              = "Created"
	FieldAutoRetry            = "Auto-Retry"
	FieldRetryCount           = "Retry-Count"
	FieldMaxRetries           = "Max-Retries"
	FieldFailureSignature     = "Failure-Signature"
	FieldPreviousSignatures   = "Previous-Signatures"
	FieldSignatureRepeatCount = "Signature-Repeat-Count"
	FieldHalted               = "Halted"
	FieldBlocking             = "Blocking"
)

// The fields of a claim (see package claim): who holds the issue, since
// when, the fencing epoch of the claim, and when its lease ends; and the
// globs of the files an issue touches, which keep overlapping issues apart.
const (
	FieldClaimedBy  = "Claimed-By"
	FieldClaimedAt  = "Claimed-At"
	FieldLeaseEpoch = "Lease-Epoch"
	FieldLeaseUntil = "Lease-Until"
	FieldTouches    = "Touches"
)

// SeedFields lists the seed's fields in the order a new issue gets them.
var SeedFields = []string{
	FieldType, FieldPriority, FieldStatus, FieldSource, FieldCategory, FieldCreated,
	FieldAutoRetry, FieldRetryCount, FieldMaxRetries, FieldFailureSignature,
	FieldPreviousSignatures, FieldSignatureRepeatCount, FieldHalted, FieldBlocking,
}

// Priorities are the values of Priority, first claimed first.
var Priorities = []string{"critical", "high", "medium", "low"}

// Status values.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusResolved   = "resolved"
	StatusStuck      = "stuck"
	StatusSkipped    = "skipped"
)

// StatusCompleted is the seeds' word for a finished issue: it reads as
// StatusResolved.
const StatusCompleted = "completed"

// Statuses lists the valid status values (and StatusCompleted, which
// reads as StatusResolved).
var Statuses = []string{StatusPending, StatusInProgress, StatusResolved, StatusStuck, StatusSkipped}

// The sections of the seed's format.
const (
	SectionSummary        = "Summary"
	SectionFailureDetails = "Failure Details"
	SectionVerification   = "Verification Step"
	SectionSuggestedFix   = "Suggested Fix"
)

// DefaultMaxRetries is Max-Retries when an issue does not say.
const DefaultMaxRetries = 10

var (
	idPattern     = regexp.MustCompile(`^ISSUE-(\d{8})-(\d{3,})$`)
	intFields     = map[string]bool{"retrycount": true, "maxretries": true, "signaturerepeatcount": true, "leaseepoch": true}
	boolFields    = map[string]bool{"autoretry": true, "halted": true, "blocking": true}
	canonicalName = map[string]string{}
)

func init() {
	for _, f := range append(SeedFields, FieldClaimedBy, FieldClaimedAt, FieldLeaseEpoch, FieldLeaseUntil, FieldTouches) {
		canonicalName[mdpatch.Norm(f)] = f
	}
}

// CanonicalName returns the seed's spelling of a known field name, or name
// itself.
func CanonicalName(name string) string {
	if c, ok := canonicalName[mdpatch.Norm(name)]; ok {
		return c
	}
	return strings.TrimSpace(name)
}

// Problem is something wrong in the queue, at a line.
type Problem = problem.Problem

// Queue is a parsed issue_queue.md and the changes made to it since.
type Queue struct {
	src      *mdpatch.Source
	Issues   []*Issue
	Problems []Problem

	added   []*Issue
	skipped [][2]int // the pieces ParseSome did not read, a run of them as one
	needles [][]byte // what the pieces ParseSome read hold
}

// Issue is one issue of the queue.
type Issue struct {
	ID   string
	Line int

	q        *Queue
	start    int // the heading line
	end      int // the next boundary heading or the end of the text
	table    *mdpatch.FieldTable
	fields   []*mdpatch.Field // the fields of an issue this change adds
	sections []*Section
}

// Field is one row of an issue's field table.
type Field = mdpatch.Field

// Section is a level-3 section of an issue.
type Section struct {
	Title string
	Line  int

	q            *Queue
	headEnd, end int
	body         string // the body set by this change
	pending      bool   // a section this change adds
	replaced     bool   // a section whose body this change replaces
}

// Body returns the section's text, the blank lines around it trimmed.
func (s *Section) Body() string {
	if s.pending || s.replaced {
		return s.body
	}
	return s.q.body(s.headEnd, s.end)
}

// Parse reads a queue; data must not be changed afterwards. Problems are collected in Queue.Problems, never
// returned as an error: a queue with problems can still be shown.
func Parse(data []byte) *Queue {
	return parse(data, nil)
}

// ParseSome is Parse for the issues that hold one of needles in their
// text, for a reader that needs only those (a Stop hook its session's
// issues): the text is cut into pieces as mdpatch.Source.Walk cuts it,
// each starting at a level-2 heading, and only the pieces that hold a
// needle are parsed. The issues of the other pieces are not in Issues,
// their problems not in Problems, and Bytes keeps them as they are.
func ParseSome(data []byte, needles ...string) *Queue {
	return parseSome(mdpatch.NewSource(data), needles)
}

// parseSome is ParseSome of a source already made. The needles are
// looked for in the whole text, once each, and a piece is read when one of
// them lies in it whole: a big text with few of them is not searched piece
// by piece. A text that holds none anywhere is not cut into pieces at all:
// it is one piece not read, as each of its pieces would be.
func parseSome(src *mdpatch.Source, needles []string) *Queue {
	return parseFound(src, findNeedles(src.Text, needles))
}

// found is where needles lie in a text: the start and end of each place,
// in order of start, or many when there are too many to list.
type found struct {
	needles [][]byte
	finders []*finder // of the needles
	at      [][2]int
	many    bool
}

// findNeedles looks for needles in the whole of text, once each.
func findNeedles(text []byte, needles []string) *found {
	f := &found{}
	var counts *byteCounts
	for _, n := range needles {
		if n != "" {
			if counts == nil {
				counts = countBytes(text)
			}
			f.needles = append(f.needles, []byte(n))
			f.finders = append(f.finders, newFinder([]byte(n), counts))
		}
	}
	f.search(text, 0)
	return f
}

// search adds the places of the needles in text that end after its
// first old bytes: text is the text already searched, of length old, and
// more after it, or a text not searched yet (old 0).
func (f *found) search(text []byte, old int) {
	for _, fi := range f.finders {
		n := fi.needle
		// A place that starts before this ends within the old text.
		for at := max(0, old-len(n)+1); !f.many; at++ {
			i := fi.index(text[at:])
			if i < 0 {
				break
			}
			at += i
			f.at = append(f.at, [2]int{at, at + len(n)})
			f.many = len(f.at) > maxFound
		}
	}
	slices.SortFunc(f.at, func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
}

// appended is f for text, which is the text f was found in, of length
// old, and more after it: only what was added, and the seam, are
// searched.
func (f *found) appended(text []byte, old int) *found {
	g := &found{needles: f.needles, finders: f.finders, at: f.at[:len(f.at):len(f.at)], many: f.many}
	g.search(text, old)
	return g
}

// parseFound is parseSome for needles already looked for. A text that
// holds none anywhere is not cut into pieces at all: it is one piece not
// read, as each of its pieces would be.
func parseFound(src *mdpatch.Source, f *found) *Queue {
	if len(f.at) == 0 {
		return &Queue{src: src, skipped: [][2]int{{0, len(src.Text)}}, needles: f.needles}
	}
	var keep func(start, end int) bool
	if f.many {
		// Too many to list: each piece is searched.
		keep = func(start, end int) bool {
			return slices.ContainsFunc(f.needles, func(n []byte) bool { return bytes.Contains(src.Text[start:end], n) })
		}
	} else {
		k := 0
		keep = func(start, end int) bool {
			for k < len(f.at) && f.at[k][0] < start {
				k++
			}
			for _, p := range f.at[k:] {
				if p[0] >= end {
					break
				}
				if p[1] <= end {
					return true
				}
			}
			return false
		}
	}
	q := parseSourceAt(src, keep)
	q.needles = f.needles
	return q
}

// maxFound is how many places of the needles parseSome lists at most.
const maxFound = 1 << 12

// parse is Parse, of the pieces keep accepts when it is not nil.
func parse(data []byte, keep func(piece []byte) bool) *Queue {
	return parseSource(mdpatch.NewSource(data), keep)
}

// parseSource is parse of a source already made.
func parseSource(src *mdpatch.Source, keep func(piece []byte) bool) *Queue {
	if keep == nil {
		return parseSourceAt(src, nil)
	}
	return parseSourceAt(src, func(start, end int) bool { return keep(src.Text[start:end]) })
}

// parseSourceAt is parseSource for a keep given where each piece lies.
func parseSourceAt(src *mdpatch.Source, keep func(start, end int) bool) *Queue {
	q := &Queue{src: src}
	r := &reader{q: q}
	if keep == nil {
		q.src.Walk(r.block)
	} else {
		q.src.WalkSomeAt(keep, r.skip, r.block)
	}
	r.closeIssue(len(q.src.Text))
	q.validate()
	sort.SliceStable(q.Problems, func(i, j int) bool { return q.Problems[i].Line < q.Problems[j].Line })
	return q
}

// reader follows parse through the blocks of the text: the issue and the
// section being read.
type reader struct {
	q      *Queue
	cur    *Issue
	sec    *Section
	lastID string // of the last issue read
	// skipped are the pieces skipped since, each run of them one after
	// another as one: its start, the start of its last piece, its end.
	skipped [][3]int
}

func (r *reader) closeSection(at int) {
	if r.sec != nil {
		r.sec.end = at
		r.sec = nil
	}
}

func (r *reader) closeIssue(at int) {
	if r.cur != nil {
		r.closeSection(at)
		r.cur.end = at
		r.cur = nil
	}
}

// skip notes a piece that ParseSome does not read.
func (r *reader) skip(start, end int) {
	// The piece starts with a level-2 heading, which ends the issue before it.
	r.closeIssue(start)
	// A run of pieces is noted as one: a big queue's many pieces not read
	// cost no list of them.
	if n := len(r.skipped); n > 0 && r.skipped[n-1][2] == start {
		r.skipped[n-1][1], r.skipped[n-1][2] = start, end
	} else {
		r.skipped = append(r.skipped, [3]int{start, start, end})
	}
	if n := len(r.q.skipped); n > 0 && r.q.skipped[n-1][1] == start {
		r.q.skipped[n-1][1] = end
	} else {
		r.q.skipped = append(r.q.skipped, [2]int{start, end})
	}
}

// lastIssue returns the ID of the last issue before here, read or not:
// the last one of the last piece skipped that has one. A run's pieces but
// its last parse together as they do apart (see mdpatch.Source.Walk).
func (r *reader) lastIssue() string {
	for i := len(r.skipped) - 1; i >= 0; i-- {
		run := r.skipped[i]
		for _, span := range [][2]int{{run[1], run[2]}, {run[0], run[1]}} {
			id := ""
			r.q.src.WalkPiece(span[0], span[1], func(b mdpatch.Block) {
				if b.Kind == mdpatch.Heading && b.Level == 2 && isIssueTitle(b.Title) {
					id = b.Title
				}
			})
			if id != "" {
				r.lastID, r.skipped = id, nil
				return id
			}
		}
	}
	r.skipped = nil
	return r.lastID
}

// block reads one block of the text.
func (r *reader) block(b mdpatch.Block) {
	q, cur := r.q, r.cur
	switch {
	case b.Kind == mdpatch.Heading && b.Level <= 2:
		r.closeIssue(b.Start)
		if b.Level == 2 && isIssueTitle(b.Title) {
			r.cur = &Issue{ID: b.Title, Line: q.src.Line(b.Start), q: q, start: b.Start}
			q.Issues = append(q.Issues, r.cur)
			r.lastID, r.skipped = r.cur.ID, nil
		}
	case cur == nil:
		if b.Kind == mdpatch.Heading && b.Level == 3 {
			if id := r.lastIssue(); id != "" {
				// Most often text pasted into an issue with a line of
				// dashes under it, which markdown reads as a heading.
				q.problem(q.src.Line(b.Start), "section %q belongs to no issue: a level-1 or level-2 heading above it (a line of = or - under text is one) ends %s", b.Title, id)
			}
		}
	case b.Kind == mdpatch.Heading && b.Level == 3:
		r.closeSection(b.Start)
		r.sec = &Section{Title: b.Title, Line: q.src.Line(b.Start), q: q, headEnd: b.End}
		cur.sections = append(cur.sections, r.sec)
	case b.Kind == mdpatch.TableBlock && r.sec == nil && cur.table == nil && len(b.Table.Header.Cells) >= 2:
		var missing []int
		cur.table, missing = q.src.FieldTable(b.Table)
		for _, line := range missing {
			q.problem(line, "%s: table row has a missing cell", cur.ID)
		}
	}
}

// isIssueTitle reports whether a level-2 heading is an issue's: its text
// starts with ISSUE- (a malformed ID after it is a problem); any other
// level-2 heading is a person's, kept as it is.
func isIssueTitle(title string) bool {
	return len(title) >= 6 && strings.EqualFold(title[:6], "issue-")
}

// body returns the text between from and to without the blank lines around it.
func (q *Queue) body(from, to int) string {
	s, e := q.bodySpan(from, to)
	return strings.ReplaceAll(strings.TrimRight(string(q.src.Text[s:e]), "\r\n"), "\r\n", "\n")
}

// bodySpan trims the blank lines at both ends of [from, to).
func (q *Queue) bodySpan(from, to int) (int, int) {
	for from < to && q.src.IsBlankLine(from) {
		from = q.src.LineEnd(from)
	}
	end := to
	for end > from {
		ls := q.src.LineStart(end - 1)
		if !q.src.IsBlankLine(ls) {
			break
		}
		end = ls
	}
	return from, end
}

func (q *Queue) problem(line int, format string, args ...any) {
	q.Problems = append(q.Problems, Problem{Line: line, Msg: fmt.Sprintf(format, args...)})
}

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

// ParseBool reads true/false, yes/no and 1/0, in any case.
func ParseBool(v string) (bool, error) { return mdpatch.ParseBool(v) }

// ParseList reads `[a, b]` (brackets optional) into its items.
func ParseList(v string) []string {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "`"))
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var items []string
	for _, it := range strings.Split(v, ",") {
		if it = strings.TrimSpace(it); it != "" {
			items = append(items, it)
		}
	}
	return items
}

// FormatList writes items as `[a, b]`.
func FormatList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

// Issue returns the issue with the given ID, or nil.
func (q *Queue) Issue(id string) *Issue {
	for _, is := range q.Issues {
		if is.ID == id {
			return is
		}
	}
	for _, is := range q.added {
		if is.ID == id {
			return is
		}
	}
	return nil
}

// Field returns the field named name (matched loosely), or nil.
func (is *Issue) Field(name string) *Field {
	if is.table != nil {
		return is.table.Field(name)
	}
	for _, f := range is.fields {
		if mdpatch.SameName(f.Name, name) {
			return f
		}
	}
	return nil
}

// EachField calls fn with each field in table order.
func (is *Issue) EachField(fn func(*Field)) {
	if is.table != nil {
		is.table.Each(fn)
		return
	}
	for _, f := range is.fields {
		fn(f)
	}
}

// Fields returns the issue's fields in table order.
func (is *Issue) Fields() []*Field {
	if is.table != nil {
		return is.table.Fields()
	}
	return is.fields
}

// Get returns a field's value, trimmed, and whether the field is set
// (present and not empty).
func (is *Issue) Get(name string) (string, bool) {
	f := is.Field(name)
	if f == nil {
		return "", false
	}
	v := strings.TrimSpace(f.Value)
	return v, v != ""
}

// Status returns the issue's status ("pending" when unset). The seeds'
// completed is resolved.
func (is *Issue) Status() string {
	if v, ok := is.Get(FieldStatus); ok {
		if v = unquote(v); v == StatusCompleted {
			return StatusResolved
		}
		return v
	}
	return StatusPending
}

// unquote strips the backticks of a value written as inline code.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return strings.TrimSpace(v[1 : len(v)-1])
	}
	return v
}

// Int returns an integer field, or def when it is unset. Parse reports
// malformed values, so a malformed one here reads as def.
func (is *Issue) Int(name string, def int) int {
	v, ok := is.Get(name)
	if !ok {
		return def
	}
	n, err := parseCount(v)
	if err != nil {
		return def
	}
	return n
}

// Bool returns a boolean field, or def when it is unset or malformed.
func (is *Issue) Bool(name string, def bool) bool {
	v, ok := is.Get(name)
	if !ok {
		return def
	}
	b, err := ParseBool(v)
	if err != nil {
		return def
	}
	return b
}

// List returns a list field's items.
func (is *Issue) List(name string) []string {
	v, _ := is.Get(name)
	return ParseList(v)
}

// Set changes a field, or adds it (in the seed's spelling, as a new row in
// the table's own style) when the issue lacks it. Setting a field to the
// value it has changes nothing. It must not be called on an issue without a
// field table, which Parse reports as a problem.
func (is *Issue) Set(name, value string) {
	value = textclean.Line(value)
	if is.table != nil {
		is.table.Set(name, CanonicalName(name), value)
		return
	}
	if f := is.Field(name); f != nil {
		f.Value = mdpatch.Unescape(mdpatch.Escape(value))
		return
	}
	is.fields = append(is.fields, &Field{Name: CanonicalName(name), Value: mdpatch.Unescape(mdpatch.Escape(value))})
}

// SetInt sets an integer field.
func (is *Issue) SetInt(name string, v int) { is.Set(name, strconv.Itoa(v)) }

// SetBool sets a boolean field.
func (is *Issue) SetBool(name string, v bool) { is.Set(name, strconv.FormatBool(v)) }

// Sections returns the issue's level-3 sections.
func (is *Issue) Sections() []*Section { return is.sections }

// Section returns the section titled title (matched loosely), or nil.
func (is *Issue) Section(title string) *Section {
	for _, s := range is.sections {
		if mdpatch.SameName(s.Title, title) {
			return s
		}
	}
	return nil
}

// SetSection replaces a section's body, or appends the section to the
// issue when it has none of that title.
func (is *Issue) SetSection(title, body string) {
	title = textclean.Line(title)
	body = strings.TrimRight(safeBody(body), "\r\n ")
	s := is.Section(title)
	if s == nil {
		is.sections = append(is.sections, &Section{Title: title, body: body, pending: true})
		return
	}
	if s.Body() == body {
		return
	}
	s.body = body
	s.replaced = !s.pending
}

// Add files a new issue, appended at the end of the file. fields are set in
// the seed's order first, then in the order given; sections in the seed's
// order, then the others in the order given.
func (q *Queue) Add(now time.Time, fields map[string]string, sections map[string]string) *Issue {
	is := &Issue{ID: q.NextID(now), q: q}
	set := map[string]bool{}
	for _, name := range SeedFields {
		for k, v := range fields {
			if mdpatch.Norm(k) == mdpatch.Norm(name) {
				is.Set(name, v)
				set[k] = true
			}
		}
	}
	var extra []string
	for k := range fields {
		if !set[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		is.Set(k, fields[k])
	}
	seen := map[string]bool{}
	for _, t := range []string{SectionSummary, SectionFailureDetails, SectionVerification, SectionSuggestedFix} {
		for k, v := range sections {
			if mdpatch.Norm(k) == mdpatch.Norm(t) {
				is.sections = append(is.sections, &Section{Title: t, body: strings.TrimRight(safeBody(v), "\r\n "), pending: true})
				seen[k] = true
			}
		}
	}
	extra = extra[:0]
	for k := range sections {
		if !seen[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		is.sections = append(is.sections, &Section{Title: textclean.Line(k), body: strings.TrimRight(safeBody(sections[k]), "\r\n "), pending: true})
	}
	q.added = append(q.added, is)
	return is
}

// NextID returns the ID the next issue filed on now's day gets: the day's
// highest number in the file plus one.
func (q *Queue) NextID(now time.Time) string {
	day := now.Format("20060102")
	max := 0
	for _, list := range [][]*Issue{q.Issues, q.added} {
		for _, is := range list {
			m := idPattern.FindStringSubmatch(is.ID)
			if m == nil || m[1] != day {
				continue
			}
			if n, err := strconv.Atoi(m[2]); err == nil && n > max {
				max = n
			}
		}
	}
	return fmt.Sprintf("ISSUE-%s-%03d", day, max+1)
}

// All returns the issues in file order, the ones added by this change last.
func (q *Queue) All() []*Issue {
	if len(q.added) == 0 {
		return q.Issues
	}
	return append(append([]*Issue(nil), q.Issues...), q.added...)
}

// Changed reports whether the queue differs from what was parsed.
func (q *Queue) Changed() bool {
	if len(q.added) > 0 {
		return true
	}
	for _, is := range q.Issues {
		if is.table != nil && is.table.Changed() {
			return true
		}
		for _, s := range is.sections {
			if s.pending || s.replaced {
				return true
			}
		}
	}
	return false
}

// elsewhere reports whether an issue this change touches or adds has its
// ID in a piece ParseSome did not read: the ID may be given twice, which
// only a whole parse can tell. An ID that holds a needle is in no such
// piece: each piece it lies in was read.
func (q *Queue) elsewhere() bool {
	if len(q.skipped) == 0 {
		return false
	}
	var ids [][]byte
	for _, is := range q.Issues {
		changed := is.table != nil && is.table.Changed()
		for _, s := range is.sections {
			changed = changed || s.pending || s.replaced
		}
		if changed {
			ids = append(ids, []byte(is.ID))
		}
	}
	for _, is := range q.added {
		ids = append(ids, []byte(is.ID))
	}
	ids = slices.DeleteFunc(ids, func(id []byte) bool {
		return slices.ContainsFunc(q.needles, func(n []byte) bool { return bytes.Contains(id, n) })
	})
	for _, r := range q.skipped {
		for _, id := range ids {
			if bytes.Contains(q.src.Text[r[0]:r[1]], id) {
				return true
			}
		}
	}
	return false
}

// edits returns the edits that write q's changes into its source.
func (q *Queue) edits() []mdpatch.Edit {
	src := q.src
	var edits []mdpatch.Edit
	for _, is := range q.Issues {
		if is.table != nil {
			edits = append(edits, is.table.Edits()...)
		}
		_, contentEnd := q.bodySpan(is.start, is.end)
		for _, s := range is.sections {
			switch {
			case s.replaced:
				edits = append(edits, q.replaceBody(s))
			case s.pending:
				lines := append([]string{"", "### " + s.Title, ""}, q.lines(s.body)...)
				e := src.InsertLines(contentEnd, lines...)
				e.Seq = 3
				edits = append(edits, e)
			}
		}
	}
	if len(q.added) > 0 {
		var lines []string
		text := src.Text
		if len(text) > 0 {
			end := len(text)
			if text[end-1] == '\n' {
				if !src.IsBlankLine(src.LineStart(end - 1)) {
					lines = append(lines, "")
				}
			} else {
				lines = append(lines, "")
			}
		}
		for i, is := range q.added {
			if i > 0 {
				lines = append(lines, "")
			}
			lines = append(lines, q.render(is)...)
		}
		e := mdpatch.Edit{Start: len(text), End: len(text), Seq: 4}
		var b strings.Builder
		if len(text) > 0 && text[len(text)-1] != '\n' {
			b.WriteString(src.EOL)
		}
		for _, l := range lines {
			b.WriteString(l)
			b.WriteString(src.EOL)
		}
		e.New = b.String()
		edits = append(edits, e)
	}
	return edits
}

// replaceBody returns the edit that puts s.body in place of its old body.
func (q *Queue) replaceBody(s *Section) mdpatch.Edit {
	src := q.src
	from, to := q.bodySpan(s.headEnd, s.end)
	lines := q.lines(s.body)
	if from == to {
		// An empty section: a blank line, the body, and a blank line before
		// what follows unless one is there already.
		at := s.headEnd
		pre := []string{""}
		if at > 0 && src.Text[at-1] != '\n' {
			e := src.InsertLines(at, append([]string{""}, lines...)...)
			e.Seq = 2
			return e
		}
		if at >= s.end || !src.IsBlankLine(at) {
			if at < len(src.Text) {
				lines = append(lines, "")
			}
		}
		e := src.InsertLines(at, append(pre, lines...)...)
		e.Seq = 2
		return e
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteString(src.EOL)
		}
		b.WriteString(l)
	}
	// The old body's last line ending, if it had one, stays.
	end := to
	for end > from && (src.Text[end-1] == '\n' || src.Text[end-1] == '\r') {
		end--
	}
	return mdpatch.Edit{Start: from, End: end, New: b.String(), Seq: 2}
}

func (q *Queue) lines(body string) []string {
	if body == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
}

// render writes a new issue in the seed's style: the heading, the field
// table, the sections.
func (q *Queue) render(is *Issue) []string {
	lines := []string{"## " + is.ID, ""}
	rows := make([][2]string, len(is.fields))
	for i, f := range is.fields {
		rows[i] = [2]string{f.Name, f.Value}
	}
	lines = append(lines, mdpatch.NewTableLines(rows)...)
	for _, s := range is.sections {
		lines = append(lines, "", "### "+s.Title, "")
		lines = append(lines, q.lines(s.body)...)
	}
	return lines
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
	}
	return nil
}

// ParseTime reads a time field: RFC 3339, in backquotes or not.
func ParseTime(v string) (time.Time, error) {
	return time.Parse(time.RFC3339, unquote(strings.TrimSpace(v)))
}

// safeBody returns a section's body as text that creates no structure in
// the queue: clean text (textclean.Text: no control bytes, valid UTF-8),
// where no line can be read as a heading of level 1 to 3 ("#", "##" or
// "###" and a space, a setext underline),
// an HTML block or a code fence left open that would hide what follows.
// Such lines outside fenced code get a backslash in front, markdown's
// escape; a fence left open is closed. If the result still parses with a
// heading of its own (a fence the simple scan misread), every such line is
// escaped, fences too.
func safeBody(body string) string {
	body = textclean.Text(body)
	if b := escapeLines(body, false); structureFree(b) {
		return b
	}
	return escapeLines(body, true)
}

// escapeLines escapes the lines that could start a heading or an HTML
// block; outside fenced code only, unless all.
func escapeLines(body string, all bool) string {
	lines := strings.Split(body, "\n")
	var fence byte
	fenceLen := 0
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		indent := len(l) - len(trimmed)
		if indent > 3 || trimmed == "" {
			continue
		}
		if fence != 0 && !all {
			if n := leadRun(trimmed, fence); n >= fenceLen && strings.TrimSpace(trimmed[n:]) == "" {
				fence = 0
			}
			continue
		}
		if c, n := opensFence(trimmed); !all && n > 0 {
			fence, fenceLen = c, n
			continue
		}
		if startsStructure(trimmed, all) {
			lines[i] = l[:indent] + `\` + trimmed
		}
	}
	if fence != 0 {
		lines = append(lines, strings.Repeat(string(fence), fenceLen))
	}
	return strings.Join(lines, "\n")
}

// leadRun returns how many times c repeats at the start of s.
func leadRun(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// opensFence returns the character and length of the code fence that the
// line trimmed (not empty, its indent cut) opens; n is 0 when it opens none.
func opensFence(trimmed string) (c byte, n int) {
	c = trimmed[0]
	if (c == '`' || c == '~') && leadRun(trimmed, c) >= 3 && (c == '~' || !strings.Contains(trimmed[leadRun(trimmed, c):], "`")) {
		return c, leadRun(trimmed, c)
	}
	return 0, 0
}

// startsStructure reports whether the line trimmed (not empty, its indent
// cut) needs escaping: it could start a heading of level 1 to 3 or an HTML
// block, or underline a heading; with all, any fence or heading does.
func startsStructure(trimmed string, all bool) bool {
	c := trimmed[0]
	bare := strings.TrimRight(trimmed, " \t")
	underline := (c == '=' || c == '-') && bare == strings.Repeat(string(c), len(bare))
	// A heading of level 1 to 3 ends or starts an issue or a section;
	// "####" and deeper are a section's own.
	hashes := leadRun(trimmed, '#')
	heading := c == '#' && hashes <= 3 && (len(trimmed) == hashes || trimmed[hashes] == ' ' || trimmed[hashes] == '\t')
	return heading || c == '<' || underline || all && (c == '`' || c == '~' || c == '#')
}

// structureFree reports whether body, as a section's body, holds no heading
// of level 3 or less and hides no heading after it.
func structureFree(body string) bool {
	const end = "### end"
	doc := "### s\n\n" + body + "\n\n" + end + "\n"
	n := 0
	ok := true
	mdpatch.NewSource([]byte(doc)).Walk(func(b mdpatch.Block) {
		if b.Kind == mdpatch.Heading && b.Level <= 3 {
			n++
			if n == 2 && b.Title != "end" {
				ok = false
			}
		}
	})
	return ok && n == 2
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
