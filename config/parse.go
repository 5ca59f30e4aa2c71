package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// ParseIn parses the content of the config file of the repository in
// repoDir; file is the name used in the problems. It reports every problem it
// finds, not only the first: unknown keys at any level, wrong types, invalid
// values, bad durations, duplicate keys and gate names, gates without a name
// or a command. The Config it returns is always non-nil, with defaults where
// the file says nothing, but only to be trusted when there are no problems.
//
// gates.preset finds the language's test and type-check commands in repoDir
// (see DefaultGates); with repoDir "" it finds none, so that a preset's tests
// gate needs its command from gates.list.
func ParseIn(file string, data []byte, repoDir string) (cfg *Config, problems []Problem) {
	p := &parser{file: file, repoDir: repoDir}
	cfg = Default()
	defer func() {
		// The YAML library is not ours; a panic in it is one more problem.
		if r := recover(); r != nil {
			problems = append(p.problems, Problem{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)})
		}
	}()

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return cfg, nil // an empty file: the defaults
		}
		p.yamlError(err)
		return cfg, p.problems
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		p.yamlError(err)
	default:
		p.add(next.Line, "a second YAML document: config.yaml holds one")
	}

	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		p.root(cfg, doc.Content[0])
	}
	return cfg, p.problems
}

type parser struct {
	file     string
	repoDir  string
	problems []Problem
	memo     map[*yaml.Node][]field // fields of each mapping read so far
	busy     map[*yaml.Node]bool    // mappings being read, to catch merge cycles
}

func (p *parser) add(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) yamlError(err error) {
	msg := err.Error()
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		p.add(line, "%s", m[2])
		return
	}
	p.add(0, "%s", strings.TrimPrefix(msg, "yaml: "))
}

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
	if s := closest(f.name, known); s != "" {
		p.add(f.key.Line, "unknown key %q%s; did you mean %q?", f.name, in, s)
		return
	}
	p.add(f.key.Line, "unknown key %q%s (known keys: %s)", f.name, in, strings.Join(known, ", "))
}

// seedKeys names, for each key of the seeds' configurations that is not
// ours, the key to use instead.
var seedKeys = map[string]string{
	"quality_gates":            "gates",
	"executor":                 "retry (its quality_gate_max_retries is retry.max_retries)",
	"headless":                 "retry (its max_retries is retry.max_retries)",
	"quality_gate_max_retries": "retry.max_retries",
	"max_iterations":           "retry.max_retries",
	"formula":                  "gates.preset",
	"parallel_review":          "a gate with type: review",
}

// closest returns the known key within a small edit distance of key, if any.
func closest(key string, known []string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		limit := 1
		if len(k) >= 5 {
			limit = 3
		}
		if d := editDistance(strings.ToLower(key), k); d <= limit && d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Scalar readers. Each reports its own problem and says whether the value is good.

func (p *parser) scalar(v *yaml.Node, key, want string) bool {
	if v.Kind != yaml.ScalarNode {
		p.add(v.Line, "%s: want %s, got %s", key, want, describe(v))
		return false
	}
	return true
}

func (p *parser) integer(v *yaml.Node, key string, lo, hi int) (int, bool) {
	if !p.scalar(v, key, "an integer") {
		return 0, false
	}
	if v.ShortTag() != "!!int" {
		p.add(v.Line, "%s: want an integer, got %s", key, describe(v))
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
	if err != nil || n < int64(lo) || n > int64(hi) {
		if hi == math.MaxInt32 {
			p.add(v.Line, "%s: %s is out of range (want at least %d)", key, v.Value, lo)
		} else {
			p.add(v.Line, "%s: %s is out of range (want %d to %d)", key, v.Value, lo, hi)
		}
		return 0, false
	}
	return int(n), true
}

func (p *parser) boolean(v *yaml.Node, key string) (bool, bool) {
	if !p.scalar(v, key, "true or false") {
		return false, false
	}
	if v.ShortTag() == "!!bool" {
		return strings.EqualFold(v.Value, "true"), true
	}
	// YAML 1.1 spellings, still common in hand-written files.
	switch strings.ToLower(v.Value) {
	case "yes", "on":
		return true, true
	case "no", "off":
		return false, true
	}
	p.add(v.Line, "%s: want true or false, got %s", key, describe(v))
	return false, false
}

func (p *parser) str(v *yaml.Node, key string) (string, bool) {
	if !p.scalar(v, key, "a string") {
		return "", false
	}
	return v.Value, true
}

// nonEmpty reads a string that must hold something, on one line.
func (p *parser) nonEmpty(v *yaml.Node, key string) (string, bool) {
	s, ok := p.str(v, key)
	if !ok {
		return "", false
	}
	if strings.TrimSpace(s) == "" {
		p.add(v.Line, "%s: must not be empty", key)
		return "", false
	}
	return s, true
}

func (p *parser) enum(v *yaml.Node, key string, allowed ...string) (string, bool) {
	s, ok := p.str(v, key)
	if !ok {
		return "", false
	}
	for _, a := range allowed {
		if s == a {
			return s, true
		}
	}
	p.add(v.Line, "%s: invalid value %q (want %s)", key, s, strings.Join(allowed, ", "))
	return "", false
}

// duration reads a Go duration ("90s", "5m", "1h30m"); a bare integer is a
// number of seconds, as in seed 001's examples.
func (p *parser) duration(v *yaml.Node, key string) (time.Duration, bool) {
	if !p.scalar(v, key, "a duration") {
		return 0, false
	}
	var d time.Duration
	switch v.ShortTag() {
	case "!!int":
		n, err := strconv.ParseInt(strings.ReplaceAll(v.Value, "_", ""), 0, 64)
		if err != nil || n > int64(math.MaxInt64/time.Second) || n < 0 {
			p.add(v.Line, "%s: %s seconds is out of range", key, v.Value)
			return 0, false
		}
		d = time.Duration(n) * time.Second
	case "!!str":
		var err error
		d, err = time.ParseDuration(v.Value)
		if err != nil {
			p.add(v.Line, "%s: invalid duration %q (want e.g. 90s, 5m, 1h30m)", key, v.Value)
			return 0, false
		}
	default:
		p.add(v.Line, "%s: want a duration such as 90s, 5m or 1h30m, got %s", key, describe(v))
		return 0, false
	}
	if d <= 0 {
		p.add(v.Line, "%s: must be longer than zero", key)
		return 0, false
	}
	return d, true
}

// set helpers: read into *dst when the value is good.

func (p *parser) setInt(dst *int, key string, lo, hi int) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if n, ok := p.integer(v, key, lo, hi); ok {
			*dst = n
		}
	}
}

