package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// gateSection reads gates: a list of gates, or a mapping of a preset and a
// list that changes its gates (by name) and adds to them.
func (p *parser) gateSection(v *yaml.Node, reviewCommand string) (preset string, gates []Gate) {
	if v.Kind == yaml.SequenceNode {
		return "", p.gates(v, "gates", nil)
	}
	if v.Kind != yaml.MappingNode {
		p.add(v.Line, "gates: want a list of gates, or a mapping with preset and list, got %s", describe(v))
		return "", nil
	}
	var presetNode, list *yaml.Node
	p.section(v, "gates", map[string]func(*yaml.Node){
		"preset": func(v *yaml.Node) {
			if s, ok := p.enum(v, "gates.preset", Presets...); ok {
				preset, presetNode = s, v
			}
		},
		"list": func(v *yaml.Node) { list = v },
	})
	var base []Gate
	lang := ""
	if preset != "" {
		lang = detectLanguage(p.repoDir)
		base = presetGates(preset, reviewCommand, lang)
	}
	if list != nil {
		gates = p.gates(list, "gates.list", base)
	} else {
		gates = base
	}
	for _, g := range gates {
		if g.Preset != "" && g.Line == 0 && !g.IsHuman() && g.Command == "" {
			found := "no go.mod, package.json, pyproject.toml, setup.py or Cargo.toml in the repository"
			if lang != "" {
				found = "no command known for a " + lang + " project"
			}
			p.add(presetNode.Line, "gates.preset: %s: its gate %q needs a command (%s): add {name: %s, command: …} to gates.list",
				preset, g.Name, found, g.Name)
		}
	}
	return preset, gates
}

// gates reads a list of gates. base, from a preset, holds gates that an
// entry of the same name changes instead of adding one; the result is base,
// so changed, then the other entries in order.
func (p *parser) gates(v *yaml.Node, where string, base []Gate) []Gate {
	if v.Kind != yaml.SequenceNode {
		p.add(v.Line, "%s: want a list of gates, got %s", where, describe(v))
		return base
	}
	gates := append([]Gate(nil), base...)
	inBase := map[string]int{}
	for i, g := range base {
		inBase[g.Name] = i
	}
	firstLine := map[string]int{}
	for i, item := range v.Content {
		item = resolve(item)
		if item.Kind != yaml.MappingNode {
			p.add(item.Line, "%s[%d]: want a mapping (name, command, …), got %s", where, i, describe(item))
			continue
		}
		name := p.gateName(item, fmt.Sprintf("%s[%d]", where, i), false)
		var from *Gate
		if j, ok := inBase[name]; ok && name != "" {
			from = &base[j]
		}
		g, ok := p.gate(item, fmt.Sprintf("%s[%d]", where, i), from)
		if !ok {
			continue
		}
		if line, dup := firstLine[g.Name]; dup {
			p.add(g.Line, "duplicate gate name %q (first on line %d)", g.Name, line)
			continue
		}
		firstLine[g.Name] = g.Line
		if from != nil {
			gates[inBase[g.Name]] = g
		} else {
			gates = append(gates, g)
		}
	}
	return gates
}

// gateName returns the name of the gate in mapping n, "" when it has none
// that is usable; report says whether to report what is wrong with it.
func (p *parser) gateName(n *yaml.Node, where string, report bool) string {
	for _, f := range p.fields(n) {
		if f.name != "name" {
			continue
		}
		v := resolve(f.val)
		if isNull(v) {
			return ""
		}
		if !report {
			if v.Kind == yaml.ScalarNode && !strings.ContainsAny(v.Value, "\r\n") {
				return strings.TrimSpace(v.Value)
			}
			return ""
		}
		s, good := p.nonEmpty(v, where+".name")
		if !good {
			return ""
		}
		if strings.ContainsAny(s, "\r\n") {
			p.add(v.Line, "%s.name: must be one line", where)
			return ""
		}
		return strings.TrimSpace(s)
	}
	return ""
}

// notFor says, for each key that only some gate types have, which types
// those are.
var notFor = map[string][]string{
	"command":      {TypeCommand, TypeReview},
	"timeout":      {TypeCommand, TypeReview},
	"working_dir":  {TypeCommand, TypeReview},
	"env":          {TypeCommand, TypeReview},
	"serial":       {TypeCommand, TypeReview},
	"prerequisite": {TypeCommand, TypeReview},
	"fail_fast":    {TypeCommand, TypeReview},
	"report":       {TypeCommand},
	"prompt":       {TypeReview, TypeHuman},
	"dimensions":   {TypeReview},
	"fail_on":      {TypeReview},
	"synthesis":    {TypeReview},
	"diff_base":    {TypeReview, TypeHuman},
	"when":         {TypeHuman},
}

// gate reads one gate; ok is false when it has no usable name or command.
// from, when not nil, is the preset's gate of the same name, which the
// entry changes: its keys override from's. An entry that sets another type
// replaces the preset's gate.
func (p *parser) gate(n *yaml.Node, where string, from *Gate) (g Gate, ok bool) {
	r := &gateReader{p: p, where: where, g: Gate{Line: n.Line, Timeout: DefaultGateTimeout}}
	fields := p.fields(n)
	// name and type first: messages about the other keys use the name, and
	// which keys a gate may have depends on its type.
	r.g.Name = p.gateName(n, where, true)
	typeNode := r.readType(fields)
	if from != nil {
		r.inherit(from, typeNode)
	}
	kind := r.g.Kind()
	for _, f := range fields {
		if types, limited := notFor[f.name]; limited && !slices.Contains(types, kind) {
			p.add(f.key.Line, "%s: %s", r.key(f.name), notForMessage(f.name, kind))
		}
	}
	p.sectionFields(fields, where, r.handlers())
	// Resolved after all keys are read, since they depend on one another.
	r.settleEnforcement(n, kind)
	r.settleDefaults(kind)
	return r.g, r.usable(n, kind)
}

func notForMessage(key, kind string) string {
	switch {
	case kind == TypeHuman && key == "command":
		return "a human gate runs no command: a person approves it"
	case kind == TypeHuman && key == "timeout":
		return "a human gate has no timeout: it waits for a person (human.wait says how orchestrate run waits)"
	case kind == TypeHuman:
		return "not for a human gate"
	case key == "dimensions" || key == "fail_on" || key == "synthesis":
		return "only a review gate has findings (add type: review)"
	case key == "when":
		return "only a human gate has a condition (add type: human)"
	case key == "report":
		return "only a command gate writes a test report (this one is a " + kind + " gate)"
	}
	return fmt.Sprintf("only a review or human gate has one (this one is a %s gate)", kind)
}
