package queue

import (
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// ValidationError is returned when a queue to be written has problems.
type ValidationError = problem.ValidationError

// Load reads and parses the queue at path; a missing file is an empty queue.
func Load(path string) (*Queue, error) {
	data, _, err := fsx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// Update applies fn to the queue at path and writes the result when it
// changed, atomically. The caller holds the directory's lock. A queue with
// problems is refused with a *ValidationError before fn runs. If the file
// changes under it, fn runs again on the new content, so fn must only
// change the queue and capture what it reports.
func Update(path string, fn func(*Queue) error) error {
	return fsx.Transform(path, func(old []byte, _ bool) ([]byte, error) {
		q := Parse(old)
		if err := apply(path, q, fn); err != nil {
			return nil, err
		}
		return q.result(old), nil
	})
}

// apply runs fn on q, unless q has problems: then the write is refused.
func apply(path string, q *Queue, fn func(*Queue) error) error {
	if len(q.Problems) > 0 {
		return &ValidationError{Path: path, Problems: q.Problems}
	}
	return fn(q)
}

// result is what a writer puts back: old itself when nothing changed.
func (q *Queue) result(old []byte) []byte {
	if !q.Changed() {
		return old
	}
	return q.Bytes()
}

// LoadSome is Load with ParseSome: only the issues whose text holds one of
// needles are read.
func LoadSome(path string, needles ...string) (*Queue, error) {
	data, _, err := fsx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSome(data, needles...), nil
}

// UpdateSome is Update for a writer that reads and changes only the issues
// whose text holds one of needles (see ParseSome): fn sees only those, and
// only their problems refuse the write; the rest of the file is kept byte
// for byte. A new issue is numbered from the issues read, so a writer that
// files one has its day's "ISSUE-YYYYMMDD-" among the needles. Should an
// issue changed or added have its ID in a piece not read, fn runs again on
// the whole queue, as Update runs it, which finds an ID given twice.
func UpdateSome(path string, needles []string, fn func(*Queue) error) error {
	return fsx.Transform(path, func(old []byte, _ bool) ([]byte, error) {
		q := ParseSome(old, needles...)
		if err := apply(path, q, fn); err != nil {
			return nil, err
		}
		if q.elsewhere() {
			q = Parse(old)
			if err := apply(path, q, fn); err != nil {
				return nil, err
			}
		}
		return q.result(old), nil
	})
}
