package session

import (
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// Load reads and parses the state at path; a missing file reads as a new one.
func Load(path string) (*State, error) {
	data, _, err := fsx.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// Update applies fn to the state at path and writes the result when it
// changed (a missing file is created). The caller holds the directory's
// lock; a state with problems is refused before fn runs; fn may run again
// when the file changes under it.
func Update(path string, fn func(*State) error) error {
	return fsx.Transform(path, func(old []byte, _ bool) ([]byte, error) {
		s := Parse(old)
		if len(s.Problems) > 0 {
			return nil, &problem.ValidationError{Path: path, Problems: s.Problems}
		}
		if err := fn(s); err != nil {
			return nil, err
		}
		return s.Bytes(), nil
	})
}
