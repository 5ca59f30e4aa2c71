package signature

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// maskFileLines replaces with N the line and column numbers of file
// references: after a file name's extension (calc_test.go:11, calc.c:7:29),
// an extensionless build file (Makefile:8) or a node built-in module
// (node:internal/test_runner/test:796:25). It scans for ":digit" and looks
// back for the file name; the regexp that says the same (fileLineSpec, in
// the tests) has no literal to look for and would try every position.
func maskFileLines(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+1 < len(l); i++ {
		if l[i] != ':' || !isDigit(l[i+1]) || !endsInFileName(l[:i]) {
			continue
		}
		j := i + 1
		for j < len(l) && isDigit(l[j]) {
			j++
		}
		b.WriteString(l[last:i])
		b.WriteString(":N")
		if j+1 < len(l) && l[j] == ':' && isDigit(l[j+1]) {
			for j++; j < len(l) && isDigit(l[j]); j++ {
			}
			b.WriteString(":N")
		}
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// endsInFileName reports whether s ends in a file name with an extension
// (".go", ".test.mjs"), an extensionless build file (Makefile), or a node
// built-in module ("node:internal/test_runner/test").
func endsInFileName(s string) bool {
	p := len(s)
	for p > 0 && (isWordByte(s[p-1]) || s[p-1] == '+' || s[p-1] == '-') {
		p--
	}
	if p > 0 && p < len(s) && s[p-1] == '.' && isLetter(s[p]) {
		return true
	}
	w := len(s)
	for w > 0 && isWordByte(s[w-1]) {
		w--
	}
	switch s[w:] {
	case "GNUmakefile", "Makefile", "makefile", "Dockerfile", "Containerfile", "Jenkinsfile":
		return true
	}
	m := len(s)
	for m > 0 && (isWordByte(s[m-1]) || s[m-1] == '/' || s[m-1] == '.' || s[m-1] == '-') {
		m--
	}
	return m < len(s) && strings.HasSuffix(s[:m], "node:") && (m == 5 || !isWordByte(s[m-6]))
}

// A pathMasker replaces the caller's workspace and home paths, longest first,
// where they stand as whole path prefixes.
type pathMasker struct {
	paths  []string
	tokens []string
	firsts []byte // the first bytes of the paths, each once
}

// maskFeat masks the paths in line, whose features are f, and returns the
// line and its features.
func (m *pathMasker) maskFeat(line string, f feat) (string, feat) {
	if !m.mayHold(line, f) {
		return line, f
	}
	if masked := m.mask(line); masked != line {
		return masked, features(masked)
	}
	return line, f
}

func newPathMasker(opt Options) *pathMasker {
	type pt struct{ path, token string }
	var list []pt
	all := []pt{{opt.Workdir, tokWorkdir}, {opt.Home, tokHome}}
	for _, r := range opt.Roots {
		all = append(all, pt{r, tokWorkdir})
	}
	for _, p := range all {
		if p.path == "" {
			continue
		}
		// The path is looked for in cleaned text, so it is cleaned the same
		// way; a valid UTF-8 path then never splits a character.
		clean := cleanLine(filepath.Clean(p.path))
		if !isAbsPath(clean) {
			continue // a relative path or a root would mask too much
		}
		list = append(list, pt{clean, p.token})
	}
	sort.SliceStable(list, func(i, j int) bool { return len(list[i].path) > len(list[j].path) })
	m := &pathMasker{}
	for _, p := range list {
		m.paths = append(m.paths, p.path)
		m.tokens = append(m.tokens, p.token)
		if !slices.Contains(m.firsts, p.path[0]) {
			m.firsts = append(m.firsts, p.path[0])
		}
	}
	return m
}

// isAbsPath reports whether p is an absolute path below a root: /x, \\x,
// C:\x or C:/x.
func isAbsPath(p string) bool {
	switch {
	case len(p) >= 2 && (p[0] == '/' || p[0] == '\\'):
		return true
	case len(p) >= 4 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		return true
	}
	return false
}

func (m *pathMasker) mask(line string) string {
	for k, p := range m.paths {
		if !strings.Contains(line, p) {
			continue
		}
		var b strings.Builder
		rest := line
		for {
			i := strings.Index(rest, p)
			if i < 0 {
				break
			}
			end := i + len(p)
			if (i == 0 || !isNameByte(rest[i-1])) && (end == len(rest) || !isNameByte(rest[end])) {
				b.WriteString(rest[:i])
				b.WriteString(m.tokens[k])
			} else {
				b.WriteString(rest[:end])
			}
			rest = rest[end:]
		}
		b.WriteString(rest)
		line = b.String()
	}
	return line
}

// mayHold reports whether line, whose features are f, has the first byte of
// one of the paths: most lines have none, and the features say whether a
// line has a "/", which the paths all start with but on Windows.
func (m *pathMasker) mayHold(line string, f feat) bool {
	if len(m.firsts) == 1 && m.firsts[0] == '/' {
		return f&fSlash != 0
	}
	for _, c := range m.firsts {
		if strings.IndexByte(line, c) >= 0 {
			return true
		}
	}
	return false
}

// maskTmp replaces a temporary directory and the first name in it, which
// is random, with <tmp>: /tmp/go-build123/b001 (go build), /tmp/TestFoo12/001
// (t.TempDir), /tmp/tmp.AbC (mktemp), /tmp/tmpab_12 (Python's tempfile), and
// the same under /var/tmp, /private (macOS) and macOS's /var/folders/xy/z/T.
// The directory must not continue a longer name or path: /root/tmp/x stays,
// and so do <tmp>/tmp/x and <workdir>/tmp/x (a directory named tmp in a
// masked one), which keeps normalization a fixed point.
func maskTmp(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if l[i] != '/' || i > 0 && (isWordByte(l[i-1]) || l[i-1] == '.' || l[i-1] == '~' || l[i-1] == '-') ||
			strings.HasSuffix(l[:i], tokTmp) || strings.HasSuffix(l[:i], tokWorkdir) {
			continue
		}
		n := tmpRootLen(l[i:])
		if n == 0 {
			continue
		}
		j := i + n
		for j < len(l) && !strings.ContainsRune(" \t\v\f/'\"():;,[]<>=|", rune(l[j])) {
			j++
		}
		if j == i+n {
			continue // no name in the directory
		}
		b.WriteString(l[last:i])
		b.WriteString(tokTmp)
		last = j
		i = j - 1
	}
	return spliced(&b, l, last)
}

// tmpRootLen returns the length of the temporary directory that s starts
// with, up to and including its final slash, or 0.
func tmpRootLen(s string) int {
	n := 0
	if strings.HasPrefix(s, "/private/") {
		n = len("/private")
	}
	t := s[n:]
	switch {
	case strings.HasPrefix(t, "/tmp/"):
		return n + len("/tmp/")
	case strings.HasPrefix(t, "/var/tmp/"):
		return n + len("/var/tmp/")
	case strings.HasPrefix(t, "/var/folders/"):
		k := len("/var/folders/")
		for range 2 { // two names, then T
			start := k
			for k < len(t) && t[k] != '/' && !isSpace(t[k]) {
				k++
			}
			if k == start || k == len(t) || t[k] != '/' {
				return 0
			}
			k++
		}
		if strings.HasPrefix(t[k:], "T/") {
			return n + k + len("T/")
		}
	}
	return 0
}
