package mdpatch

// Norm folds a field name for matching: case, spaces, '-' and '_' ignored.
func Norm(name string) string {
	if isNorm(name) {
		return name
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		if !NameSep(name[i]) {
			b = append(b, Lower(name[i]))
		}
	}
	return string(b)
}

func isNorm(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; NameSep(c) || Lower(c) != c {
			return false
		}
	}
	return true
}

// SameName reports whether Norm(a) == Norm(b), without allocating.
func SameName(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && NameSep(a[i]) {
			i++
		}
		for j < len(b) && NameSep(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if Lower(a[i]) != Lower(b[j]) {
			return false
		}
		i++
		j++
	}
}

// NameSep reports whether c is left out of a name in Norm's form: a
// space, a tab, a dash or an underscore.
func NameSep(c byte) bool { return c == ' ' || c == '-' || c == '_' || c == '\t' }

// Lower is c in lower case, for an ASCII letter; c itself for any other
// byte.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
