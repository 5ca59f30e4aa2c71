package queue

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

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
