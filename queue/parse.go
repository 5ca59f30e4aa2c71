package queue

import (
	"fmt"
	"sort"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
)

// Parse reads a queue; data must not be changed afterwards. Problems are collected in Queue.Problems, never
// returned as an error: a queue with problems can still be shown.
func Parse(data []byte) *Queue {
	return parse(data, nil)
}

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