func (p *parser) setDuration(dst *time.Duration, key string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if d, ok := p.duration(v, key); ok {
			*dst = d
		}
	}
}

func (p *parser) setEnum(dst *string, key string, allowed ...string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if s, ok := p.enum(v, key, allowed...); ok {
			*dst = s
		}
	}
}

func (p *parser) setNonEmpty(dst *string, key string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if s, ok := p.nonEmpty(v, key); ok {
			*dst = s
		}
	}
}

const maxInt = math.MaxInt32

// agentsSection reads agents: the settings of run --agents.
func (p *parser) agentsSection(a *Agents) func(*yaml.Node) {
	return func(v *yaml.Node) {
		p.section(v, "agents", map[string]func(*yaml.Node){
			"port_base": p.setInt(&a.PortBase, "agents.port_base", 0, 65000),
			"worktrees": p.setNonEmpty(&a.Worktrees, "agents.worktrees"),
		})
	}
}

func (p *parser) root(cfg *Config, n *yaml.Node) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		// Not a config at all (a link to another file, say): nothing of
		// its content is quoted.
		p.add(n.Line, "want a mapping of settings (retry, agent, gates, …), got %s; is this file orchestrate's config?", kindOf(n))
		return
	}
	r, a, o := &cfg.Retry, &cfg.Agent, &cfg.Output
	// The agent section's commands come from the file, then from the profile.
	*a = Agent{Timeout: a.Timeout}
	var gates *yaml.Node
	strategyLine, commandLine := 0, 0
	p.section(n, "", map[string]func(*yaml.Node){
		"retry": func(v *yaml.Node) {
			p.section(v, "retry", map[string]func(*yaml.Node){
				"max_retries":          p.setInt(&r.MaxRetries, "retry.max_retries", 0, maxInt),
				"global_cap":           p.setInt(&r.GlobalCap, "retry.global_cap", 0, maxInt),
				"halt_after_identical": p.setInt(&r.HaltAfterIdentical, "retry.halt_after_identical", 1, maxInt),
				"strategy": func(v *yaml.Node) {
					strategyLine = v.Line
					p.setEnum(&r.Strategy, "retry.strategy", StrategySame, StrategyFresh, StrategyAuto)(v)
				},
				"fresh_after_failures": p.setInt(&r.FreshAfterFailures, "retry.fresh_after_failures", 0, maxInt),
			})
		},
		"agent": func(v *yaml.Node) {
			p.section(v, "agent", map[string]func(*yaml.Node){
				"profile": p.setEnum(&a.Profile, "agent.profile", agentcli.Profiles...),
				"command": func(v *yaml.Node) {
					commandLine = v.Line
					if s, ok := p.nonEmpty(v, "agent.command"); ok {
						a.Command, a.CommandSet = s, true
					}
				},
				"resume_command": func(v *yaml.Node) {
					if s, ok := p.nonEmpty(v, "agent.resume_command"); ok {
						a.ResumeCommand, a.ResumeSet = s, true
					}
				},
				"review_command": p.setNonEmpty(&a.ReviewCommand, "agent.review_command"),
				"timeout":        p.setDuration(&a.Timeout, "agent.timeout"),
				"prices":         func(v *yaml.Node) { a.Prices = p.prices(v, "agent.prices") },
			})
		},
		"parallelism":   p.setInt(&cfg.Parallelism, "parallelism", 0, 1024),
		"on_exhaustion": p.setEnum(&cfg.OnExhaustion, "on_exhaustion", ExhaustionKeep, ExhaustionStash),
		"on_success":    p.setEnum(&cfg.OnSuccess, "on_success", SuccessCommit, SuccessLeave),
		"keep_runs":     p.setInt(&cfg.KeepRuns, "keep_runs", 0, maxInt),
		"output": func(v *yaml.Node) {
			p.section(v, "output", map[string]func(*yaml.Node){
				"head_bytes":     p.setInt(&o.HeadBytes, "output.head_bytes", 0, MaxCaptureBytes),
				"tail_bytes":     p.setInt(&o.TailBytes, "output.tail_bytes", 0, MaxCaptureBytes),
				"feedback_lines": p.setInt(&o.FeedbackLines, "output.feedback_lines", 1, maxInt),
				"feedback_bytes": p.setInt(&o.FeedbackBytes, "output.feedback_bytes", 1, MaxCaptureBytes),
				"log_head_bytes": p.setInt(&o.LogHeadBytes, "output.log_head_bytes", 1, maxInt),
				"log_tail_bytes": p.setInt(&o.LogTailBytes, "output.log_tail_bytes", 0, MaxCaptureBytes),
			})
		},
		"agents": p.agentsSection(&cfg.Agents),
		"human": func(v *yaml.Node) {
			p.section(v, "human", map[string]func(*yaml.Node){
				"wait": p.setEnum(&cfg.Human.Wait, "human.wait", HumanWaitExit, HumanWaitBlock),
			})
		},
		// Read once the agent's command is known: a preset's reviewers use it.
		"gates": func(v *yaml.Node) { gates = v },
	})
	a.reviewer()
	if gates != nil {
		cfg.Preset, cfg.Gates = p.gateSection(gates, a.ReviewCommand)
	}
	a.applyProfile(cfg.Gates)
	p.checkAgent(cfg, strategyLine, commandLine)
}

