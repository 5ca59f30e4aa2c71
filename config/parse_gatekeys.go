package config

import (
	"fmt"
	"github.com/orchestrate-dev/orchestrate/internal/suggest"
	"path"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	envName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	dimensionName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// gateReader holds one gate while parser.gate reads it, and the nodes of
// the keys whose meaning depends on other keys, for the messages.
type gateReader struct {
	p     *parser
	where string
	g     Gate

	enforcement, failFast, prerequisite, requiredNode *yaml.Node
	required                                          *bool
	autoRetrySet                                      bool
}

// key names key k of the gate in messages: by the gate's name when it has
// one, else by where it is.
func (r *gateReader) key(k string) string {
	if r.g.Name != "" {
		return fmt.Sprintf("gate %q: %s", r.g.Name, k)
	}
	return r.where + "." + k
}

// readType reads the gate's type key, returning its node (nil when unset).
func (r *gateReader) readType(fields []field) (typeNode *yaml.Node) {
	for _, f := range fields {
		if v := resolve(f.val); f.name == "type" && !isNull(v) {
			if v.Value == "parallel_review" {
				r.p.add(v.Line, "%s: %q is a seed's gate type; use type: review instead", r.key("type"), v.Value)
			} else if s, good := r.p.enum(v, r.key("type"), TypeCommand, TypeReview, TypeHuman); good {
				r.g.Type, typeNode = s, v
			}
		}
	}
	return typeNode
}

// inherit starts the gate from the preset's gate from, unless the entry
// sets another type, which replaces the preset's gate.
func (r *gateReader) inherit(from *Gate, typeNode *yaml.Node) {
	g := &r.g
	if typeNode != nil && g.Type != from.Kind() {
		g.Preset = from.Preset
		return
	}
	line, name := g.Line, g.Name
	*g = *from
	g.Line, g.Name = line, name
	// A preset sets neither; they follow from the keys as changed.
	g.Enforcement, g.AutoRetry = "", false
	g.Env = cloneMap(from.Env)
	g.Hints = append([]string(nil), from.Hints...)
	g.Dimensions = append([]Dimension(nil), from.Dimensions...)
}

// handlers returns the readers of a gate's keys.
func (r *gateReader) handlers() map[string]func(*yaml.Node) {
	p, g, key := r.p, &r.g, r.key
	return map[string]func(*yaml.Node){
		"name":        func(*yaml.Node) {},
		"type":        func(*yaml.Node) {},
		"command":     func(v *yaml.Node) { g.Command, _ = p.nonEmpty(v, key("command")) },
		"timeout":     p.setDuration(&g.Timeout, key("timeout")),
		"working_dir": func(v *yaml.Node) { g.WorkingDir = p.workingDir(v, key("working_dir")) },
		"report":      func(v *yaml.Node) { g.Report = p.reportPath(v, key("report")) },
		"env":         func(v *yaml.Node) { g.Env = p.env(v, key("env")) },
		"enforcement": func(v *yaml.Node) {
			if s, good := p.enum(v, key("enforcement"), string(Blocking), string(Advisory), string(Informational)); good {
				g.Enforcement, r.enforcement = Enforcement(s), v
			}
		},
		"required": func(v *yaml.Node) {
			if b, good := p.boolean(v, key("required")); good {
				r.required, r.requiredNode = &b, v
			}
		},
		"max_retries": func(v *yaml.Node) {
			if n, good := p.integer(v, key("max_retries"), 0, maxInt); good {
				g.MaxRetries, g.MaxRetriesSet = n, true
			}
		},
		"serial": func(v *yaml.Node) { g.Serial, _ = p.boolean(v, key("serial")) },
		"prerequisite": func(v *yaml.Node) {
			if b, good := p.boolean(v, key("prerequisite")); good {
				g.NotPrerequisite, r.prerequisite = !b, v
			}
		},
		"fail_fast": func(v *yaml.Node) {
			if b, good := p.boolean(v, key("fail_fast")); good {
				g.FailFast, r.failFast = b, v
			}
		},
		"auto_retry": func(v *yaml.Node) {
			if b, good := p.boolean(v, key("auto_retry")); good {
				g.AutoRetry, r.autoRetrySet = b, true
			}
		},
		"priority":   p.setEnum(&g.Priority, key("priority"), PriorityCritical, PriorityHigh, PriorityMedium, PriorityLow),
		"hints":      func(v *yaml.Node) { g.Hints = p.hints(v, key("hints")) },
		"prompt":     p.setNonEmpty(&g.Prompt, key("prompt")),
		"dimensions": func(v *yaml.Node) { g.Dimensions = p.dimensions(v, key("dimensions")) },
		"fail_on":    func(v *yaml.Node) { p.failOn(v, key("fail_on"), &g.FailOn) },
		"synthesis":  p.setNonEmpty(&g.Synthesis, key("synthesis")),
		"diff_base":  func(v *yaml.Node) { p.diffBase(v, key("diff_base"), &g.DiffBase) },
		"when":       func(v *yaml.Node) { p.when(v, key("when"), &g.When) },
	}
}

// failOn reads a review gate's fail_on: a priority, in either case.
func (p *parser) failOn(v *yaml.Node, key string, dst *string) {
	if p.scalar(v, key, "a priority (P0 to P3)") {
		up := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.ToUpper(v.Value), Line: v.Line}
		if s, good := p.enum(up, key, ReviewPriorities...); good {
			*dst = s
		}
	}
}

