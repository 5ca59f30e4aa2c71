// Package signature identifies "the same failure" across runs: it hashes a
// failure's exit class with its output after normalization.
//
// Normalization masks only what is known to vary between two runs of one
// failure, and never a bare number: "got 3 want 4" and "got 5 want 4" are
// progress, and hash differently. Line by line, it
//
//   - keeps what a terminal would show: CRLF becomes LF, a carriage-return
//     progress line keeps the text after its last "\r", ANSI escape
//     sequences and other control characters go, invalid UTF-8 becomes U+FFFD;
//   - masks times and dates (<time>, <date>), measured durations (<dur>) and
//     throughputs (<rate>);
//   - masks Options.Workdir and Options.Roots (<workdir>), Options.Home (~) and temporary
//     directories with the random name in them (<tmp>); a Go stack's frame
//     gives its checkout's root too ("github.com/x/y/pkg.F(...)" at
//     "/abs/co/pkg/f.go": /abs/co, roots.go), masked as <workdir>;
//   - masks PIDs (<pid>), ephemeral ports (<port>), addresses (<addr>),
//     stack-frame PC offsets (+<off>) and Go frame arguments ((...)),
//     UUIDs (<uuid>), long hex IDs (<hex>), goroutine IDs (N);
//   - masks the line and column numbers of file references (N), keeping
//     the file name;
//   - masks syslog's "name[pid]:", and a service's "<time> name[pid]",
//     in its first three fields, whatever run of spaces and tabs
//     separates them (<pid>), the random part of directory names that mktemp and build
//     tools make outside the temporary directory, of mixed case or of
//     capitals and digits (<rand>),
//     Rust's thread IDs (<tid>), pytest-xdist's workers, tsc's "(line,col)"
//     and eslint's "line:col" and its column padding;
//   - masks the times at the end of vitest's test and file lines and in
//     its Duration line;
//   - keeps of a test runner's counts only those of failures: pytest's and
//     cargo's summaries lose "N passed", node's its test and pass counts,
//     pytest its collected count and its progress lines; go test -json
//     becomes the output it carries;
//
// and then drops the lines of passing tests and blank lines, and sorts
// independent failure blocks (go test, Python's unittest, pytest, node
// --test in TAP and spec, cargo test, data race reports), so that test order
// and parallelism do not matter.
//
// Every rule comes from real output of real tools, kept in testdata/corpus
// with the scripts that made it (gen.sh to gen6.sh), and testdata/pairs.txt says which captures
// are one failure and which are not. The rules never look across a line but
// to find blocks, and the cost is linear in the size of the output: a
// Writer normalizes a stream window by window, in bounded memory. Version
// names the rules: change a rule, change Version.
//
// All of its exported names are API: Of, Writer, Class and ClassOf,
// Options, Empty, Version and the limits. The module is at v0: a change of
// the rules changes Version, never the meaning of an old signature.
package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"hash/maphash"
	"io"
	"strings"
)

// Version names the normalization rules and the hash layout. It is the first
// part of every signature's header, so that signatures made by other rules
// never compare equal by accident.
const Version = "sig-v3"

// Class is the exit class of a failure, part of the signature's header.
type Class string

// The exit classes.
const (
	Fail         Class = "fail"         // an ordinary failure
	NonRetryable Class = "nonretryable" // exit 126/127: command not found or not executable
	Infra        Class = "infra"        // a timeout or a kill by a signal (exit 124, or 128+N, or negative)
)

// maxSignal is the highest signal number (Linux's SIGRTMAX); 128+N beyond it
// is an ordinary exit code (255 is often exit(-1)).
const maxSignal = 64

// ClassOf maps an exit code to its class:
//
//	126, 127             NonRetryable (the shell could not execute or find the command)
//	124                  Infra (timeout(1) and the gate's own timeout)
//	129 to 192 (128+N)   Infra (killed by signal N, as a shell reports it)
//	negative             Infra (Go's ProcessState.ExitCode for a signalled process)
//	anything else        Fail, including 0, 1, 2, 125 and 255
func ClassOf(exitCode int) Class {
	switch {
	case exitCode == 126 || exitCode == 127:
		return NonRetryable
	case exitCode == 124, exitCode < 0, exitCode > 128 && exitCode <= 128+maxSignal:
		return Infra
	}
	return Fail
}

// Options names the paths that vary from one machine or checkout to another.
// The zero value is fine: temporary directories are masked without help.
type Options struct {
	// Workdir is the repository root or working directory of the command,
	// an absolute path; it is masked as <workdir>.
	Workdir string
	// Roots are more checkouts of the same code, absolute paths, each
	// masked as <workdir> as Workdir is: a gate's working directory, the
	// linked worktrees of the repository, the roots given to signature
	// --root. The same failure in two checkouts is one signature. A Go
	// stack names its checkout's root itself (see findRoot): a root found
	// in the output is masked too, unless it is, holds or lies in one of
	// these or the home directory.
	Roots []string
	// Home is the user's home directory, an absolute path; it is masked as ~.
	Home string
}

