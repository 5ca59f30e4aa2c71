package analytics

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// Event names: the values of history.csv's event column (see the package doc).
const (
	EventRunStart       = "run_start"
	EventRunEnd         = "run_end"
	EventAgent          = "agent"
	EventGate           = "gate"
	EventIssueAdd       = "issue_add"
	EventRecord         = "record"
	EventHalt           = "halt"
	EventCheck          = "check"
	EventRetryTriggered = "retry_triggered"
	EventResolve        = "resolve"
	EventCap            = "cap"
	EventSkip           = "skip"
	EventRetry          = "retry"
	EventAbort          = "abort"
	EventClaim          = "claim"   // an agent claimed an issue: detail holder=…, epoch in attempt
	EventRelease        = "release" // a claim ended: detail holder=…
	EventMerge          = "merge"   // an issue's branch merged (pass) or not (fail: conflict, gates)
)

// Outcome and detail values that the report interprets (see the package doc for all).
const (
	OutcomePass       = "pass"
	OutcomeFail       = "fail"
	OutcomeTimeout    = "timeout"
	OutcomeError      = "error"
	OutcomeSkipped    = "skipped"
	OutcomeTriggered  = "triggered"
	OutcomeCapReached = "cap_reached"
	OutcomeExhausted  = "exhausted"

	// DetailManual marks a resolve row written for a person's orchestrate issue resolve.
	DetailManual = "manual"
	// DetailAdvisory and DetailInformational mark the gate row of a gate
	// that does not block: its failure does not fail the run.
	DetailAdvisory      = "advisory"
	DetailInformational = "informational"
)

// NoRun is the run_id of a row written outside any run (orchestrate gate,
// issue add or record before the first run starts): the report counts such a
// row where it belongs (its gate, its issue) and under no run.
const NoRun = "norun"

// TimeFormat is how AppendHistory writes the time column: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Event is one row of history.csv.
type Event struct {
	Time       time.Time
	RunID      string
	Loop       int
	Event      string
	IssueID    string
	Gate       string
	Attempt    int
	Outcome    string
	ExitCode   *int // nil: no exit code (the column is empty)
	DurationMS int64
	Signature  string
	Detail     string
}

var columns = [...]string{
	"time", "run_id", "loop", "event", "issue_id", "gate",
	"attempt", "outcome", "exit_code", "duration_ms", "signature", "detail",
}

const (
	colTime = iota
	colRunID
	colLoop
	colEvent
	colIssueID
	colGate
	colAttempt
	colOutcome
	colExitCode
	colDurationMS
	colSignature
	colDetail
	numColumns
)

var headerLine = strings.Join(columns[:], ",") + "\n"

// appendMu keeps appends within one process from racing on a new file's header.
// Across processes, the caller's directory lock does that.
var appendMu sync.Mutex

// testHookWrite, when set, sees every buffer AppendHistory writes.
var testHookWrite func([]byte)

// AppendHistory appends events to the history file at path, creating it with a header
// when it is missing or empty. All rows, and the header or repair they need, go out in
// one write followed by an fsync, so a crash leaves at most one torn last line.
//
// A torn last line (no final newline) is completed, not cut: the next append closes
// a quoted field it left open and ends it with a newline. Cutting it back would drop
// the bytes that did reach the disk; completed, the row is kept in the file, and
// readers skip it as malformed unless it happens to parse (a row torn inside its
// detail reads with a shortened detail). A file torn inside its header gets the rest
// of the header.
//
// A zero Time is written as the current time. Events need a name.
func AppendHistory(path string, events ...Event) error {
	if len(events) == 0 {
		return nil
	}
	for i := range events {
		if err := checkEvent(&events[i]); err != nil {
			return fmt.Errorf("appending history to %s: event %d of %d: %w", path, i+1, len(events), err)
		}
	}
	rows, err := encodeRows(events, time.Now())
	if err != nil {
		return fmt.Errorf("appending history to %s: %w", path, err)
	}

	appendMu.Lock()
	defer appendMu.Unlock()

	_, statErr := os.Lstat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	// Never through a symbolic link: a history.csv that points at a shell's
	// rc file would get rows a shell runs.
	f, err := fsx.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("appending history: %w", err)
	}
	prefix, err := repairPrefix(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("appending history to %s: %w", path, err)
	}
	// The rows go in all the same, but a header that is not ours means the
	// page cannot be made from the file: said after the append.
	damaged := checkHeader(f, path)
	buf := append(prefix, rows...)
	if testHookWrite != nil {
		testHookWrite(buf)
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return fmt.Errorf("appending history: %w", err)
	}
	fsx.Step("appended " + path)
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("appending history: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("appending history: %w", err)
	}
	if created {
		// The new name must survive a crash as well as the rows.
		if err := fsx.SyncDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("appending history: %w", err)
		}
	}
	return damaged
}

