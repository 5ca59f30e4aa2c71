package signature

import "strings"

// feat is a set of the features of a line that the rules' quick tests look
// for. features finds them all in one scan of the line, where the quick
// tests would each scan it again: most lines fail every test, and a line
// of dense test output has a digit and goes through them all.
type feat uint64

const (
	fDigit      feat = 1 << iota // a digit
	fTmp                         // "/tmp/" or "/var/folders/" (hasTmp)
	fDate                        // hasDate
	fClock                       // hasClock
	fUUID                        // hasUUIDStart
	f0x                          // "0x"
	fHex16                       // hasHexRun(l, 16)
	fColonDigit                  // hasColonDigit
	fPyFile                      // `File "`
	fShColon                     // "sh: "
	fGutter                      // " | "
	fDigitUnit                   // hasDigitUnit
	fDurationMs                  // "duration_ms"
	fPID                         // hasFoldPID
	fBracket                     // "]"
	fNodePID                     // "(node:"
	fPort                        // hasPortNumber
	fGoroutine                   // "oroutine "
	fRace                        // "ead at " or "rite at "
	fOK                          // "ok "
	fSummary                     // " failed", " error" or " passed"
	fCollected                   // "collected "
	fGw                          // "[gw"
	fThread                      // "thread '"
	fParenColon                  // "): "
	fErrWarn                     // "error" or "warning"
	fDotDot1                     // "1.."
	fSlash                       // "/"
)

// byteKinds says of each byte whether a feature may start at it (bStart),
// and whether only when the byte after it makes one of pairs (bPair): a
// letter or a space, which most bytes of a line are, is looked at no
// further unless the two start a word a feature begins with.
var byteKinds = func() (t [256]uint8) {
	for _, c := range []byte("0123456789:/-](oercs[t)dwpPF ") {
		t[c] |= bStart
	}
	for _, c := range []byte("oercstdwpPF ") {
		t[c] |= bPair
	}
	return t
}()

const (
	bStart = 1 << iota
	bPair
)

// pairs is the set of the first two bytes of the features that start at a
// byte of kind bPair, a bit for each pair c<<8|d.
var pairs = func() (t [1 << 13]uint8) {
	add := func(c, d byte) { k := uint(c)<<8 | uint(d); t[k>>3] |= 1 << (k & 7) }
	for _, p := range []string{"or", "ok", "ea", "er", "ri", "co", "sh", "th", "du", "wa", "pi", "pI", "Pi", "PI", "Fi", " |", " f", " e", " p"} {
		add(p[0], p[1])
	}
	for d := byte('0'); d <= '9'; d++ {
		add(' ', d) // a port
	}
	return t
}()

func pairStarts(c, d byte) bool {
	k := uint(c)<<8 | uint(d)
	return pairs[k>>3]&(1<<(k&7)) != 0
}

// features returns the features of l, found in one scan: at each byte that
// may start one (byteKinds, pairs), the tests of the features that can
// start there; and a run of hex digits, looked for apart. It says what the
// quick tests it stands for say (FuzzFeatures checks it against them).
func features(l string) feat {
	var f feat
	n := len(l)
	for i := 0; i < n; i++ {
		c := l[i]
		k := byteKinds[c]
		if k&bStart == 0 || k&bPair != 0 && (i+1 >= n || !pairStarts(c, l[i+1])) {
			continue
		}
		switch {
		case isDigit(c):
			f |= digitFeatures(l, i)
		case c == ' ':
			f |= spaceFeatures(l, i)
		default:
			f |= otherFeatures(l, i)
		}
	}
	if hexRun16(l) {
		f |= fHex16
	}
	return f
}

// digitFeatures are the features that start at the digit l[i].
func digitFeatures(l string, i int) feat {
	f, n, c := fDigit, len(l), l[i]
	if i+1 >= n {
		return f
	}
	d := l[i+1]
	switch {
	case c == '0' && d == 'x':
		f |= f0x
	case c == '1' && d == '.' && i+2 < n && l[i+2] == '.':
		f |= fDotDot1
	}
	if d == ' ' && i+2 < n {
		d = l[i+2]
	}
	switch d {
	case 's', 'm', 'h', 'n', 'u', 0xc2 /* µ */, 0xce /* μ */, 'B', 'k', 'K', 'M', 'G', 'T', 'P':
		f |= fDigitUnit
	}
	if i+6 < n && l[i+1] == ':' && l[i+4] == ':' && digitsAt(l, i+2, i+3, i+5, i+6) {
		f |= fClock
	}
	if i+9 < n && (l[i+4] == '-' || l[i+4] == '/') && l[i+7] == l[i+4] && digitsAt(l, i+1, i+2, i+3, i+5, i+6, i+8, i+9) {
		f |= fDate
	}
	return f
}

