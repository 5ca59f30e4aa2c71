package gate

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/config"
)

// capture keeps the head and the tail of a stream in fixed memory, counts
// what falls between, and passes everything on to a log. It is written by
// one goroutine and read after that goroutine is done.
type capture struct {
	head    []byte
	headMax int
	tail    []byte // ring buffer of len tailMax
	tailPos int    // where the next byte goes
	tailLen int
	total   int64
	log     io.Writer
	logErr  error
}

func newCapture(out config.Output, log io.Writer) *capture {
	return &capture{headMax: out.HeadBytes, tail: make([]byte, max(out.TailBytes, 0)), log: log}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
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
	size := len(c.tail)
	if size == 0 || len(p) == 0 {
		return n, nil
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
