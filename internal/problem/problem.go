// Package problem is what the readers of the workspace's files report: one
// thing wrong in a file, at a line of it, printed the way compilers print
// it (config.yaml:12: message).
package problem

import "fmt"

// Problem is one thing wrong in a file.
type Problem struct {
	File string // "" when the reader does not know the file's name (see Format)
	Line int    // 0 when the problem has no line
	Msg  string
}

// String formats p the way compilers do: "config.yaml:12: message", or
// "config.yaml: message" when it has no line.
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Format is String for the file at path, for a problem whose reader did
// not know the file's name.
func (p Problem) Format(path string) string {
	p.File = path
	return p.String()
}

// ValidationError is returned when a file to be written has problems; its
// message names the first one as path:line: message.
type ValidationError struct {
	Path     string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	msg := e.Problems[0].Format(e.Path)
	if n := len(e.Problems) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more; see orchestrate validate)", n)
	}
	return msg
}