// checkAgent reports an agent section that cannot work: a custom profile with
// no command, and strategy same with no resume command to resume with.
func (p *parser) checkAgent(cfg *Config, strategyLine, commandLine int) {
	a := &cfg.Agent
	if a.Profile == agentcli.Custom && !a.CommandSet {
		p.add(commandLine, "agent.command: the custom profile needs a command (or choose a profile: %s)", strings.Join(agentcli.Profiles[:len(agentcli.Profiles)-1], ", "))
		return
	}
	if cfg.Retry.Strategy == StrategySame && a.ResumeCommand == "" {
		why := "the " + a.Profile + " profile cannot resume a session"
		if a.CommandSet {
			why = "agent.command is set without one (a resume command belongs to its agent)"
		}
		p.add(strategyLine, "retry.strategy: same resumes the agent, but agent.resume_command is not set: %s; set agent.resume_command, or use strategy fresh (auto starts a fresh agent every loop when there is nothing to resume)", why)
	}
}

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

var (
	envName       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	dimensionName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

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
	}
	return fmt.Sprintf("only a review or human gate has one (this one is a %s gate)", kind)
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
				if c := closest(d.Name, known); c != "" {
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

// prices reads agent.prices: a mapping of model names (or "default") to
// their input, output and cache_read prices, in US dollars per million
// tokens.
func (p *parser) prices(v *yaml.Node, key string) map[string]Price {
	if v.Kind != yaml.MappingNode {
		p.add(v.Line, "%s: want a mapping of models to prices (default: {input: 1.25, output: 10, cache_read: 0.125}), got %s", key, describe(v))
		return nil
	}
	prices := map[string]Price{}
	for _, f := range p.fields(v) {
		var pr Price
		where := key + "." + f.name
		p.section(f.val, where, map[string]func(*yaml.Node){
			"input":      p.setPrice(&pr.Input, where+".input"),
			"output":     p.setPrice(&pr.Output, where+".output"),
			"cache_read": p.setPrice(&pr.CacheRead, where+".cache_read"),
		})
		prices[f.name] = pr
	}
	return prices
}

// setPrice reads a price: a number of US dollars per million tokens, at
// least 0.
func (p *parser) setPrice(dst *float64, key string) func(*yaml.Node) {
	return func(v *yaml.Node) {
		if !p.scalar(v, key, "a number of US dollars per million tokens") {
			return
		}
		tag := v.ShortTag()
		n, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		if (tag != "!!int" && tag != "!!float") || err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			p.add(v.Line, "%s: want a number of US dollars per million tokens, got %s", key, describe(v))
			return
		}
		if n < 0 {
			p.add(v.Line, "%s: %s is out of range (want at least 0)", key, v.Value)
			return
		}
		*dst = n
	}
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