// checkHeader returns an error naming line 1 of the history file when its
// first line is not the header orchestrate writes; nil for an empty file.
func checkHeader(f *os.File, path string) error {
	buf := make([]byte, len(headerLine))
	n, err := f.ReadAt(buf, 0)
	if n == 0 || (err != nil && !errors.Is(err, io.EOF)) {
		return nil
	}
	if string(buf[:n]) == headerLine || (n < len(headerLine) && strings.HasPrefix(headerLine, string(buf[:n]))) {
		return nil
	}
	return fmt.Errorf("%s:1: the header is not the columns orchestrate writes (%s): the rows were appended, but analytics.html cannot be made from the file; fix the first line, or move the file away to start a new one", path, strings.TrimSpace(headerLine))
}

// CheckHistory reads the history file at path through and returns what
// is wrong with it, a line each: a header that is not orchestrate's, a
// row with another number of columns, a time or a number that does not
// parse. A missing file has nothing wrong.
func CheckHistory(path string) ([]problem.Problem, error) {
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []problem.Problem
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxHistoryLine)
	line := 0
	for sc.Scan() {
		line++
		if msg := checkRow(line, sc.Text()); msg != "" {
			out = append(out, problem.Problem{File: path, Line: line, Msg: msg})
			if len(out) == 100 {
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		out = append(out, problem.Problem{File: path, Line: line + 1, Msg: fmt.Sprintf("a line longer than %d bytes: %v", maxHistoryLine, err)})
	}
	return out, nil
}

// maxHistoryLine bounds one line of history.csv as CheckHistory reads it.
const maxHistoryLine = 16 << 20

// checkRow says what is wrong with line n of the history file, or "".
func checkRow(n int, text string) string {
	if n == 1 {
		if text+"\n" != headerLine {
			return "the header is not the columns orchestrate writes (" + strings.TrimSpace(headerLine) + ")"
		}
		return ""
	}
	rec, err := csv.NewReader(strings.NewReader(text)).Read()
	switch {
	case err != nil:
		return "not a CSV row: " + err.Error()
	case len(rec) != numColumns:
		return fmt.Sprintf("%d columns, want %d", len(rec), numColumns)
	}
	if _, err := time.Parse(TimeFormat, rec[colTime]); err != nil {
		return "the time is not " + TimeFormat
	}
	return ""
}

// encodeRows renders events as CSV lines.
func encodeRows(events []Event, now time.Time) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	rec := make([]string, numColumns)
	for i := range events {
		e := &events[i]
		if e.Event == "" {
			return nil, fmt.Errorf("event %d of %d has no name", i+1, len(events))
		}
		t := e.Time
		if t.IsZero() {
			t = now
		}
		rec[colTime] = t.UTC().Format(TimeFormat)
		rec[colRunID] = oneLine(e.RunID)
		rec[colLoop] = intField(int64(e.Loop))
		rec[colEvent] = oneLine(e.Event)
		rec[colIssueID] = oneLine(e.IssueID)
		rec[colGate] = oneLine(e.Gate)
		rec[colAttempt] = intField(int64(e.Attempt))
		rec[colOutcome] = oneLine(e.Outcome)
		rec[colExitCode] = ""
		if e.ExitCode != nil {
			rec[colExitCode] = strconv.Itoa(*e.ExitCode)
		}
		rec[colDurationMS] = intField(e.DurationMS)
		rec[colSignature] = oneLine(e.Signature)
		rec[colDetail] = oneLine(e.Detail)
		if err := w.Write(rec); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

func intField(n int64) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return lineBreaks.Replace(s)
	}
	return s
}

// repairPrefix returns what must be written before new rows: the header for an empty
// file, the completion of a torn last line, or nothing.
func repairPrefix(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size == 0 {
		return []byte(headerLine), nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], size-1); err != nil {
		return nil, err
	}
	if last[0] == '\n' {
		return nil, nil
	}
	torn, whole, err := tail(f, size)
	if err != nil {
		return nil, err
	}
	if whole && strings.HasPrefix(headerLine, string(torn)) {
		return []byte(headerLine[len(torn):]), nil
	}
	var fix []byte
	// Rows are single lines, so an odd number of quotes means a quoted field is open;
	// left open, it would swallow the rows appended after it.
	if bytes.Count(torn, []byte{'"'})%2 == 1 {
		fix = append(fix, '"')
	}
	return append(fix, '\n'), nil
}

// tail returns the bytes after the last newline of a file of the given size, and
// whether that is the whole file.
func tail(f *os.File, size int64) (torn []byte, whole bool, err error) {
	const chunk = 64 << 10
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		buf := make([]byte, end-start)
		if _, err := f.ReadAt(buf, start); err != nil {
			return nil, false, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			return append(buf[i+1:], torn...), false, nil
		}
		torn = append(buf, torn...)
		end = start
	}
	return torn, true, nil
}