// diffBase reads a git revision, refusing what git would read as an option
// or a range.
func (p *parser) diffBase(v *yaml.Node, key string, dst *string) {
	if s, good := p.nonEmpty(v, key); good {
		if strings.HasPrefix(s, "-") || strings.Contains(s, "..") || strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			p.add(v.Line, "%s: %q is not a revision (want e.g. HEAD, main, origin/main, HEAD~3)", key, s)
			return
		}
		*dst = s
	}
}

// when reads a human gate's condition (see parseWhen).
func (p *parser) when(v *yaml.Node, key string, dst **When) {
	if s, good := p.nonEmpty(v, key); good {
		w, err := parseWhen(s)
		if err != nil {
			p.add(v.Line, "%s: %v", key, err)
			return
		}
		*dst = w
	}
}

// settleEnforcement works out the gate's enforcement from enforcement,
// required and priority, and reports the combinations that contradict one
// another.
func (r *gateReader) settleEnforcement(n *yaml.Node, kind string) {
	g, key := &r.g, r.key
	switch {
	case g.Enforcement != "" && r.required != nil:
		want := Advisory
		if *r.required {
			want = Blocking
		}
		if want != g.Enforcement {
			r.p.add(r.requiredNode.Line, "%s: required: %v contradicts enforcement: %s (on line %d); keep one",
				key("required"), *r.required, g.Enforcement, r.enforcement.Line)
		}
	case r.required != nil && *r.required:
		g.Enforcement = Blocking
	case r.required != nil:
		g.Enforcement = Advisory
	case g.Enforcement == "" && kind == TypeHuman:
		g.Enforcement = Blocking
	case g.Enforcement == "":
		g.Enforcement = enforcementForPriority(g.Priority)
	}
	if kind == TypeHuman && g.Enforcement != Blocking {
		line := n.Line
		if r.enforcement != nil {
			line = r.enforcement.Line
		} else if r.requiredNode != nil {
			line = r.requiredNode.Line
		}
		r.p.add(line, "%s: a human gate is blocking: an approval that does not block means nothing", key("enforcement"))
	}
	if r.prerequisite != nil && !g.Serial && kind != TypeHuman {
		r.p.add(r.prerequisite.Line, "%s: only a serial gate is a prerequisite of the parallel ones (add serial: true)", key("prerequisite"))
	}
	if g.FailFast && g.Enforcement != Blocking && r.failFast != nil {
		r.p.add(r.failFast.Line, "%s: only a blocking gate can stop the evaluation (this one is %s)", key("fail_fast"), g.Enforcement)
	}
}

// settleDefaults fills in what follows from the gate's type and enforcement
// when the file does not say.
func (r *gateReader) settleDefaults(kind string) {
	g := &r.g
	if !r.autoRetrySet {
		g.AutoRetry = g.Enforcement == Blocking
	}
	switch kind {
	case TypeReview:
		if g.FailOn == "" {
			g.FailOn = DefaultFailOn
		}
		fallthrough
	case TypeHuman:
		if g.DiffBase == "" {
			g.DiffBase = DefaultDiffBase
		}
	}
	if kind == TypeHuman {
		g.Timeout = 0
	}
}

// usable reports a gate without a name or a command, and says whether the
// gate has what it needs.
func (r *gateReader) usable(n *yaml.Node, kind string) bool {
	g := &r.g
	if g.Name == "" {
		r.p.add(n.Line, "%s: a gate needs a name", r.where)
	}
	if g.Command == "" && kind != TypeHuman {
		what := "a gate needs a command"
		if kind == TypeReview {
			what = "a review gate needs a command: the reviewer, which reads the diff on stdin and prints findings"
		}
		if g.Name != "" {
			r.p.add(n.Line, "gate %q: %s", g.Name, what)
		} else {
			r.p.add(n.Line, "%s: %s", r.where, what)
		}
	}
	return g.Name != "" && (g.Command != "" || kind == TypeHuman)
}

