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
//
// The file is made at the first byte of output: a gate that prints
// nothing leaves no log, which keeps a quiet gate's cost at its
// process's.
type logCap struct {
	path    string
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

// createLog is a gate's log at path, made at its first byte: never
// through a symbolic link, and only ever a regular file.
func createLog(path string, out config.Output) *logCap {
	head, tail := logBounds(out)
	return &logCap{path: path, head: int64(head), tailLen: tail}
}

// open makes the file, at the first byte written.
func (l *logCap) open() error {
	f, err := fsx.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	l.f, l.tail = f, make([]byte, 0, min(l.tailLen, 64<<10))
	return nil
}

// made reports whether the log's file was made: the gate printed.
func (l *logCap) made() bool { return l.f != nil }

func (l *logCap) Write(p []byte) (int, error) {
	n := len(p)
	if l.err != nil {
		return n, l.err
	}
	if l.f == nil {
		if n == 0 {
			return 0, nil
		}
		if l.err = l.open(); l.err != nil {
			return n, l.err
		}
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

// finish writes the marker and the tail, and closes the file, if made.
func (l *logCap) finish() error {
	if l.f == nil {
		return l.err
	}
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