// rowError describes a row of history.csv that could not be read: readHistory
// skips it and tells Compute, which reports it.
type rowError struct {
	File string // the history it is in, when several are read as one
	Line int    // 1-based line of the file
	Err  error
}

// readHistory reads history.csv from r and calls fn for each row, in order. It holds
// one row at a time. Rows it cannot parse (wrong number of fields, a bad time or
// number, no event name, broken quoting) are skipped, and bad, if not nil, is
// called for each: the file is append-only and a crash can tear a row, and one bad
// row must not hide the rest; Compute reports the skipped rows. A repeated header
// row is skipped too.
//
// The Event passed to fn may be kept: its strings are not reused.
// readHistory returns an error when r fails, when the first line is not a history
// header, or when fn returns one (which it returns as is).
func readHistory(r io.Reader, fn func(Event) error, bad func(*rowError)) error {
	rr := newRowReader(r, bad)
	for {
		ev, err := rr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// rowReader reads the rows of one history, one at a time (see readHistory).
type rowReader struct {
	cr         *csv.Reader
	bad        func(*rowError)
	index      [numColumns]int // column number of each known column
	width      int             // fields in the header
	haveHeader bool
	rec        []string // the row next returned, as read: its fields
}

func newRowReader(r io.Reader, bad func(*rowError)) *rowReader {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	return &rowReader{cr: cr, bad: bad}
}

// next returns the next row that parses, io.EOF after the last; the rows
// that do not parse are passed to bad and skipped. Its error is one of
// readHistory's.
func (h *rowReader) next() (Event, error) {
	for {
		rec, err := h.cr.Read()
		if err == io.EOF {
			return Event{}, err
		}
		var perr *csv.ParseError
		if errors.As(err, &perr) {
			if !h.haveHeader {
				return Event{}, fmt.Errorf("line %d: reading history header: %w", perr.StartLine, perr.Err)
			}
			h.skip(&rowError{Line: perr.StartLine, Err: perr.Err})
			continue
		}
		if err != nil {
			return Event{}, fmt.Errorf("reading history: %w", err)
		}
		line, _ := h.cr.FieldPos(0)
		if !h.haveHeader {
			if err := parseHeader(rec, &h.index); err != nil {
				return Event{}, fmt.Errorf("line %d: %w", line, err)
			}
			h.width = len(rec)
			h.haveHeader = true
			continue
		}
		if len(rec) == h.width && rec[h.index[colTime]] == "time" && rec[h.index[colEvent]] == "event" {
			continue
		}
		ev, err := parseRow(rec, h.width, &h.index)
		if err != nil {
			h.skip(&rowError{Line: line, Err: err})
			continue
		}
		h.rec = rec
		return ev, nil
	}
}

func (h *rowReader) skip(e *rowError) {
	if h.bad != nil {
		h.bad(e)
	}
}

func parseHeader(rec []string, index *[numColumns]int) error {
	for i := range index {
		index[i] = -1
	}
	for i, name := range rec {
		name = strings.TrimPrefix(name, "\ufeff")
		for c, want := range columns {
			if name == want && index[c] < 0 {
				index[c] = i
			}
		}
	}
	for c, i := range index {
		if i < 0 {
			return fmt.Errorf("not a history header: no %q column", columns[c])
		}
	}
	return nil
}

func parseRow(rec []string, width int, index *[numColumns]int) (Event, error) {
	if len(rec) != width {
		return Event{}, fmt.Errorf("%d fields, want %d", len(rec), width)
	}
	field := func(c int) string { return rec[index[c]] }
	var ev Event
	var err error
	if ev.Time, err = time.Parse(time.RFC3339Nano, field(colTime)); err != nil {
		return Event{}, fmt.Errorf("time %q is not RFC 3339", field(colTime))
	}
	if ev.Event = field(colEvent); ev.Event == "" {
		return Event{}, errors.New("no event name")
	}
	var n int64
	if n, err = intColumn(field, colLoop); err != nil {
		return Event{}, err
	}
	ev.Loop = int(n)
	if n, err = intColumn(field, colAttempt); err != nil {
		return Event{}, err
	}
	ev.Attempt = int(n)
	if ev.DurationMS, err = intColumn(field, colDurationMS); err != nil {
		return Event{}, err
	}
	if s := field(colExitCode); s != "" {
		if n, err = intColumn(field, colExitCode); err != nil {
			return Event{}, err
		}
		code := int(n)
		ev.ExitCode = &code
	}
	ev.RunID = field(colRunID)
	ev.IssueID = field(colIssueID)
	ev.Gate = field(colGate)
	ev.Outcome = field(colOutcome)
	ev.Signature = field(colSignature)
	ev.Detail = field(colDetail)
	return ev, nil
}

func intColumn(field func(int) string, c int) (int64, error) {
	s := field(c)
	if s == "" {
		return 0, nil
	}
	bits := 32
	if c == colDurationMS {
		bits = 64
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", columns[c], s)
	}
	return n, nil
}
