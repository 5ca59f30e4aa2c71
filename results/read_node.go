package results

import (
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"github.com/orchestrate-dev/orchestrate/signature"
)

var (
	// TAP: "# Subtest: name", "not ok 3 - name", "ok 2 - name # SKIP".
	reTAPResult = lazyre.New(`^( *)(not ok|ok) \d+ - (.*?)(?: # (?i:skip|todo)\b.*)?$`)
	// The YAML block's "location: '/abs/test/a.test.js:4:1'".
	reTAPLocation = lazyre.New(`^ *location: '(.+?):\d+:\d+'$`)
	// The spec reporter's failing tests: "test at test/a.test.js:4:1" and
	// "✖ name (1.2ms)".
	reSpecAt   = lazyre.New(`^test at (.+?):\d+:\d+$`)
	reSpecFail = lazyre.New(`^✖ (.+?) \([\d.]+m?s\)$`)
)

// node reads node --test's output, TAP and spec: a unit is "FILE::name"
// (the test's own name, FILE relative to the runner's directory), or the
// name alone when the output does not say the file. A suite that failed
// because its tests did is not a unit of its own.
type node struct {
	u    *units
	opt  signature.Options
	seen bool
	// TAP: the result whose YAML block is being read.
	result   string // "ok" or "not ok"; "" when none
	name     string
	yaml     boundedText
	location string
	subtests bool // failureType: 'subtestsFailed'
	// spec: the failing tests' section.
	failing bool
	file    string
	cur     *boundedText
}

func newNode(opt signature.Options) *node { return &node{u: newUnits(), opt: opt} }

func (n *node) runner() string   { return "node" }
func (n *node) recognized() bool { return n.seen }

func (n *node) line(l string) {
	switch {
	case l == "TAP version 13", strings.HasPrefix(l, "ℹ tests "):
		n.seen = true
		return
	case l == "✖ failing tests:":
		n.seen, n.failing = true, true
		return
	case n.failing:
		n.specLine(l)
		return
	}
	if m := tapResult(l); m != nil {
		n.endResult()
		n.result, n.name = m[2], m[3]
		n.yaml.add(m[2] + " - " + m[3])
		return
	}
	if n.result == "" {
		return
	}
	t := strings.TrimSpace(l)
	switch {
	case t == "...":
		n.endResult()
	case strings.HasPrefix(t, "duration_ms:"), t == "---":
	case t == "failureType: 'subtestsFailed'":
		n.subtests = true
	default:
		if m := reTAPLocation.FindStringSubmatch(l); m != nil {
			n.location = m[1]
		}
		n.yaml.add(t)
	}
}

// endResult files the TAP result read.
func (n *node) endResult() {
	if n.result == "" {
		return
	}
	id := n.name
	if n.location != "" {
		id = n.relative(n.location) + "::" + n.name
	}
	switch {
	case n.result == "ok":
		if n.location != "" { // node's TAP says where only failures are
			n.u.pass(id)
		}
	case !n.subtests:
		if b, fresh := n.u.fail(id); fresh {
			b.add(n.yaml.String())
		}
	}
	n.result, n.name, n.location, n.subtests, n.yaml = "", "", "", false, boundedText{}
}

func (n *node) relative(path string) string { return relative(n.opt, path) }

// relative returns a file's path relative to the deepest of the
// directories opt names that holds it; the path as it is in none.
func relative(opt signature.Options, path string) string {
	best := ""
	for _, root := range append([]string{opt.Workdir}, opt.Roots...) {
		if root != "" && strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/") && len(root) > len(best) {
			best = root
		}
	}
	if best == "" {
		return path
	}
	rel, err := filepath.Rel(best, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// specLine reads a line of the spec reporter's failing tests.
func (n *node) specLine(l string) {
	if m := matchIf(strings.HasPrefix(l, "test at "), reSpecAt, l); m != nil {
		n.file, n.cur = m[1], nil
		return
	}
	if m := reSpecFail.FindStringSubmatch(l); m != nil {
		id := m[1]
		if n.file != "" {
			id = n.relative(n.file) + "::" + id
		}
		n.cur = nil
		if b, fresh := n.u.fail(id); fresh {
			n.cur = b
			b.add(l)
		}
		return
	}
	if n.cur != nil {
		n.cur.add(l)
	}
}

func (n *node) finish() *units {
	n.endResult()
	return n.u
}

// tapResult is reTAPResult's match of l, tried only on a line that begins
// (after its indent) with "ok " or "not ok ".
func tapResult(l string) []string {
	if t := strings.TrimLeft(l, " "); !strings.HasPrefix(t, "ok ") && !strings.HasPrefix(t, "not ok ") {
		return nil
	}
	return reTAPResult.FindStringSubmatch(l)
}
