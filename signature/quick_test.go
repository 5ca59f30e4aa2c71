package signature

// The quick tests the rules made of a line before features: each scanned
// the line again. FuzzFeatures holds features to what they say (quickSpec).

// hasClock reports whether l has "d:dd:dd", the end of every clock the time
// rule masks.
func hasClock(l string) bool {
	for i := 0; i+6 < len(l); i++ {
		if l[i+1] == ':' && l[i+4] == ':' && isDigit(l[i]) && isDigit(l[i+2]) && isDigit(l[i+3]) &&
			isDigit(l[i+5]) && isDigit(l[i+6]) {
			return true
		}
	}
	return false
}

// hasDate reports whether l has "dddd-dd-dd" or "dddd/dd/dd".
func hasDate(l string) bool {
	for i := 0; i+9 < len(l); i++ {
		if (l[i+4] == '-' || l[i+4] == '/') && l[i+7] == l[i+4] && isDigit(l[i]) && isDigit(l[i+1]) &&
			isDigit(l[i+2]) && isDigit(l[i+3]) && isDigit(l[i+5]) && isDigit(l[i+6]) && isDigit(l[i+8]) && isDigit(l[i+9]) {
			return true
		}
	}
	return false
}

func hasColonDigit(l string) bool { return hasDigitAfter(l, ':') }

// hasDigitUnit reports whether a digit is followed, maybe after a space, by
// a byte that starts a duration or rate unit.
func hasDigitUnit(l string) bool {
	for i := 0; i+1 < len(l); i++ {
		if !isDigit(l[i]) {
			continue
		}
		c := l[i+1]
		if c == ' ' && i+2 < len(l) {
			c = l[i+2]
		}
		switch c {
		case 's', 'm', 'h', 'n', 'u', 0xc2 /* µ */, 0xce /* μ */, 'B', 'k', 'K', 'M', 'G', 'T', 'P':
			return true
		}
	}
	return false
}

func hasFoldPID(l string) bool {
	for i := 0; i+2 < len(l); i++ {
		if (l[i]|0x20) == 'p' && (l[i+1]|0x20) == 'i' && (l[i+2]|0x20) == 'd' {
			return true
		}
	}
	return false
}

// hasPortNumber reports whether l has ":ddddd" or " ddddd" (curl's "port
// 42413"), five digits and no more: where an ephemeral port can be.
func hasPortNumber(l string) bool {
	for i := 0; i+5 < len(l); i++ {
		if (l[i] == ':' || l[i] == ' ') && isDigit(l[i+1]) && isDigit(l[i+2]) && isDigit(l[i+3]) &&
			isDigit(l[i+4]) && isDigit(l[i+5]) && (i+6 == len(l) || !isDigit(l[i+6])) {
			return true
		}
	}
	return false
}

// hasUUIDStart reports whether l has eight hex digits, a dash, four hex
// digits and a dash: the start of a UUID.
func hasUUIDStart(l string) bool {
	for i := 8; i+5 < len(l); i++ {
		if l[i] != '-' || l[i+5] != '-' {
			continue
		}
		if hasHexRun(l[i-8:i], 8) && hasHexRun(l[i+1:i+5], 4) {
			return true
		}
	}
	return false
}
