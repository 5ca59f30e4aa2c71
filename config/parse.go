package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
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
				"profile": p.setEnum(&a.Profile, "agent.profile", Profiles...),
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
	if a.Profile == ProfileCustom && !a.CommandSet {
		p.add(commandLine, "agent.command: the custom profile needs a command (or choose a profile: %s)", strings.Join(Profiles[:len(Profiles)-1], ", "))
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
