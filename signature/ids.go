package signature

import (
	"strconv"
	"strings"
)

// ephemeralPorts is where every common OS allocates ephemeral ports from
// (Linux 32768-60999, BSD, macOS and Windows 49152-65535). Lower ports are
// configured ("localhost:8080", ":5432"), stay the same from run to run, and
// tell one service from another, so they stay.
const ephemeralPorts = 32768

func maskPort(host, sep, port string) string {
	if n, err := strconv.Atoi(port); err == nil && n >= ephemeralPorts && n <= 65535 {
		return host + sep + tokPort
	}
	return host + sep + port
}

// maskHexWords masks hex words. With offsets, it masks the PC offset of a
// stack frame, which moves with any code change in the function:
// "calc_test.go:14 +0x45" and "(/tmp/x/overflow+0x10b0)" become "+<off>".
// Without, it masks addresses: 0x and six or more hex digits, a whole word
// (small values such as code=0x1 stay). The regexps that say the same are
// offsetSpec and addrSpec, in the tests.
func maskHexWords(l string, offsets bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(l); i++ {
		if l[i] != '0' || l[i+1] != 'x' {
			continue
		}
		start, min, tok := i, 6, tokAddr
		if offsets {
			if i == 0 || l[i-1] != '+' {
				continue
			}
			start, min, tok = i-1, 1, "+<off>"
		} else if i > 0 && isWordByte(l[i-1]) {
			continue
		}
		j := i + 2
		for j < len(l) && isHex(l[j]) {
			j++
		}
		if j-(i+2) < min || j < len(l) && isWordByte(l[j]) {
			i = j - 1
			continue
		}
		b.WriteString(l[last:start])
		b.WriteString(tok)
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// maskPIDWords masks the number after a word "pid" (any case) and spaces,
// "=" or ":": "pid=11827", "(pid 11098)", "PID: 42". The regexp that says
// the same is pidSpec, in the tests.
func maskPIDWords(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+3 < len(l); i++ {
		if (l[i]|0x20) != 'p' || (l[i+1]|0x20) != 'i' || (l[i+2]|0x20) != 'd' || i > 0 && isWordByte(l[i-1]) {
			continue
		}
		j := i + 3
		for j < len(l) && (l[j] == ' ' || l[j] == '=' || l[j] == ':') {
			j++
		}
		if j == i+3 {
			continue
		}
		k := j
		for k < len(l) && isDigit(l[k]) {
			k++
		}
		if k == j || k < len(l) && isWordByte(l[k]) {
			continue
		}
		b.WriteString(l[last:j])
		b.WriteString(tokPID)
		last = k
		i = k - 1
	}
	return spliced(&b, l, last)
}

// maskSyslogPID masks the process ID of a syslog-style line, "name[pid]: "
// as its first, second or third field: "sshd[1234]: Accepted",
// "<time> host sshd[1234]: Accepted" (syslog, journalctl), "<time>
// cron[77]: …". Fields are separated by runs of spaces and tabs: a level
// padded to a width ("<time> INFO  svc[20667]: …") or a tab is one
// separator. An indented line is a test's message or a stack frame, not a
// log line, and stays. Elsewhere "x[12]: " is an index, and stays; so does
// make's recursion level, "make[1]: ".
func maskSyslogPID(l string) string {
	if l == "" || isBlank(l[0]) {
		return l
	}
	start := 0
	for field := 0; field < 3 && start < len(l); field++ {
		end := start
		for end < len(l) && !isBlank(l[end]) {
			end++
		}
		if end == len(l) {
			return l
		}
		tok := l[start:end]
		// "name[pid]:", or after the line's time "name[pid]" alone: a
		// service's log line ("<time> svc[4242] ERROR …").
		colon := strings.HasSuffix(tok, "]:")
		if colon || field > 0 && strings.HasPrefix(l, tokTime) && strings.HasSuffix(tok, "]") {
			if masked, ok := maskNamePID(l, start, end, colon); ok {
				return masked
			}
		}
		for start = end; start < len(l) && isBlank(l[start]); start++ {
		}
	}
	return l
}

// maskNamePID masks the PID of the field l[start:end] if it is
// "name[pid]:" (colon) or "name[pid]", and reports whether it did.
func maskNamePID(l string, start, end int, colon bool) (string, bool) {
	tok := l[start:end]
	cut := 1
	if colon {
		cut = 2
	}
	open := strings.LastIndexByte(tok, '[')
	if open <= 0 || open+1 > len(tok)-cut {
		return l, false // "]:" alone, or "[]": no name[pid]
	}
	digits := tok[open+1 : len(tok)-cut]
	name := tok[:open]
	if digits == "" || strings.Trim(digits, "0123456789") != "" || !isSyslogName(name) ||
		name == "make" || name == "gmake" || strings.HasSuffix(name, "/make") {
		return l, false
	}
	return l[:start+open+1] + tokPID + l[end-cut:], true
}

// isBlank reports whether c separates the fields of a log line: a space
// or a tab.
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isSyslogName reports whether s names a program as syslog shows it: a
// letter, then letters, digits and ._-@/.
func isSyslogName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '.' && c != '-' && c != '@' && c != '/' {
			return false
		}
	}
	return true
}

// maskPorts masks ephemeral ports (see maskPort) after an IPv4 address,
// localhost or a bracketed IPv6 address ("127.0.0.1:45007",
// "[::1]:61000"), and in curl's "port 42413": five digits, a whole word.
// The regexps that say the same are portHostSpec and portWordSpec, in the
// tests.
func maskPorts(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+5 < len(l); i++ {
		c := l[i]
		if c != ':' && c != ' ' {
			continue
		}
		j := i + 1
		for j < len(l) && j < i+7 && isDigit(l[j]) {
			j++
		}
		if j-(i+1) != 5 || j < len(l) && isWordByte(l[j]) {
			continue
		}
		host := c == ':' && portHost(l[:i]) || c == ' ' && strings.HasSuffix(l[:i], "port") && (i == 4 || !isWordByte(l[i-5]))
		if !host {
			continue
		}
		b.WriteString(l[last : i+1])
		b.WriteString(maskPort("", "", l[i+1:j]))
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// portHost reports whether s ends in a host a port may follow: an IPv4
// address, localhost, or an IPv6 address in brackets, each a whole word.
func portHost(s string) bool {
	if strings.HasSuffix(s, "localhost") {
		return len(s) == 9 || !isWordByte(s[len(s)-10])
	}
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open < 0 {
			return false
		}
		for k := open + 1; k < len(s)-1; k++ {
			if !isHex(s[k]) && s[k] != ':' && s[k] != '.' {
				return false
			}
		}
		return true
	}
	end := len(s)
	for group := 0; group < 4; group++ {
		k := end
		for k > 0 && isDigit(s[k-1]) {
			k--
		}
		if n := end - k; n < 1 || n > 3 {
			return false
		}
		if group == 3 {
			return k == 0 || !isWordByte(s[k-1])
		}
		if k == 0 || s[k-1] != '.' {
			return false
		}
		end = k - 1
	}
	return false
}
