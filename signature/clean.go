package signature

import (
	"strings"
	"unicode/utf8"
)

// cleanLine turns one line of raw output (without its "\n") into what a
// terminal would have left on screen, as plain text: a CRLF ending goes, a
// carriage-return progress line keeps only the text after its last "\r", ANSI
// escape sequences and other control characters (all but tab) are dropped,
// invalid UTF-8 becomes U+FFFD, and trailing blanks go.
func cleanLine(line string) string {
	if !needsScrub(line) {
		return trimBlanks(line) // most lines: no "\r" either
	}
	line = strings.TrimRight(line, "\r")
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	if needsScrub(line) {
		line = scrub(line)
	}
	return trimBlanks(line)
}

// needsScrub reports whether line has a control character, a non-ASCII byte
// (which may be invalid UTF-8 or a C1 control) or DEL; most lines have none.
func needsScrub(line string) bool {
	for i := 0; i < len(line); i++ {
		if c := line[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			return true
		}
	}
	return false
}

// scrub drops escape sequences and control characters.
func scrub(line string) string {
	var b strings.Builder
	b.Grow(len(line))
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == 0x1b:
			i = skipEscape(line, i)
		case c == '\t' || c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
		case c < 0x80: // C0 controls and DEL
			i++
		default:
			r, size := utf8.DecodeRuneInString(line[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.WriteRune(utf8.RuneError)
			case r >= 0x80 && r <= 0x9f: // C1 controls
			default:
				b.WriteString(line[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// skipEscape returns the index just past the escape sequence that starts with
// the ESC at line[i] (ECMA-48): CSI "ESC [ params intermediates final", string
// sequences (OSC, DCS, SOS, PM, APC) up to BEL or "ESC \" or the end of the
// line, and "ESC intermediates final" for the rest.
func skipEscape(line string, i int) int {
	i++ // ESC
	if i >= len(line) {
		return i
	}
	switch line[i] {
	case '[':
		i++
		for i < len(line) && line[i] >= 0x20 && line[i] <= 0x3f {
			i++ // parameters and intermediates
		}
		if i < len(line) && line[i] >= 0x40 && line[i] <= 0x7e {
			i++ // final byte
		}
		return i
	case ']', 'P', 'X', '^', '_':
		for i++; i < len(line); i++ {
			if line[i] == 0x07 {
				return i + 1
			}
			if line[i] == 0x1b && i+1 < len(line) && line[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	for i < len(line) && line[i] >= 0x20 && line[i] <= 0x2f {
		i++ // intermediates, as in "ESC ( B"
	}
	if i < len(line) && line[i] >= 0x30 && line[i] <= 0x7e {
		i++
	}
	return i
}

// trimBlanks returns l without trailing spaces and tabs.
func trimBlanks(l string) string {
	i := len(l)
	for i > 0 && (l[i-1] == ' ' || l[i-1] == '\t') {
		i--
	}
	return l[:i]
}
