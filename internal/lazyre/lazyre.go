// Package lazyre holds regular expressions compiled on their first use,
// not when the program starts: most commands never use most of them, and
// compiling them all in package initialization costs every command
// milliseconds (GODEBUG=inittrace=1 shows it).
package lazyre

import (
	"regexp"
	"sync"
)

// RE is a regular expression compiled on its first use.
type RE struct {
	once sync.Once
	expr string
	re   *regexp.Regexp
}

// New returns expr, to be compiled on its first use; it panics then if
// expr is not a regular expression, as regexp.MustCompile does.
func New(expr string) *RE { return &RE{expr: expr} }

// Regexp returns the compiled expression.
func (l *RE) Regexp() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.expr) })
	return l.re
}

func (l *RE) MatchString(s string) bool              { return l.Regexp().MatchString(s) }
func (l *RE) FindStringIndex(s string) []int         { return l.Regexp().FindStringIndex(s) }
func (l *RE) FindStringSubmatch(s string) []string   { return l.Regexp().FindStringSubmatch(s) }
func (l *RE) ReplaceAllString(s, repl string) string { return l.Regexp().ReplaceAllString(s, repl) }
func (l *RE) ReplaceAllStringFunc(s string, repl func(string) string) string {
	return l.Regexp().ReplaceAllStringFunc(s, repl)
}
