package problem

import (
	"errors"
	"testing"
)

func TestString(t *testing.T) {
	for _, tt := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a/config.yaml", Line: 12, Msg: "m"}, "a/config.yaml:12: m"},
		{Problem{File: "a/config.yaml", Line: 1, Msg: "m"}, "a/config.yaml:1: m"},
		{Problem{File: "a/config.yaml", Msg: "m"}, "a/config.yaml: m"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%#v.String() = %q; want %q", tt.p, got, tt.want)
		}
	}
	if got, want := (Problem{Line: 3, Msg: "m"}).Format("q.md"), "q.md:3: m"; got != want {
		t.Errorf("Format = %q; want %q", got, want)
	}
}

func TestValidationError(t *testing.T) {
	var err error = &ValidationError{Path: "q.md", Problems: []Problem{{Line: 2, Msg: "bad"}}}
	if got, want := err.Error(), "q.md:2: bad"; got != want {
		t.Errorf("one problem: Error() = %q; want %q", got, want)
	}
	err = &ValidationError{Path: "q.md", Problems: []Problem{{Line: 2, Msg: "bad"}, {Line: 3}, {Line: 4}}}
	if got, want := err.Error(), "q.md:2: bad (and 2 more; see orchestrate validate)"; got != want {
		t.Errorf("three problems: Error() = %q; want %q", got, want)
	}
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 3 {
		t.Errorf("errors.As(%v) = %v", err, verr)
	}
}
