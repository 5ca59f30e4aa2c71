// Package lazyre holds regular expressions compiled on their first use,
// not when the program starts: most commands never use most of them, and
// compiling them all in package initialization costs every command
// milliseconds (GODEBUG=inittrace=1 shows it).
//
// An expression anchored at the start of the text (a leading ^, without
// the m flag) is matched only against a text whose first byte can begin a
// match: the bytes it can begin with are worked out once, when it is
// compiled. Readers of long outputs try many such expressions on every
// line, and most lines begin with none of their bytes.
package lazyre

import (
	"regexp"
	"regexp/syntax"
	"sync"
	"unicode"
)

// RE is a regular expression compiled on its first use.
type RE struct {
	once sync.Once
	expr string
	re   *regexp.Regexp
	// first holds the bytes a match can begin with, for an expression
	// anchored at the start of the text; nil when any text may match.
	first *[256]bool
}

// New returns expr, to be compiled on its first use; it panics then if
// expr is not a regular expression, as regexp.MustCompile does.
func New(expr string) *RE { return &RE{expr: expr} }

// Regexp returns the compiled expression.
func (l *RE) Regexp() *regexp.Regexp {
	l.once.Do(func() {
		l.re = regexp.MustCompile(l.expr)
		l.first = firstBytes(l.expr)
	})
	return l.re
}

// cannot reports whether s cannot match: l is anchored at the start of the
// text, and s's first byte begins no match.
func (l *RE) cannot(s string) bool {
	l.Regexp()
	return l.first != nil && (s == "" || !l.first[s[0]])
}

func (l *RE) MatchString(s string) bool {
	if l.cannot(s) {
		return false
	}
	return l.re.MatchString(s)
}

func (l *RE) FindStringIndex(s string) []int {
	if l.cannot(s) {
		return nil
	}
	return l.re.FindStringIndex(s)
}

func (l *RE) FindStringSubmatch(s string) []string {
	if l.cannot(s) {
		return nil
	}
	return l.re.FindStringSubmatch(s)
}

func (l *RE) ReplaceAllString(s, repl string) string { return l.Regexp().ReplaceAllString(s, repl) }
func (l *RE) ReplaceAllStringFunc(s string, repl func(string) string) string {
	return l.Regexp().ReplaceAllStringFunc(s, repl)
}

// firstBytes returns the bytes a match of expr can begin with, when expr
// is anchored at the start of the text and cannot match the empty text
// there; nil otherwise (and for anything it does not know).
func firstBytes(expr string) *[256]bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub // "^a|^b": each branch anchored
	}
	var set [256]bool
	for _, b := range branches {
		if b.Op != syntax.OpConcat || len(b.Sub) < 2 || b.Sub[0].Op != syntax.OpBeginText {
			return nil
		}
		if empty, ok := firstOf(&syntax.Regexp{Op: syntax.OpConcat, Sub: b.Sub[1:]}, &set); !ok || empty {
			return nil
		}
	}
	return &set
}

// firstOf adds to set the bytes a match of re can begin with, and reports
// whether re can match the empty text (then what follows it can begin the
// match too); ok is false for what it does not know.
func firstOf(re *syntax.Regexp, set *[256]bool) (empty, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true, true
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true, true
		}
		addRune(set, re.Rune[0], re.Flags&syntax.FoldCase != 0)
		return false, true
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1] && r < utf8Self; r++ {
				set[r] = true
			}
			if re.Rune[i+1] >= utf8Self {
				addNonASCII(set)
			}
		}
		return false, true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		for b := range set {
			set[b] = b != '\n' || re.Op == syntax.OpAnyChar
		}
		return false, true
	case syntax.OpCapture, syntax.OpPlus:
		return firstOf(re.Sub[0], set)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := firstOf(re.Sub[0], set)
		return true, ok
	case syntax.OpRepeat:
		e, ok := firstOf(re.Sub[0], set)
		return e || re.Min == 0, ok
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if e, ok := firstOf(sub, set); !ok || !e {
				return false, ok
			}
		}
		return true, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			e, ok := firstOf(sub, set)
			if !ok {
				return false, false
			}
			empty = empty || e
		}
		return empty, true
	}
	return false, false
}

// utf8Self is the first rune that UTF-8 writes in more than one byte.
const utf8Self = 0x80

// addRune adds r's first byte, and with fold its other cases' too.
func addRune(set *[256]bool, r rune, fold bool) {
	for c := r; ; {
		if c < utf8Self {
			set[c] = true
		} else {
			addNonASCII(set)
		}
		if !fold {
			return
		}
		if c = unicode.SimpleFold(c); c == r {
			return
		}
	}
}

// addNonASCII adds every byte that can begin a rune of several bytes (and
// the invalid ones, which the matcher reads as U+FFFD).
func addNonASCII(set *[256]bool) {
	for b := utf8Self; b < 256; b++ {
		set[b] = true
	}
}