// Of normalizes output and returns both its signature and the normalized
// text: everything that varies between runs masked, the lines of passing
// tests dropped and independent failure blocks sorted, the text that is
// hashed and what "signature --explain" prints. Lines end in "\n" (never
// "\r\n") and blank lines go: where a tool's progress output ends moves
// them from run to run. The text is "" when nothing is left (see Empty). An
// empty class counts as Fail (see Digest.Signature).
func Of(output []byte, class Class, opt Options) (sig string, normalized string) {
	var b strings.Builder
	w := NewWriter(opt)
	w.Explain(&b)
	w.Write(output)
	return w.Digest().Signature(class), b.String()
}

// Empty reports whether a normalized text holds nothing: the output was blank
// or only noise. Callers do not count an empty failure toward halting.
func Empty(normalized string) bool {
	return strings.TrimSpace(normalized) == ""
}

// Limits of the streaming normalization, which keep its memory bounded
// whatever the size of the output.
const (
	// MaxLine is the longest line normalized as one: a longer run of bytes
	// without a newline is cut into lines of MaxLine bytes.
	MaxLine = 64 << 10
	// Window is how much text the passes over several lines (dropping
	// passing tests, sorting failure blocks) see at once. An output longer
	// than that is normalized window by window: blocks are sorted within a
	// window, which ends at the first line after Window bytes of normalized
	// text that starts no block (or at twice Window bytes, whatever the
	// line, or after four times Window bytes of output).
	Window = 1 << 20
	// KeepNormalized is how much of the normalized text a Digest keeps.
	KeepNormalized = 1 << 20
)

// The Writer keeps the lines it normalized last in a direct-mapped cache:
// output repeats itself (stack frames, warnings, log lines), and a line seen
// again is not normalized again. The cache starts small and grows, up to
// cacheSize entries, as lines miss it: most outputs are a few lines.
const (
	cacheSize  = 16384
	cacheStart = 64
	maxCached  = 512 // bytes: longer lines are not cached
)

var cacheSeed = maphash.MakeSeed()

type cacheEntry struct {
	raw  string
	line line
	ok   bool
}

// A lineCache holds the hash of each entry's line apart from the entries:
// most lines of output that does not repeat miss, and a miss then reads a
// hash, not the entry and the text of the line it holds.
type lineCache struct {
	hashes  []uint64     // a power of two long
	entries []cacheEntry // as long
	misses  int          // since the cache last grew
}

// newLineCache returns a cache of n entries.
func newLineCache(n int) *lineCache {
	return &lineCache{hashes: make([]uint64, n), entries: make([]cacheEntry, n)}
}

// A Writer normalizes an output as it is written, in bounded memory, and
// hashes the normalized text: write the output to it, then call Digest once.
// Of is a Writer over one slice; a gate's output is
// written to one as it runs, so that the whole output is signed, not only
// the excerpt kept in memory.
type Writer struct {
	opt     Options
	paths   *pathMasker
	found   []string // the checkouts' roots found in the output (see findRoot)
	frame   []byte   // the last line, if it may be a Go stack frame's function line
	partial []byte   // the start of a line whose "\n" has not come yet
	lines   []line   // the current window
	out     []byte   // the current window, normalized
	size    int      // bytes of text in lines
	rawSize int      // bytes of output the lines came from
	h       hash.Hash
	explain io.Writer
	keep    strings.Builder // the first KeepNormalized bytes of the normalized text
	cut     bool            // normalized text went beyond keep
	started bool            // a line was written out
	total   int64
	done    bool
	digest  Digest
	cache   *lineCache
	scratch scratch // for the passes over a window
}

// NewWriter returns a Writer for an output from a command run with opt.
func NewWriter(opt Options) *Writer {
	return &Writer{opt: opt, paths: newPathMasker(opt), h: sha256.New(), cache: newLineCache(cacheStart)}
}

// Explain makes the Writer copy the normalized text to out as it goes, all
// of it (a Digest keeps only its start). Call it before the first Write.
func (w *Writer) Explain(out io.Writer) { w.explain = out }

