package results

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// Limits of reading, which keep a gate's results in bounded memory whatever
// the size of its output.
const (
	// MaxUnits is how many failed units a report keeps; the ones past it
	// are counted in Report.More.
	MaxUnits = 1000
	// MaxPassed is how many passing tests a report lists.
	MaxPassed = 20000
	// MaxBlock is the longest failure block kept for one unit: the lines
	// past it are dropped, and the block says so in its last line.
	MaxBlock = 16 << 10
	// maxLine is the longest line read as one; the rest of a longer line
	// is dropped.
	maxLine = 4 << 10
)

// cutNote ends a block cut at MaxBlock.
const cutNote = "… the rest of this failure is cut: a block keeps at most 16 KiB …"

// A parser reads one runner's output, a line at a time.
type parser interface {
	// runner is the name of the runner it reads (Report.Runner).
	runner() string
	// line reads one line: no "\n", no "\r", no terminal escapes.
	line(l string)
	// recognized reports whether the output is this runner's.
	recognized() bool
	// finish returns what it read, once the output ended.
	finish() *units
}

// Reader reads a gate's output as test-level results as it is written,
// in bounded memory: write the whole output to it, then call Report once.
// It reads the output as each runner it knows would print it, and keeps
// the reading of the runner it recognizes.
type Reader struct {
	gate    string
	opt     signature.Options
	partial []byte
	parsers []parser
	keep    headTail // the output's head and tail: a whole failure's block
}

// NewReader returns a Reader of the output of the gate named gate;
// opt normalizes the failure blocks for their signatures.
func NewReader(gate string, opt signature.Options) *Reader {
	return &Reader{gate: gate, opt: opt, parsers: []parser{
		newGoJSON(), newGoText(), newPytest(), newJest(), newVitest(), newNode(opt), newCargo(), newLint(opt),
	}, keep: headTail{max: MaxBlock / 2}}
}

// Write reads p; it never fails.
func (r *Reader) Write(p []byte) (int, error) {
	n := len(p)
	r.keep.write(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if room := maxLine - len(r.partial); room > 0 {
				r.partial = append(r.partial, p[:min(room, len(p))]...)
			}
			return n, nil
		}
		l := p[:i]
		if len(r.partial) > 0 {
			l = append(r.partial, l[:min(len(l), max(maxLine-len(r.partial), 0))]...)
			r.partial = r.partial[:0]
		}
		r.feed(l)
		p = p[i+1:]
	}
	return n, nil
}

func (r *Reader) feed(raw []byte) {
	if len(raw) > maxLine {
		raw = raw[:maxLine]
	}
	l := cleanLine(raw)
	for _, p := range r.parsers {
		p.line(l)
	}
}

// Report returns the gate's results; failed says whether the gate failed
// (its exit status, a timeout). A gate that failed with no failure its
// runner lists, or whose runner is unknown, is Whole: its one failed unit
// is the gate, with the head and tail of its output as its block. The
// failures of a gate that passed are not failures: Failed is empty.
func (r *Reader) Report(failed bool) Report {
	return r.report(&failed)
}

// report is Report; a nil failed means that the output alone says
// whether the gate failed (see Read).
func (r *Reader) report(failed *bool) Report {
	if len(r.partial) > 0 {
		r.feed(r.partial)
		r.partial = nil
	}
	rep := Report{Gate: r.gate, Whole: true}
	var u *units
	for _, p := range r.parsers {
		if p.recognized() {
			rep.Runner, u = p.runner(), p.finish()
			break
		}
	}
	return r.build(rep, u, failed)
}

// build fills rep from what its runner's parser read (u, nil for none),
// signing each failure.
func (r *Reader) build(rep Report, u *units, failed *bool) Report {
	if u != nil {
		rep.Passed = u.passed
	}
	listed := u != nil && !u.whole && (len(u.failed) > 0 || u.more > 0)
	switch {
	case failed != nil && !*failed:
		rep.Whole = u == nil || u.whole
		return rep
	case listed:
		rep.Whole, rep.More = false, u.more
		for i := range u.failed {
			f := Failed{Unit: Unit{Gate: r.gate, ID: u.failed[i].id}, Block: u.block(i)}
			f.Signature, _ = Sign([]Failed{f}, r.opt)
			rep.Failed = append(rep.Failed, f)
		}
		return rep
	case failed == nil && u != nil && !u.whole:
		rep.Whole = false // the runner says nothing failed
		return rep
	}
	block := r.keep.String()
	if u != nil && u.wholeBlock.Len() > 0 {
		block = u.wholeBlock.String()
	}
	f := Failed{Unit: Unit{Gate: r.gate}, Block: block}
	f.Signature, _ = Sign([]Failed{f}, r.opt)
	rep.Failed = []Failed{f}
	return rep
}

// Read reads a gate's whole output as test-level results (see Reader).
// Without the gate's exit status, the output says whether it failed: a
// runner that lists no failure passed, and an output of no known runner
// is a failure of the whole gate.
func Read(gate string, output []byte, opt signature.Options) Report {
	r := NewReader(gate, opt)
	r.Write(output)
	return r.report(nil)
}

// cleanLine returns a line as a terminal shows it: the text after its
// last carriage return, without escape sequences, valid UTF-8.
func cleanLine(raw []byte) string {
	raw = bytes.TrimRight(raw, "\r")
	if i := bytes.LastIndexByte(raw, '\r'); i >= 0 {
		raw = raw[i+1:]
	}
	if bytes.IndexByte(raw, 0x1b) < 0 && utf8.Valid(raw) {
		return string(raw)
	}
	var b strings.Builder
	s := strings.ToValidUTF8(string(raw), "\uFFFD")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		// ESC [ parameters final-byte, or ESC and one byte.
		if i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		i++
	}
	return b.String()
}

// headTail keeps the first and the last max bytes of a stream.
type headTail struct {
	max     int
	head    []byte
	ring    []byte // the last bytes, a ring of len max once full
	pos     int    // where the next byte of the ring goes
	dropped bool
}

func (h *headTail) write(p []byte) {
	if room := h.max - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head = append(h.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > h.max {
		h.dropped = true
		p = p[len(p)-h.max:]
	}
	for len(p) > 0 {
		if len(h.ring) < h.max {
			take := min(h.max-len(h.ring), len(p))
			h.ring = append(h.ring, p[:take]...)
			p = p[take:]
			continue
		}
		h.dropped = true
		k := copy(h.ring[h.pos:], p)
		p = p[k:]
		h.pos = (h.pos + k) % h.max
	}
}

func (h *headTail) String() string {
	tail := append(append([]byte(nil), h.ring[h.pos:]...), h.ring[:h.pos]...)
	s := strings.ToValidUTF8(string(h.head), "")
	if h.dropped {
		s += "\n… output omitted …\n"
	}
	return s + strings.ToValidUTF8(string(tail), "")
}

// matchIf is re's match of l when ok, a cheap look at l that every match
// passes; nil when not: the readers try many expressions on each line of
// a long output, and most lines are none of them.
func matchIf(ok bool, re *lazyre.RE, l string) []string {
	if !ok {
		return nil
	}
	return re.FindStringSubmatch(l)
}
