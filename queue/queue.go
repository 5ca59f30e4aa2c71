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
	"regexp"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
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

// FieldLaunchCount counts the agent launches that worked on an issue,
// each counted before it starts: at most one more than Max-Retries.
const FieldLaunchCount = "Launch-Count"

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
	intFields     = map[string]bool{"retrycount": true, "maxretries": true, "signaturerepeatcount": true, "leaseepoch": true, "launchcount": true}
	boolFields    = map[string]bool{"autoretry": true, "halted": true, "blocking": true}
	canonicalName = map[string]string{}
)

func init() {
	for _, f := range append(SeedFields, FieldClaimedBy, FieldClaimedAt, FieldLeaseEpoch, FieldLeaseUntil, FieldTouches, FieldLaunchCount, FieldTests) {
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
	// plainSkipped are where the pieces not read start that a look read
	// plainly issues, of the ID of their heading alone (see UpdateChosen):
	// they are not in skipped, and hold no other issue.
	plainSkipped []int
	needles      [][]byte // what the pieces ParseSome read hold
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

// All returns the issues in file order, the ones added by this change last.
func (q *Queue) All() []*Issue {
	if len(q.added) == 0 {
		return q.Issues
	}
	return append(append([]*Issue(nil), q.Issues...), q.added...)
}

// ParseTime reads a time field: RFC 3339, in backquotes or not.
func ParseTime(v string) (time.Time, error) {
	return time.Parse(time.RFC3339, unquote(strings.TrimSpace(v)))
}
