package queue

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
)

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

// elsewhere reports whether an issue this change touches or adds has its
// ID in a piece ParseSome did not read: the ID may be given twice, which
// only a whole parse can tell. An ID that holds a needle is in no such
// piece: each piece it lies in was read.
func (q *Queue) elsewhere() bool {
	if len(q.skipped) == 0 && len(q.plainSkipped) == 0 {
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
	for _, at := range q.plainSkipped {
		for _, id := range ids {
			if line, _ := cutLine(q.src.Text[at:]); bytes.Equal(headingID(line), id) {
				return true
			}
		}
	}
	return false
}
