package analytics

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// EventJudge is the history row of an attempt at one issue judged by its
// own tests against the baseline (the results where the work started):
// issue_id, outcome pass|fail, detail the counts as space-separated
// key=value pairs, "fixed=2 regressions=1" (see Judged and ParseJudged).
const EventJudge = "judge"

// Judged is what the judging of attempts counted.
type Judged struct {
	// Fixed are the tests (or findings) that failed on the baseline and
	// pass after the attempt.
	Fixed int64
	// Regressions are the tests (findings, gates) that passed on the
	// baseline and fail after the attempt.
	Regressions int64
}

// ParseJudged reads a judge row's detail. Unknown keys are ignored, so that
// a later version may count more; a known key with a malformed value is an
// error.
func ParseJudged(detail string) (Judged, error) {
	var j Judged
	for _, f := range strings.Fields(detail) {
		k, v, _ := strings.Cut(f, "=")
		var n *int64
		switch k {
		case "fixed":
			n = &j.Fixed
		case "regressions":
			n = &j.Regressions
		default:
			continue
		}
		var err error
		if *n, err = strconv.ParseInt(v, 10, 64); err != nil || *n < 0 {
			return Judged{}, fmt.Errorf("judge %s: %q is not a non-negative integer", k, v)
		}
	}
	return j, nil
}

// add counts one judge row: the tests an attempt that passed fixed (an
// attempt sent back fixed nothing that landed), and the regressions of
// every attempt, each caught before it landed.
func (j *Judged) add(ev Event) {
	got, err := ParseJudged(ev.Detail)
	if err != nil {
		return
	}
	if ev.Outcome == OutcomePass {
		j.Fixed += got.Fixed
	}
	j.Regressions += got.Regressions
}

// CountJudged reads a history and counts its judge rows (see Metrics'
// TestsFixed and Regressions): those of run, or of every run when run is
// "". Rows it cannot parse are skipped.
func CountJudged(r io.Reader, run string) (Judged, error) {
	var j Judged
	err := readHistory(r, func(ev Event) error {
		if ev.Event == EventJudge && (run == "" || ev.RunID == run) {
			j.add(ev)
		}
		return nil
	}, nil)
	return j, err
}

// onJudge counts a judge row into the Metrics.
func (c *computer) onJudge(ev Event) {
	m := &c.m
	j := Judged{Fixed: m.TestsFixed, Regressions: m.Regressions}
	j.add(ev)
	m.JudgedAttempts++
	m.TestsFixed, m.Regressions = j.Fixed, j.Regressions
}

// judgedTail is how much of the end of a history CountJudgedFile reads:
// a run's rows are its last ones.
var judgedTail int64 = 8 << 20

// CountJudgedFile is CountJudged of the history at path, reading its
// header and at most its last 8 MiB, where the rows of a run in progress
// are: status runs it on every save of the queue. A missing file has none.
func CountJudgedFile(path, run string) (Judged, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Judged{}, nil
	}
	if err != nil {
		return Judged{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Judged{}, err
	}
	if fi.Size() <= judgedTail {
		return CountJudged(f, run)
	}
	br := bufio.NewReader(io.LimitReader(f, 64<<10))
	header, err := br.ReadString('\n')
	if err != nil {
		return Judged{}, fmt.Errorf("reading the header of %s: %w", path, err)
	}
	tail := bufio.NewReader(io.NewSectionReader(f, fi.Size()-judgedTail, judgedTail))
	if _, err := tail.ReadString('\n'); err != nil { // the row cut in two
		return Judged{}, nil
	}
	return CountJudged(io.MultiReader(strings.NewReader(header), tail), run)
}