// Write normalizes p. It never fails.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.partial) > 0 {
				// Fill the line started before up to MaxLine.
				k := min(MaxLine-len(w.partial), len(p))
				w.partial = append(w.partial, p[:k]...)
				p = p[k:]
				if len(w.partial) < MaxLine {
					break
				}
				w.addLine(w.partial)
				w.partial = w.partial[:0]
			}
			for len(p) >= MaxLine {
				w.addLine(p[:MaxLine])
				p = p[MaxLine:]
			}
			w.partial = append(w.partial, p...)
			break
		}
		if len(w.partial) > 0 {
			w.partial = append(w.partial, p[:i]...)
			w.addRaw(w.partial)
			w.partial = w.partial[:0]
		} else {
			w.addRaw(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

// addRaw adds one line of output, cut into lines of MaxLine bytes.
func (w *Writer) addRaw(raw []byte) {
	for len(raw) > MaxLine {
		w.addLine(raw[:MaxLine])
		raw = raw[MaxLine:]
	}
	w.addLine(raw)
}

func (w *Writer) addLine(raw []byte) {
	if len(raw) > 0 && raw[0] == '{' {
		if lines, ok := goJSONLine(raw); ok {
			for _, text := range lines {
				w.addText(text)
			}
			return
		}
	}
	w.addOne(raw)
}

// addText adds a line of text that stood for a line of output.
func (w *Writer) addText(text string) {
	if len(text) > MaxLine {
		text = text[:MaxLine]
	}
	w.addOne([]byte(text))
}

func (w *Writer) addOne(raw []byte) {
	if len(w.frame) > 0 && len(raw) > 1 && raw[0] == '\t' && raw[1] == '/' {
		w.findRoot(raw)
	}
	w.noteFrame(raw)
	var l line
	if len(raw) <= maxCached {
		h := maphash.Bytes(cacheSeed, raw)
		c := w.cache
		k := h & uint64(len(c.entries)-1)
		e := &c.entries[k]
		if c.hashes[k] == h && e.ok && e.raw == string(raw) {
			l = e.line
		} else {
			if c.misses++; c.misses > 2*len(c.entries) && len(c.entries) < cacheSize {
				// What the small cache held is dropped: it is a memo.
				c = newLineCache(4 * len(c.entries))
				w.cache, k = c, h&uint64(len(c.entries)-1)
				e = &c.entries[k]
			}
			r := string(raw)
			l = classify(maskLine(cleanLine(r), w.paths))
			c.hashes[k] = h
			*e = cacheEntry{raw: r, line: l, ok: true}
		}
	} else {
		l = classify(maskLine(cleanLine(string(raw)), w.paths))
		// The text may be a small part of the long line's memory (or an
		// empty string that points into it): keep only the text.
		l.text = strings.Clone(l.text)
	}
	w.lines = append(w.lines, l)
	w.size += len(l.text) + 1
	w.rawSize += len(raw) + 1
	if w.size >= Window && (l.kind&blockKinds == 0 && l.indent == 0 && l.text != "" || w.size >= 2*Window) ||
		w.rawSize >= 4*Window {
		w.flush()
	}
}

// blockKinds are the kinds of lines that may start or belong to a block that
// the passes over several lines look at as a whole.
const blockKinds = kFailHeader | kTestAt | kTAPSubtest | kTAPPoint | kYAMLStart | kYAMLEnd | kEqualsRule |
	kDashRule | kPyFail | kPyRan | kPyVerbose | kRaceRule | kRaceWarning | kGoRun | kGoEvent | kGoResult |
	kPytestHead | kPytestEnd | kFailedLine | kCargoHead | kCargoEnd

// flush applies the passes over several lines to the window and writes it
// out.
func (w *Writer) flush() {
	out := w.out[:0]
	for _, l := range structure(w.lines, &w.scratch) {
		if l.text == "" {
			continue // blank lines come and go with progress output
		}
		start := len(out)
		out = append(out, l.text...)
		out = append(out, '\n')
		w.started = true
		if !w.cut && KeepNormalized-w.keep.Len() >= len(out)-start {
			w.keep.Write(out[start:])
		} else {
			w.cut = true
		}
	}
	w.h.Write(out)
	if w.explain != nil {
		w.explain.Write(out)
	}
	w.out = out
	clear(w.lines)
	w.lines, w.size, w.rawSize = w.lines[:0], 0, 0
}

// Digest finishes the normalization and returns its result. Later calls
// return the same; writes after the first call are ignored.
func (w *Writer) Digest() Digest {
	if w.done {
		return w.digest
	}
	if len(w.partial) > 0 {
		w.addLine(w.partial)
		w.partial = nil
	}
	w.flush()
	w.done = true
	w.digest = Digest{Normalized: w.keep.String(), Cut: w.cut, Empty: !w.started, Bytes: w.total}
	w.h.Sum(w.digest.sum[:0])
	return w.digest
}

// A Digest is what normalizing an output found: the hash of its normalized
// text, and the start of that text.
type Digest struct {
	sum        [sha256.Size]byte
	Normalized string // the normalized text, its first KeepNormalized bytes at most (cut at a line)
	Cut        bool   // Normalized is only the start of the normalized text
	Empty      bool   // the normalized text is empty: blank output, or only noise
	Bytes      int64  // the size of the output
}

// Signature returns the failure signature: the hex SHA256 of a header
// naming the rules and the exit class ("sig-v3 fail\n") followed by the
// SHA256 of the normalized text. An empty class counts as Fail.
func (d Digest) Signature(class Class) string {
	if class == "" {
		class = Fail
	}
	h := sha256.New()
	h.Write([]byte(Version + " " + string(class) + "\n"))
	h.Write(d.sum[:])
	return hex.EncodeToString(h.Sum(nil))
}
