package gate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// capture keeps the head and the tail of a stream in fixed memory, counts
// what falls between, and passes everything on to a log. It signs the whole
// stream as it goes (when signing), and keeps the failure lines it sees (the
// failing tests' names and messages: failureLine) wherever they are, so that
// the feedback names them when they fall between the head and the tail. It
// is written by one goroutine and read after that goroutine is done.
type capture struct {
	sig   *signature.Writer
	marks marks
	tests *results.Reader // reads the whole stream as test-level results; nil for none

	head    []byte
	headMax int
	tail    []byte // ring buffer of len tailMax, made when the head is full
	tailMax int
	tailPos int // where the next byte goes
	tailLen int
	total   int64
	log     io.Writer
	logErr  error
}

func newCapture(out config.Output, log io.Writer) *capture {
	return &capture{headMax: out.HeadBytes, tailMax: max(out.TailBytes, 0), log: log}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if c.sig != nil {
		c.sig.Write(p)
	}
	c.marks.Write(p)
	if c.tests != nil {
		c.tests.Write(p)
	}
	if c.log != nil && c.logErr == nil && n > 0 {
		if _, err := c.log.Write(p); err != nil {
			c.logErr = err // keep capturing: the log is a copy, the result is not
		}
	}
	if room := c.headMax - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		p = p[take:]
	}
	size := c.tailMax
	if size == 0 || len(p) == 0 {
		return n, nil
	}
	if c.tail == nil {
		// Made at the first byte past the head: most gates print less
		// than the head, and a run's gates would each hold it.
		c.tail = make([]byte, size)
	}
	if len(p) > size {
		p = p[len(p)-size:]
	}
	for len(p) > 0 {
		k := copy(c.tail[c.tailPos:], p)
		p = p[k:]
		c.tailPos = (c.tailPos + k) % size
		c.tailLen = min(c.tailLen+k, size)
	}
	return n, nil
}

// signatureOptions are the paths a gate's output is normalized with: the
// repository's root (absolute), the gate's working directory in it (dir)
// and the other checkouts the caller names (Options.Roots), all one
// <workdir>, and the user's home.
func (o *Options) signatureOptions(dir string) signature.Options {
	root, err := filepath.Abs(o.RepoRoot)
	if err != nil {
		root = ""
	}
	home, _ := os.UserHomeDir()
	roots := append([]string(nil), o.Roots...)
	if abs, err := filepath.Abs(dir); err == nil && dir != "" && abs != root {
		roots = append(roots, abs)
	}
	return signature.Options{Workdir: root, Roots: roots, Home: home}
}

// signing makes c sign the stream, normalized with opt.
func (c *capture) signing(opt signature.Options) *capture {
	c.sig = signature.NewWriter(opt)
	return c
}

// digest returns what signing found, or nil when c does not sign.
func (c *capture) digest() *signature.Digest {
	if c.sig == nil {
		return nil
	}
	d := c.sig.Digest()
	return &d
}

// Marks are at most maxMarks failure lines of a stream, and the markContext
// lines after each, of at most maxMarkLine bytes each.
const (
	maxMarks    = 24
	markContext = 3
	maxMarkLine = 400
)

// marks collects failure lines as a stream is written.
type marks struct {
	lines   []string
	partial []byte
	after   int // lines still to keep after the last failure line
	count   int // failure lines kept
}

func (m *marks) Write(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if room := maxMarkLine - len(m.partial); room > 0 {
				m.partial = append(m.partial, p[:min(room, len(p))]...)
			}
			return
		}
		l := p[:i]
		if len(m.partial) > 0 {
			l = append(m.partial, p[:min(i, max(maxMarkLine-len(m.partial), 0))]...)
			m.partial = m.partial[:0]
		}
		m.line(l)
		p = p[i+1:]
	}
}

func (m *marks) line(raw []byte) {
	if len(raw) > maxMarkLine {
		raw = raw[:maxMarkLine]
	}
	if m.count < maxMarks && failureLine(cleanText(string(raw))) {
		m.lines = append(m.lines, cleanText(string(raw)))
		m.count++
		m.after = markContext
		return
	}
	if m.after > 0 {
		m.after--
		if t := cleanText(string(raw)); strings.TrimSpace(t) != "" {
			m.lines = append(m.lines, t)
		} else {
			m.after = 0
		}
	}
}

func (c *capture) tailBytes() []byte {
	if c.tailLen < len(c.tail) {
		return c.tail[:c.tailLen]
	}
	return append(append([]byte(nil), c.tail[c.tailPos:]...), c.tail[:c.tailPos]...)
}

func (c *capture) omitted() int64 {
	return c.total - int64(len(c.head)) - int64(c.tailLen)
}

// snap is how far the cut between head and tail may move to land on a line
// boundary, so that neither side shows half a line.
const snap = 256

// String returns the head and the tail; when bytes were dropped between them,
// the cut is moved to line boundaries when one is near (else to UTF-8
// boundaries) and marked with "… N bytes omitted …".
func (c *capture) String() string {
	head, tail := c.head, c.tailBytes()
	dropped := c.omitted()
	if dropped == 0 {
		return string(head) + string(tail)
	}
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 && len(head)-(i+1) <= snap {
		head = head[:i+1]
	} else {
		head = trimPartialRune(head)
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < snap {
		tail = tail[i+1:]
	} else {
		for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
			tail = tail[1:]
		}
	}
	dropped = c.total - int64(len(head)) - int64(len(tail))
	var b bytes.Buffer
	b.Grow(len(head) + len(tail) + 40)
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "… %d bytes omitted …\n", dropped)
	b.Write(tail)
	return b.String()
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// HeadTail keeps the head and the tail of a stream in bounded memory, as a
// gate's output is kept: String marks the middle it dropped.
type HeadTail struct{ c *capture }

// NewHeadTail keeps the first head bytes and the last tail bytes.
func NewHeadTail(head, tail int) *HeadTail {
	return &HeadTail{newCapture(config.Output{HeadBytes: head, TailBytes: tail}, nil)}
}

func (h *HeadTail) Write(p []byte) (int, error) { return h.c.Write(p) }

// String returns the head and the tail, and "… N bytes omitted …" between
// them when bytes were dropped.
func (h *HeadTail) String() string { return h.c.String() }