// digitsAt reports whether l has a digit at each of the indexes, all in it.
func digitsAt(l string, at ...int) bool {
	for _, i := range at {
		if !isDigit(l[i]) {
			return false
		}
	}
	return true
}

// spaceFeatures are the features that start at the space l[i] (pairs let
// only a space before "|", "f", "e", "p" or a digit through).
func spaceFeatures(l string, i int) feat {
	switch l[i+1] {
	case '|':
		if at(l, i, " | ") {
			return fGutter
		}
	case 'f', 'e', 'p':
		if at(l, i, " failed") || at(l, i, " error") || at(l, i, " passed") {
			return fSummary
		}
	default:
		if fivePortDigits(l, i) {
			return fPort
		}
	}
	return 0
}

// wordFeature is a feature that a word marks, where it starts.
type wordFeature struct {
	word string
	f    feat
}

// wordFeatures are the words that mark features, by their first byte.
var wordFeatures = func() (t [256][]wordFeature) {
	for _, w := range []wordFeature{
		{"/tmp/", fTmp}, {"/var/folders/", fTmp}, {`File "`, fPyFile}, {"sh: ", fShColon},
		{"duration_ms", fDurationMs}, {"(node:", fNodePID}, {"oroutine ", fGoroutine}, {"ok ", fOK},
		{"ead at ", fRace}, {"rite at ", fRace}, {"error", fErrWarn}, {"warning", fErrWarn},
		{"collected ", fCollected}, {"[gw", fGw}, {"thread '", fThread}, {"): ", fParenColon},
	} {
		t[w.word[0]] = append(t[w.word[0]], w)
	}
	return t
}()

// otherFeatures are the features that start at l[i], neither a digit nor
// a space.
func otherFeatures(l string, i int) feat {
	var f feat
	n := len(l)
	switch c := l[i]; c {
	case ':':
		if i+1 < n && isDigit(l[i+1]) {
			f |= fColonDigit
			if fivePortDigits(l, i) {
				f |= fPort
			}
		}
	case '/':
		f |= fSlash
	case '-':
		if i >= 8 && i+5 < n && l[i+5] == '-' && hasHexRun(l[i-8:i], 8) && hasHexRun(l[i+1:i+5], 4) {
			f |= fUUID
		}
	case ']':
		f |= fBracket
	case 'p', 'P':
		if i+2 < n && (l[i+1]|0x20) == 'i' && (l[i+2]|0x20) == 'd' {
			f |= fPID
		}
	}
	for _, w := range wordFeatures[l[i]] {
		if at(l, i, w.word) {
			f |= w.f
		}
	}
	return f
}

// hexRun16 reports whether l has 16 hex digits in a row: such a run has one
// at an index 15 modulo 16, where it looks.
func hexRun16(l string) bool {
	for i := 15; i < len(l); i += 16 {
		if !isHex(l[i]) {
			continue
		}
		a, b := i, i
		for a > 0 && b-a < 15 && isHex(l[a-1]) {
			a--
		}
		for b+1 < len(l) && b-a < 15 && isHex(l[b+1]) {
			b++
		}
		if b-a >= 15 {
			return true
		}
	}
	return false
}

// fivePortDigits reports whether l[i] (":" or " ") is followed by five
// digits and no sixth, as hasPortNumber looks for.
func fivePortDigits(l string, i int) bool {
	return i+5 < len(l) && isDigit(l[i+1]) && isDigit(l[i+2]) && isDigit(l[i+3]) && isDigit(l[i+4]) &&
		isDigit(l[i+5]) && (i+6 == len(l) || !isDigit(l[i+6]))
}

// at reports whether l[i:] starts with s, whose first byte is l[i]'s.
func at(l string, i int, s string) bool {
	return i+1 < len(l) && l[i+1] == s[1] && strings.HasPrefix(l[i+2:], s[2:])
}