// dimensions reads a review gate's dimensions: names of built-in ones, or
// mappings {name, prompt} for others (or to change a built-in one's prompt).
func (p *parser) dimensions(v *yaml.Node, key string) []Dimension {
	if v.Kind != yaml.SequenceNode {
		p.add(v.Line, "%s: want a list of dimensions (correctness, security, …), got %s", key, describe(v))
		return nil
	}
	known := make([]string, 0, len(BuiltinDimensions))
	for _, d := range BuiltinDimensions {
		known = append(known, d.Name)
	}
	var out []Dimension
	first := map[string]int{}
	for _, e := range v.Content {
		e = resolve(e)
		var d Dimension
		var nameNode *yaml.Node
		switch e.Kind {
		case yaml.ScalarNode:
			s, ok := p.nonEmpty(e, key+" item")
			if !ok {
				continue
			}
			d.Name, nameNode = s, e
		case yaml.MappingNode:
			p.section(e, key+" item", map[string]func(*yaml.Node){
				"name": func(v *yaml.Node) {
					if s, ok := p.nonEmpty(v, key+".name"); ok {
						d.Name, nameNode = s, v
					}
				},
				"prompt": p.setNonEmpty(&d.Prompt, key+".prompt"),
			})
			if nameNode == nil {
				p.add(e.Line, "%s: a dimension needs a name", key)
				continue
			}
		default:
			p.add(e.Line, "%s: want a dimension name or {name, prompt}, got %s", key, describe(e))
			continue
		}
		if !dimensionName.MatchString(d.Name) {
			p.add(nameNode.Line, "%s: %q is not a dimension name (want lower-case letters, digits, - and _)", key, d.Name)
			continue
		}
		if d.Prompt == "" {
			bd, ok := builtinDimension(d.Name)
			if !ok {
				hint := "known: " + strings.Join(known, ", ")
				if c := suggest.Closest(d.Name, known); c != "" {
					hint = fmt.Sprintf("did you mean %q?", c)
				}
				p.add(nameNode.Line, "%s: unknown dimension %q (%s); give {name, prompt} for one of your own", key, d.Name, hint)
				continue
			}
			d = bd
		}
		if line, dup := first[d.Name]; dup {
			p.add(nameNode.Line, "%s: duplicate dimension %q (first on line %d)", key, d.Name, line)
			continue
		}
		first[d.Name] = nameNode.Line
		out = append(out, d)
	}
	if len(out) == 0 && len(v.Content) == 0 {
		p.add(v.Line, "%s: an empty list: leave dimensions out for one reviewer", key)
	}
	return out
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// workingDir reads a directory relative to the repository root that stays inside it.
func (p *parser) workingDir(v *yaml.Node, key string) string {
	s, ok := p.nonEmpty(v, key)
	if !ok {
		return ""
	}
	slashed := strings.ReplaceAll(s, `\`, "/")
	clean := path.Clean(slashed)
	if path.IsAbs(slashed) || clean == ".." || strings.HasPrefix(clean, "../") {
		p.add(v.Line, "%s: %q is outside the repository (want a path relative to its root)", key, s)
		return ""
	}
	return s
}

// reportPath reads the file a gate writes its test report to: a file
// relative to the gate's working directory, inside the repository.
func (p *parser) reportPath(v *yaml.Node, key string) string {
	s, ok := p.nonEmpty(v, key)
	if !ok {
		return ""
	}
	slashed := strings.ReplaceAll(s, `\`, "/")
	clean := path.Clean(slashed)
	switch {
	case path.IsAbs(slashed) || clean == ".." || strings.HasPrefix(clean, "../"):
		p.add(v.Line, "%s: %q is outside the repository (want a file relative to the gate's working_dir)", key, s)
		return ""
	case clean == "." || strings.HasSuffix(slashed, "/"):
		p.add(v.Line, "%s: %q is a directory (want the report's file: report.xml, test.json)", key, s)
		return ""
	}
	return s
}

func (p *parser) env(v *yaml.Node, key string) map[string]string {
	if v.Kind != yaml.MappingNode {
		p.add(v.Line, "%s: want a mapping of variables, got %s", key, describe(v))
		return nil
	}
	env := map[string]string{}
	for _, f := range p.fields(v) {
		if !envName.MatchString(f.name) {
			p.add(f.key.Line, "%s: %q is not a valid variable name", key, f.name)
			continue
		}
		val := resolve(f.val)
		switch {
		case isNull(val):
			env[f.name] = ""
		case val.Kind == yaml.ScalarNode:
			env[f.name] = val.Value
		default:
			p.add(val.Line, "%s.%s: want a string, got %s", key, f.name, describe(val))
		}
	}
	return env
}

func (p *parser) hints(v *yaml.Node, key string) []string {
	if v.Kind != yaml.SequenceNode {
		p.add(v.Line, "%s: want a list of strings, got %s", key, describe(v))
		return nil
	}
	var hints []string
	for _, e := range v.Content {
		e = resolve(e)
		if s, ok := p.nonEmpty(e, key+" item"); ok {
			hints = append(hints, s)
		}
	}
	return hints
}
