package config

import (
	"fmt"
	"github.com/orchestrate-dev/orchestrate/internal/suggest"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxAliasDepth bounds alias chains, so that a crafted file cannot
// make the parser loop.
const maxAliasDepth = 16

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasDepth; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what n is, for messages: `a list`, `the string "x"`.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		// A short excerpt only: a value in the wrong place may be a secret.
		v := n.Value
		if r := []rune(v); len(r) > 24 {
			return fmt.Sprintf("a string of %d characters (%q…)", len(r), string(r[:4]))
		}
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "the boolean " + v
		case "!!int":
			return "the integer " + v
		case "!!float":
			return "the number " + v
		}
		return fmt.Sprintf("the string %q", v)
	}
	return "an unknown node"
}

// kindOf is what a node is, without its value.
func kindOf(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return "a single value"
	}
	return describe(n)
}

type field struct {
	key, val *yaml.Node
	name     string
}

// fields returns the key/value pairs of a mapping in file order, with merge
// keys (<<) expanded and overridden by the mapping's own keys, reporting
// duplicate and non-scalar keys. Each mapping is read once: anchors and merges
// may refer to one mapping many times, and a crafted file must not make that
// cost grow with each reference.
func (p *parser) fields(m *yaml.Node) []field {
	if fs, done := p.memo[m]; done {
		if fs == nil && p.busy[m] {
			p.add(m.Line, "a merge key (<<) refers to the mapping it is in")
			return nil
		}
		return fs
	}
	if p.memo == nil {
		p.memo = map[*yaml.Node][]field{}
		p.busy = map[*yaml.Node]bool{}
	}
	p.memo[m], p.busy[m] = nil, true
	defer delete(p.busy, m)

	var own, merged []field
	first := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, p.merge(v)...)
			continue
		}
		rk := resolve(k)
		if rk.Kind != yaml.ScalarNode || isNull(rk) {
			p.add(k.Line, "a key must be a name, not %s", describe(rk))
			continue
		}
		if line, dup := first[rk.Value]; dup {
			p.add(k.Line, "duplicate key %q (first on line %d)", rk.Value, line)
			continue
		}
		first[rk.Value] = k.Line
		own = append(own, field{key: k, val: v, name: rk.Value})
	}
	for _, f := range merged {
		if _, ok := first[f.name]; !ok {
			first[f.name] = f.key.Line
			own = append(own, f)
		}
	}
	if own == nil {
		own = []field{}
	}
	p.memo[m] = own
	return own
}

// merge expands the value of a merge key: a mapping or a list of mappings,
// earlier ones taking precedence.
func (p *parser) merge(v *yaml.Node) []field {
	v = resolve(v)
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, e := range v.Content {
			maps = append(maps, resolve(e))
		}
	default:
		p.add(v.Line, "a merge key (<<) wants a mapping or a list of mappings, not %s", describe(v))
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			p.add(m.Line, "a merge key (<<) wants a mapping or a list of mappings, not %s", describe(m))
			continue
		}
		for _, f := range p.fields(m) {
			if !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// section walks a mapping, calling the handler of each key and reporting
// unknown keys. where names the mapping in messages ("" at the top level).
func (p *parser) section(n *yaml.Node, where string, handlers map[string]func(v *yaml.Node)) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.add(n.Line, "%s: want a mapping, got %s", where, describe(n))
		return
	}
	p.sectionFields(p.fields(n), where, handlers)
}

func (p *parser) sectionFields(fields []field, where string, handlers map[string]func(v *yaml.Node)) {
	for _, f := range fields {
		h, ok := handlers[f.name]
		if !ok {
			p.unknownKey(f, where, handlers)
			continue
		}
		v := resolve(f.val)
		if isNull(v) {
			continue // an empty value leaves the default
		}
		h(v)
	}
}

func (p *parser) unknownKey(f field, where string, handlers map[string]func(*yaml.Node)) {
	known := make([]string, 0, len(handlers))
	for k := range handlers {
		known = append(known, k)
	}
	sort.Strings(known)
	in := ""
	if where != "" {
		in = " in " + where
	}
	if use, ok := seedKeys[f.name]; ok {
		p.add(f.key.Line, "unknown key %q%s: a seed's key; use %s instead", f.name, in, use)
		return
	}
	if s := suggest.Closest(f.name, known); s != "" {
		p.add(f.key.Line, "unknown key %q%s; did you mean %q?", f.name, in, s)
		return
	}
	p.add(f.key.Line, "unknown key %q%s (known keys: %s)", f.name, in, strings.Join(known, ", "))
}

// seedKeys names, for each key of the seeds' configurations that is not
// ours, the key to use instead.
// docs/from-the-seeds.md lists them; config's tests check each one it names.
var seedKeys = map[string]string{
	"quality_gates":            "gates",
	"executor":                 "retry (its quality_gate_max_retries is retry.max_retries)",
	"headless":                 "retry (its max_retries is retry.max_retries)",
	"quality_gate_max_retries": "retry.max_retries",
	"max_iterations":           "retry.max_retries",
	"formula":                  "gates.preset",
	"parallel_review":          "a gate with type: review",
	// Seed 002's gate definitions.
	"retry_config":      "a gate's max_retries (for max_attempts), hints (for improvement_hints) and retry.strategy: same (for preserve_context)",
	"max_attempts":      "a gate's max_retries, or retry.max_retries for every gate",
	"improvement_hints": "a gate's hints",
	"preserve_context":  "retry.strategy: same (the agent resumed in its session)",
	"enforcement_mode":  "enforcement (blocking, advisory or informational)",
	"enforcementMode":   "enforcement (blocking, advisory or informational)",
	"severity":          "priority (critical is blocking, high and medium advisory, low informational)",
	"failureAction":     "enforcement (after exhaustion: orchestrate issue retry, issue skip or abort)",
	"criteria":          "a gate's hints, or a review gate's dimensions",
}
