// Package textclean makes text safe to write into the queue, a prompt or a
// terminal: valid UTF-8, no terminal escape sequences, and no control
// character but tab and newline, the others made visible.
package textclean

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns s as text: "\r\n" becomes "\n"; a line with carriage returns
// keeps what a terminal would show, the text after the last one; ANSI
// escape sequences (CSI, OSC and the other string sequences, two-byte
// escapes) are dropped; every other control character but tab and newline
// (C0, DEL, C1) is written as \xNN (C1 as \u0080 to \u009f); invalid UTF-8
// becomes U+FFFD. Clean text comes back unchanged, without a copy.
func Text(s string) string {
	if Clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		l, rest, nl := strings.Cut(s, "\n")
		s = rest
		l = strings.TrimSuffix(l, "\r")
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		writeLine(&b, l)
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Line returns s as one line of text: Text, with each newline and tab
// written as a space.
func Line(s string) string {
	s = Text(s)
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(s)
}

// Clean reports whether s is clean text already: valid UTF-8 with no
// control character but tab and newline.
func Clean(s string) bool {
	_, _, bad := Problem(s)
	return !bad
}

// Problem returns the first byte in s that Clean rejects, described for a
// person ("NUL byte", "control byte 0x1b", "invalid UTF-8"), and its
// offset; ok is false when s is clean.
func Problem(s string) (what string, offset int, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0:
			return "NUL byte", i, true
		case c < 0x20 && c != '\t' && c != '\n' || c == 0x7f:
			return fmt.Sprintf("control byte 0x%02x", c), i, true
		case c < 0x80:
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return "invalid UTF-8", i, true
		}
		if r >= 0x80 && r <= 0x9f {
			return fmt.Sprintf("control character U+%04X", r), i, true
		}
		i += size
	}
	return "", 0, false
}

func writeLine(b *strings.Builder, l string) {
	for i := 0; i < len(l); {
		c := l[i]
		switch {
		case c == 0x1b:
			i = skipEscape(l, i)
		case c == '\t' || c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
		case c < 0x80:
			fmt.Fprintf(b, `\x%02x`, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(l[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteRune(utf8.RuneError)
			case r >= 0x80 && r <= 0x9f:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				b.WriteString(l[i : i+size])
			}
			i += size
		}
	}
}

// skipEscape returns the index just past the escape sequence that starts with
// the ESC at l[i] (ECMA-48): CSI "ESC [ params intermediates final", string
// sequences (OSC, DCS, SOS, PM, APC) up to BEL or "ESC \" or the end of the
// line, and "ESC intermediates final" for the rest.
func skipEscape(l string, i int) int {
	i++ // ESC
	if i >= len(l) {
		return i
	}
	switch l[i] {
	case '[':
		i++
		for i < len(l) && l[i] >= 0x20 && l[i] <= 0x3f {
			i++
		}
		if i < len(l) && l[i] >= 0x40 && l[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i++; i < len(l); i++ {
			if l[i] == 0x07 {
				return i + 1
			}
			if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	for i < len(l) && l[i] >= 0x20 && l[i] <= 0x2f {
		i++
	}
	if i < len(l) && l[i] >= 0x30 && l[i] <= 0x7e {
		i++
	}
	return i
}
