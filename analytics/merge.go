package analytics

import (
	"container/heap"
	"fmt"
	"hash/maphash"
	"io"
)

// Several machines' histories read as one page (ComputeAll): each machine
// appends to its own history.csv, and the page of all of them is their
// rows merged in time order, each row counted once.

// Source is one machine's history.csv, to be read with the others'.
type Source struct {
	// Name says which history it is wherever the page speaks of it: a
	// path, or where on a remote it is kept.
	Name string
	R    io.Reader
	// Optional: a history that cannot be read (its header is not a
	// history's, its reader fails) is left out, and the page says why,
	// instead of failing. Another machine's history is: the page of this
	// one does not depend on it.
	Optional bool
}

// SourceStat is what one history gave the page.
type SourceStat struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"` // its rows counted
	// Duplicates are its rows that another history held as well: counted
	// once, under the history read first.
	Duplicates int64  `json:"duplicates"`
	LeftOut    string `json:"left_out,omitempty"` // why (the rest of) it was left out
}

// ComputeAll reads several histories as one and reduces them to Metrics,
// as Compute does one; Metrics.Sources says what each gave.
//
// The rows are taken in time order, by a merge of the histories (each is in
// time order, as it was appended), so that what a machine did to an issue
// after another comes after it, as it would in one history.
//
// A row that several histories hold (a history.csv committed and cloned, a
// clone copied with its history) is counted once. Two rows are one when
// every column orchestrate writes is the same, the time to the millisecond
// included: two events of two machines make one row only if they happened
// in the same millisecond, in one run (its ID holds random bits), to one
// issue, the same way. In one history every row is an event, equal rows
// included (one append may write two): the n-th of a run of equal rows is
// one with the n-th of another history's. With more than one history,
// each row's key is kept (16 bytes and the map's share); one history is
// read as Compute reads it.
func ComputeAll(srcs []Source) (*Metrics, error) {
	if len(srcs) == 1 && !srcs[0].Optional {
		m, err := Compute(srcs[0].R)
		if err != nil {
			if srcs[0].Name != "" {
				err = fmt.Errorf("%s: %w", srcs[0].Name, err)
			}
			return nil, err
		}
		m.Sources = []SourceStat{{Name: srcs[0].Name, Rows: m.Rows}}
		return m, nil
	}
	c := newComputer()
	mg := &merger{c: c, stats: make([]SourceStat, len(srcs))}
	if len(srcs) > 1 {
		mg.seen = make(map[rowKey]struct{})
		mg.seeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}
	}
	for i, src := range srcs {
		mg.stats[i].Name = src.Name
		s := &stream{i: i, src: src}
		s.rr = newRowReader(src.R, mg.bad(src.Name, len(srcs) > 1))
		ok, err := mg.advance(s)
		if err != nil {
			return nil, err
		}
		if ok {
			mg.h = append(mg.h, s)
		}
	}
	heap.Init(&mg.h)
	for len(mg.h) > 0 {
		s := mg.h[0]
		st := &mg.stats[s.i]
		if mg.first(s.key) {
			c.add(s.head)
			st.Rows++
		} else {
			st.Duplicates++
			mg.dups++
		}
		ok, err := mg.advance(s)
		if err != nil {
			return nil, err
		}
		if ok {
			heap.Fix(&mg.h, 0)
		} else {
			heap.Pop(&mg.h)
		}
	}
	m := c.finish()
	m.Sources, m.Duplicates = mg.stats, mg.dups
	return m, nil
}

// rowKey tells rows apart (see ComputeAll): two hashes of the row's
// columns, with different seeds, the second mixed with the row's place in
// a run of equal rows.
type rowKey [2]uint64

// merger merges the histories' rows.
type merger struct {
	c     *computer
	h     streams
	stats []SourceStat
	seen  map[rowKey]struct{} // nil: one history, nothing to tell apart
	seeds [2]maphash.Seed
	hash  maphash.Hash
	dups  int64
}

// stream is one history being read: its next row, and that row's key.
type stream struct {
	i    int // its place among the sources: the first wins a tie
	src  Source
	rr   *rowReader
	head Event
	key  rowKey
	last rowKey // the key of the row before it, as read
	run  uint64 // how many rows before it were equal to it, in a row
}

// bad notes a history's malformed row, named after the history when there
// are several.
func (mg *merger) bad(name string, several bool) func(*rowError) {
	return func(e *rowError) {
		if several {
			e.File = name
		}
		mg.c.bad(e)
	}
}

// advance reads s's next row: false at its end, or when it cannot be read
// further and may be left out.
func (mg *merger) advance(s *stream) (bool, error) {
	ev, err := s.rr.next()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		if s.src.Optional {
			mg.stats[s.i].LeftOut = err.Error()
			return false, nil
		}
		if s.src.Name != "" {
			err = fmt.Errorf("%s: %w", s.src.Name, err)
		}
		return false, err
	}
	s.head = ev
	if mg.seen != nil {
		key := mg.key(s.rr)
		if key == s.last {
			s.run++
		} else {
			s.run = 0
		}
		s.last = key
		key[1] ^= s.run * 0x9e3779b97f4a7c15
		s.key = key
	}
	return true, nil
}

// key is the key of the row rr read last: its columns as written.
func (mg *merger) key(rr *rowReader) rowKey {
	var k rowKey
	for i, seed := range mg.seeds {
		mg.hash.SetSeed(seed)
		for _, col := range rr.index {
			mg.hash.WriteString(rr.rec[col])
			mg.hash.WriteByte(0)
		}
		k[i] = mg.hash.Sum64()
	}
	return k
}

// first reports whether the row of key is read for the first time.
func (mg *merger) first(key rowKey) bool {
	if mg.seen == nil {
		return true
	}
	if _, ok := mg.seen[key]; ok {
		return false
	}
	mg.seen[key] = struct{}{}
	return true
}

// streams is a heap of the histories by their next row's time.
type streams []*stream

func (h streams) Len() int { return len(h) }
func (h streams) Less(a, b int) bool {
	if !h[a].head.Time.Equal(h[b].head.Time) {
		return h[a].head.Time.Before(h[b].head.Time)
	}
	return h[a].i < h[b].i
}
func (h streams) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *streams) Push(x any)   { *h = append(*h, x.(*stream)) }
func (h *streams) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}
