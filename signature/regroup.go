package signature

import (
	"bytes"
	"slices"
)

// A regrouper collects runs of blocks that are adjacent but for blank lines,
// and writes each run out sorted (and, with dedupe, without repeats). The
// blank lines between blocks keep their places.
type regrouper struct {
	out     []line
	blocks  [][]line
	gaps    [][]line // gaps[k] lies between blocks[k] and blocks[k+1]; nil while every gap is empty
	pending []line   // blank lines since the last block or line
	dedupe  bool
	s       *scratch // where the keys are made, if not nil
	// scratched says that out and blocks are the scratch's, and go back to
	// it with the result.
	scratched bool
}

// scratch is memory that the passes over a window keep for the next: a long
// output is many windows, and the largest slices of the passes are then
// allocated once, not once a window. Each pass writes the lines it returns
// to one of two buffers, the one the pass before did not write to (which
// may hold the pass's input): the lines structure returns are valid until
// its next call.
type scratch struct {
	next   []int32 // nextShallower's
	counts []int32 // prefixCount's
	lines  [2][]line
	cur    int // the buffer of lines taken last
	blocks [][]line
	keys   []byte
	keyed  []keyedBlock
}

// take returns an empty slice, with room for n lines, for a pass to write
// the lines it returns to; the pass gives it back to keep.
func (s *scratch) take(n int) []line {
	s.cur = 1 - s.cur
	return slices.Grow(s.lines[s.cur][:0], n)
}

// keep keeps out, the lines a pass wrote to the slice take gave it, for
// the next pass but one; the lines of the window before after them go.
func (s *scratch) keep(out []line) {
	if old := s.lines[s.cur]; len(old) > len(out) {
		clear(old[len(out):])
	}
	s.lines[s.cur] = out
}

// regrouper returns a regrouper for a pass over n lines, about blocks of
// them blocks, whose slices are the scratch's.
func (s *scratch) regrouper(n, blocks int) *regrouper {
	return &regrouper{out: s.take(n), blocks: slices.Grow(s.blocks[:0], blocks), s: s, scratched: true}
}

// newRegrouper returns a regrouper for n lines, of which about blocks
// blocks.
func newRegrouper(n, blocks int) *regrouper {
	return &regrouper{out: make([]line, 0, n), blocks: make([][]line, 0, blocks)}
}

func (g *regrouper) block(b []line) {
	if len(g.blocks) > 0 {
		if g.pending != nil && g.gaps == nil {
			g.gaps = make([][]line, len(g.blocks)-1, cap(g.blocks))
		}
		if g.gaps != nil {
			g.gaps = append(g.gaps, g.pending)
		}
	} else {
		g.out = append(g.out, g.pending...)
	}
	g.pending = nil
	g.blocks = append(g.blocks, b)
}

func (g *regrouper) line(l line) {
	if l.kind&kBlank != 0 {
		g.pending = append(g.pending, l)
		return
	}
	if len(g.blocks) > 0 || g.pending != nil {
		g.flush()
	}
	g.out = append(g.out, l)
}

// A keyedBlock is where a block's key is in the regrouper's keys, and the
// block's place among the blocks.
type keyedBlock struct {
	start, end, i int32
}

func (g *regrouper) flush() {
	if len(g.blocks) > 1 {
		// The key of a block is the block as the Writer will write it,
		// without blank lines, so that the next normalization sorts it the
		// same. The keys are parts of one slice of bytes, the scratch's if
		// there is one.
		var buf []byte
		var keys []keyedBlock
		if g.s != nil {
			buf, keys = g.s.keys[:0], g.s.keyed[:0]
		}
		size := 0
		for _, block := range g.blocks {
			for _, l := range block {
				if l.kind&kBlank == 0 {
					size += len(l.text) + 1
				}
			}
		}
		buf = slices.Grow(buf, size)
		keys = slices.Grow(keys, len(g.blocks))
		for i, block := range g.blocks {
			start := len(buf)
			for _, l := range block {
				if l.kind&kBlank != 0 {
					continue // the Writer drops blank lines
				}
				buf = append(buf, l.text...)
				buf = append(buf, '\n')
			}
			keys = append(keys, keyedBlock{int32(start), int32(len(buf)), int32(i)})
		}
		key := func(kb keyedBlock) []byte { return buf[kb.start:kb.end] }
		slices.SortFunc(keys, func(a, b keyedBlock) int {
			if c := bytes.Compare(key(a), key(b)); c != 0 {
				return c
			}
			return int(a.i - b.i) // stable
		})
		// With dedupe, a repeat goes, and so does the last gap (a gap
		// that is not written out whatever its place).
		n := 0
		for k, kb := range keys {
			if g.dedupe && k > 0 && bytes.Equal(key(kb), key(keys[k-1])) {
				continue
			}
			g.out = g.appendBlock(g.out, n, g.blocks[kb.i])
			n++
		}
		if g.s != nil {
			g.s.keys, g.s.keyed = buf, keys
		}
	} else {
		for k, b := range g.blocks {
			g.out = g.appendBlock(g.out, k, b)
		}
	}
	g.out = append(g.out, g.pending...)
	clear(g.blocks)
	g.blocks, g.gaps, g.pending = g.blocks[:0], nil, nil
}

// appendBlock appends to out the k-th block written out, after the gap
// before it.
func (g *regrouper) appendBlock(out []line, k int, b []line) []line {
	if k > 0 && g.gaps != nil {
		out = append(out, g.gaps[k-1]...)
	}
	return append(out, b...)
}

func (g *regrouper) result() []line {
	g.flush()
	if g.scratched {
		g.s.keep(g.out)
		g.s.blocks = g.blocks
	}
	return g.out
}
