package gate

import (
	"fmt"
	"io"
	"os"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// logCap writes a gate's log to disk with a bound: the first head bytes go
// straight to the file, the last tail bytes are kept in memory, and what
// falls between is counted. finish writes a marker line saying how much was
// left out, then the tail. A command that prints without end fills neither
// the disk nor the memory.
type logCap struct {
	f       *os.File
	head    int64 // bytes still to write straight through
	tail    []byte
	tailPos int
	tailLen int
	omitted int64
	err     error
}

// logBounds returns out's log bounds, the defaults where unset.
func logBounds(out config.Output) (head, tail int) {
	head, tail = out.LogHeadBytes, out.LogTailBytes
	if head <= 0 {
		head = config.DefaultLogHeadBytes
	}
	if tail <= 0 {
		tail = config.DefaultLogTailBytes
	}
	return head, tail
}

// createLog opens path for a gate's log: never through a symbolic link,
// and only ever a regular file.
func createLog(path string, out config.Output) (*logCap, error) {
	f, err := fsx.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	head, tail := logBounds(out)
	return &logCap{f: f, head: int64(head), tail: make([]byte, 0, min(tail, 64<<10)), tailLen: tail}, nil
}

func (l *logCap) Write(p []byte) (int, error) {
	n := len(p)
	if l.err != nil {
		return n, l.err
	}
	if l.head > 0 {
		k := int(min(int64(len(p)), l.head))
		if _, err := l.f.Write(p[:k]); err != nil {
			l.err = err
			return n, err
		}
		l.head -= int64(k)
		p = p[k:]
	}
	l.keep(p)
	return n, nil
}

// keep puts p into the tail ring, which grows up to its size as needed;
// what it pushes out is omitted.
func (l *logCap) keep(p []byte) {
	size := l.tailLen
	if size == 0 {
		l.omitted += int64(len(p))
		return
	}
	for len(p) > 0 {
		if len(l.tail) < size { // still growing: append
			k := min(size-len(l.tail), len(p))
			l.tail = append(l.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(l.tail[l.tailPos:], p)
		l.omitted += int64(k)
		p = p[k:]
		l.tailPos = (l.tailPos + k) % size
	}
}

// finish writes the marker and the tail, and closes the file.
func (l *logCap) finish() error {
	err := l.err
	if err == nil && len(l.tail) > 0 {
		if l.omitted > 0 {
			_, err = fmt.Fprintf(l.f, "\n[… orchestrate: %d bytes of output left out of this log; the first and the last are kept (output.log_head_bytes, output.log_tail_bytes) …]\n", l.omitted)
		}
		if err == nil {
			_, err = l.f.Write(l.tail[l.tailPos:])
		}
		if err == nil {
			_, err = l.f.Write(l.tail[:l.tailPos])
		}
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

var _ io.Writer = (*logCap)(nil)
