package signature

import "strings"

// isNameByte reports whether c belongs to a file name. A path is masked only
// where no such byte touches it: /home/u/proj is not found in
// /home/u/project nor in /x/home/u/proj, but it is in file:///home/u/proj.
func isNameByte(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c == '~' || isAlnum(c)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isWordByte(c byte) bool { return c == '_' || isAlnum(c) }

func isAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isHex(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hasDigitDotDigit(l string) bool {
	for i := 0; i+2 < len(l); i++ {
		if l[i+1] == '.' && isDigit(l[i]) && isDigit(l[i+2]) {
			return true
		}
	}
	return false
}

func hasHexRun(l string, n int) bool {
	run := 0
	for i := 0; i < len(l); i++ {
		if isHex(l[i]) {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

// hasParenDigit reports whether l has "(" and a digit: where a duration in
// parentheses can start.
func hasParenDigit(l string) bool { return hasDigitAfter(l, '(') }

// hasSpaceDigit reports whether l has a space and a digit: where a duration
// after a word can start.
func hasSpaceDigit(l string) bool { return hasDigitAfter(l, ' ') }

// spliced ends a line rewritten into b: the rest of l after last, or l
// itself when nothing was replaced (last == 0).
func spliced(b *strings.Builder, l string, last int) string {
	if last == 0 {
		return l
	}
	b.WriteString(l[last:])
	return b.String()
}

// hasDigitAfter reports whether l has the byte c followed by a digit.
func hasDigitAfter(l string, c byte) bool {
	for i := 0; i+1 < len(l); i++ {
		if l[i] == c && isDigit(l[i+1]) {
			return true
		}
	}
	return false
}
