package signature

import (
	"path"
	"strings"
)

// maxFoundRoots bounds the checkouts' roots a Writer finds in an output.
const maxFoundRoots = 4

// maxFrame is the longest line kept as a Go stack frame's function line.
const maxFrame = 512

// noteFrame keeps raw, a line of output, if it may be a Go stack frame's
// function line ("github.com/x/y/pkg.Func(...)"), for the line after it;
// it forgets the line kept before.
func (w *Writer) noteFrame(raw []byte) {
	n := len(raw)
	if n > 0 && raw[n-1] == '\r' {
		n--
	}
	if n < 3 || n > maxFrame || raw[n-1] != ')' || isBlank(raw[0]) {
		w.frame = w.frame[:0]
		return
	}
	w.frame = append(w.frame[:0], raw[:n]...)
}

// findRoot looks for a checkout's root in raw, the line after a Go stack
// frame's function line: "\t/abs/checkout/pkg/file.go:12 +0x1d" after
// "github.com/x/y/pkg.Func(...)" says that /abs/checkout holds
// github.com/x/y. A root found is masked as <workdir>, as Options.Roots
// are, from its window of the output on (see addRoot).
func (w *Writer) findRoot(raw []byte) {
	if len(w.found) >= maxFoundRoots {
		return
	}
	root, ok := goFrameRoot(string(w.frame), string(raw))
	if !ok || w.knownRoot(root) {
		return
	}
	w.addRoot(root)
}

// goFrameRoot returns the directory that holds the module of a Go stack
// frame, given its function line and its file line. It strips from the
// file's directory the last elements of the function's package path that
// the directory ends with: what is left of the package path is the
// module's (or a prefix of it), and what is left of the directory its
// root. Only a module path with a dot in its first element counts (as
// "github.com/x/y" has, and the standard library's "runtime" and "time"
// have not: time.Sleep's file is in runtime's directory). A frame whose
// directory spells its whole package path (GOPATH, a vendor directory) or
// whose root is in the module cache ("@v1.2.3") gives none.
func goFrameRoot(frame, file string) (string, bool) {
	pkg := framePackage(frame)
	if first, _, _ := strings.Cut(pkg, "/"); !strings.Contains(first, ".") {
		return "", false
	}
	file = strings.TrimSuffix(file, "\r")
	end := strings.LastIndex(file, ".go:")
	if len(file) < 2 || file[0] != '\t' || file[1] != '/' || end < 0 {
		return "", false
	}
	dir := path.Dir(file[1 : end+3])
	elems := strings.Split(pkg, "/")
	for len(elems) > 0 && path.Base(dir) == elems[len(elems)-1] {
		elems = elems[:len(elems)-1]
		dir = path.Dir(dir)
	}
	if len(elems) == 0 || dir == "/" || strings.Contains(dir, "@") {
		return "", false
	}
	return dir, true
}

// framePackage returns the package path of a Go stack frame's function
// line, "" if the line is none: "github.com/x/y/pkg" of
// "github.com/x/y/pkg.(*T).Method(...)". The runtime escapes a dot in the
// path's last element as %2e; an external test package's "_test" is cut.
func framePackage(frame string) string {
	open := strings.IndexByte(frame, '(')
	if open <= 0 || strings.ContainsAny(frame[:open], " \t") {
		return ""
	}
	fn := frame[:open]
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot <= 0 {
		return ""
	}
	pkg := strings.ReplaceAll(fn[:slash+1+dot], "%2e", ".")
	return strings.TrimSuffix(pkg, "_test")
}

// knownRoot reports whether root is already masked, or is to be left: it
// is, holds or lies in the workdir, a root given or found; it is the home
// directory or holds it.
func (w *Writer) knownRoot(root string) bool {
	related := func(p string) bool { return p != "" && (inPath(root, p) || inPath(p, root)) }
	if related(w.opt.Workdir) || w.opt.Home != "" && inPath(w.opt.Home, root) {
		return true
	}
	for _, r := range w.opt.Roots {
		if related(r) {
			return true
		}
	}
	for _, r := range w.found {
		if related(r) {
			return true
		}
	}
	return false
}

// inPath reports whether p is dir or lies in it.
func inPath(p, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// addRoot masks root as <workdir> from now on: in the lines to come, and
// in the lines of the current window already normalized, where root
// stands as those lines' rules left it ("~/wt-a-<rand>"). Lines of the
// windows written out before keep it. The lines of the cache that hold
// root, normalized without it, are dropped.
func (w *Writer) addRoot(root string) {
	before := maskLine(cleanLine(root), w.paths)
	w.found = append(w.found, root)
	opt := w.opt
	opt.Roots = append(append([]string(nil), opt.Roots...), w.found...)
	w.paths = newPathMasker(opt)
	for k := range w.cache.entries {
		if e := &w.cache.entries[k]; e.ok && strings.Contains(e.raw, root) {
			*e = cacheEntry{}
		}
	}
	if !isAbsPath(before) && !strings.HasPrefix(before, tokHome+"/") && !strings.HasPrefix(before, tokTmp+"/") {
		return
	}
	old := &pathMasker{paths: []string{before}, tokens: []string{tokWorkdir}, firsts: []byte{before[0]}}
	for k, l := range w.lines {
		if !strings.Contains(l.text, before) {
			continue
		}
		text := old.mask(l.text)
		w.size += len(text) - len(l.text)
		w.lines[k] = classify(text)
	}
}
