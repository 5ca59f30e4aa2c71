package config

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BuiltinDimensions are the review dimensions a review gate may name without
// saying what its reviewer looks for: seed 003's seven dimensions of the
// code-review preset.
var BuiltinDimensions = []Dimension{
	{"correctness", "Look for logic errors: wrong results, unhandled edge cases (empty, nil, zero, boundaries, off by one), broken invariants, errors that are lost or ignored, behaviour that does not match what the change claims to do."},
	{"security", "Look for security problems: injection (SQL, shell, paths, templates), missing authentication or authorization checks, secrets in code or logs, unsafe deserialization, unchecked input, misused cryptography."},
	{"performance", "Look for performance problems: work repeated in loops, quadratic algorithms on data that grows, needless allocations or copies on hot paths, N+1 queries, blocking I/O where it hurts, unbounded memory."},
	{"resilience", "Look for resilience problems: missing timeouts, leaked resources (files, connections, goroutines, processes), partial failures that leave bad state, ignored cancellation, retries without bounds, writes that are not atomic."},
	{"maintainability", "Look for maintainability problems: unclear names, duplicated logic, dead code, needless complexity or abstraction, code in the wrong place, hidden coupling."},
	{"testing", "Look for testing problems: new behaviour without tests, edge cases and error paths not covered, tests that cannot fail, flaky or slow tests, tests that test the mocks."},
	{"documentation", "Look for documentation problems: exported names without doc comments, comments that no longer match the code, user-visible changes missing from the README or usage texts."},
}

// builtinDimension returns the built-in dimension called name.
func builtinDimension(name string) (Dimension, bool) {
	for _, d := range BuiltinDimensions {
		if d.Name == name {
			return d, true
		}
	}
	return Dimension{}, false
}

// The presets of gates.preset (seed 003's formulas).
const (
	PresetQuickReview   = "quick-review"
	PresetCodeReview    = "code-review"
	PresetSecurityAudit = "security-audit"
	PresetNone          = "none"
)

// Presets lists the preset names.
var Presets = []string{PresetQuickReview, PresetCodeReview, PresetSecurityAudit, PresetNone}

// The names of the gates a preset makes; a gate of gates.list with one of
// these names changes that gate instead of adding one.
const (
	PresetTestsGate     = "tests"
	PresetTypecheckGate = "typecheck"
	PresetReviewGate    = "code_review"
	PresetHumanGate     = "human_approval"
)

// presetGates returns the gates of a preset, before gates.list changes
// them. tests and typecheck have the commands of lang (see
// languageCommands); typecheck is left out when lang has none.
//
// The reviewers and the synthesis run agent.review_command (the profile's
// read-only reviewer); the diff (or, for the synthesis, the findings) comes
// on their stdin.
func presetGates(preset, reviewCommand, lang string) []Gate {
	if preset == PresetNone || preset == "" {
		return nil
	}
	tests, typecheck := languageCommands(lang)
	gates := []Gate{{
		Name: PresetTestsGate, Command: tests, Timeout: DefaultGateTimeout,
		Serial: true, FailFast: true, Priority: PriorityCritical,
	}}
	if preset == PresetCodeReview && typecheck != "" {
		gates = append(gates, Gate{Name: PresetTypecheckGate, Command: typecheck, Timeout: DefaultGateTimeout, Serial: true})
	}
	var dims []Dimension
	switch preset {
	case PresetCodeReview:
		dims = append(dims, BuiltinDimensions...)
	case PresetSecurityAudit:
		for _, n := range []string{"security", "resilience", "correctness"} {
			d, _ := builtinDimension(n)
			dims = append(dims, d)
		}
	case PresetQuickReview:
		for _, n := range []string{"correctness", "security"} {
			d, _ := builtinDimension(n)
			dims = append(dims, d)
		}
	}
	cmd := reviewCommand
	gates = append(gates, Gate{
		Name: PresetReviewGate, Type: TypeReview, Command: cmd, Synthesis: cmd, Timeout: DefaultGateTimeout,
		Dimensions: dims, FailOn: DefaultFailOn, DiffBase: DefaultDiffBase,
	})
	if preset == PresetSecurityAudit {
		gates = append(gates, Gate{
			Name: PresetHumanGate, Type: TypeHuman, DiffBase: DefaultDiffBase,
			Prompt: "Read the security review's findings and the diff, then approve or reject this change.",
		})
	}
	for i := range gates {
		g := &gates[i]
		g.Preset = preset
		if g.IsHuman() {
			g.Enforcement = Blocking
		} else {
			g.Enforcement = enforcementForPriority(g.Priority)
		}
		g.AutoRetry = g.Enforcement == Blocking
	}
	return gates
}

// languageCommands returns the test and type-check commands of a language
// (DefaultGates detects it); "" when it has none or is not known.
func languageCommands(lang string) (tests, typecheck string) {
	switch lang {
	case "go":
		return "go test ./...", "go vet ./..."
	case "typescript":
		return "npm test", "npx tsc --noEmit"
	case "javascript":
		return "npm test", ""
	case "python":
		return "pytest", ""
	case "rust":
		return "cargo test", "cargo check"
	}
	return "", ""
}

// detectLanguage returns the language of the repository in dir, as
// DefaultGates does, or "".
func detectLanguage(dir string) string {
	if dir == "" {
		return ""
	}
	for _, l := range languages {
		for _, m := range l.markers {
			if fileExists(filepath.Join(dir, m)) {
				if l.lang == "javascript" && fileExists(filepath.Join(dir, "tsconfig.json")) {
					return "typescript"
				}
				return l.lang
			}
		}
	}
	return ""
}

// FormatGates writes gates as the YAML of a gates: list that parses back to
// the same gates, each with a comment saying where it came from (a preset, a
// line of file), for orchestrate validate --explain.
func FormatGates(file string, gates []Gate) string {
	var b strings.Builder
	b.WriteString("gates:\n")
	for _, g := range gates {
		switch {
		case g.Preset != "" && g.Line > 0:
			fmt.Fprintf(&b, "  # from preset %s, changed at %s:%d\n", g.Preset, file, g.Line)
		case g.Preset != "":
			fmt.Fprintf(&b, "  # from preset %s\n", g.Preset)
		case g.Line > 0:
			fmt.Fprintf(&b, "  # %s:%d\n", file, g.Line)
		}
		fmt.Fprintf(&b, "  - name: %s\n", yamlString(g.Name))
		formatGateRun(&b, g)
		formatGateReview(&b, g)
		formatGatePolicy(&b, g)
	}
	return b.String()
}

// gateKey writes one key of a gate of FormatGates's list.
func gateKey(b *strings.Builder, k, v string) { fmt.Fprintf(b, "    %s: %s\n", k, v) }

// formatGateRun writes the keys that say what a gate runs, and where.
func formatGateRun(b *strings.Builder, g Gate) {
	if g.Kind() != TypeCommand {
		gateKey(b, "type", g.Kind())
	}
	if g.Command != "" {
		gateKey(b, "command", yamlString(g.Command))
	}
	if !g.IsHuman() && g.Timeout > 0 {
		gateKey(b, "timeout", shortDuration(g.Timeout))
	}
	if g.WorkingDir != "" {
		gateKey(b, "working_dir", yamlString(g.WorkingDir))
	}
	if g.Report != "" {
		gateKey(b, "report", yamlString(g.Report))
	}
	if len(g.Env) > 0 {
		b.WriteString("    env:\n")
		for _, k := range sortedKeys(g.Env) {
			fmt.Fprintf(b, "      %s: %s\n", k, yamlString(g.Env[k]))
		}
	}
}

// formatGateReview writes the keys of review and human gates.
func formatGateReview(b *strings.Builder, g Gate) {
	if g.Prompt != "" {
		gateKey(b, "prompt", yamlString(g.Prompt))
	}
	if len(g.Dimensions) > 0 {
		b.WriteString("    dimensions:\n")
		for _, d := range g.Dimensions {
			if bd, ok := builtinDimension(d.Name); ok && bd.Prompt == d.Prompt {
				fmt.Fprintf(b, "      - %s\n", d.Name)
			} else {
				fmt.Fprintf(b, "      - {name: %s, prompt: %s}\n", d.Name, yamlString(d.Prompt))
			}
		}
	}
	if g.FailOn != "" {
		gateKey(b, "fail_on", g.FailOn)
	}
	if g.Synthesis != "" {
		gateKey(b, "synthesis", yamlString(g.Synthesis))
	}
	if g.DiffBase != "" {
		gateKey(b, "diff_base", yamlString(g.DiffBase))
	}
	if g.When != nil {
		gateKey(b, "when", yamlString(g.When.Text))
	}
}

// formatGatePolicy writes the keys that say what a gate's failure does.
func formatGatePolicy(b *strings.Builder, g Gate) {
	if g.Enforcement != "" {
		gateKey(b, "enforcement", string(g.Enforcement))
	}
	if g.Priority != "" {
		gateKey(b, "priority", g.Priority)
	}
	if g.MaxRetriesSet || g.MaxRetries > 0 {
		gateKey(b, "max_retries", strconv.Itoa(g.MaxRetries))
	}
	if g.Serial {
		gateKey(b, "serial", "true")
	}
	if g.Serial && g.NotPrerequisite {
		gateKey(b, "prerequisite", "false")
	}
	if g.FailFast {
		gateKey(b, "fail_fast", "true")
	}
	gateKey(b, "auto_retry", strconv.FormatBool(g.AutoRetry))
	if len(g.Hints) > 0 {
		b.WriteString("    hints:\n")
		for _, h := range g.Hints {
			fmt.Fprintf(b, "      - %s\n", yamlString(h))
		}
	}
}

// yamlString quotes s when YAML would not read it back as the same string.
func yamlString(s string) string {
	plain := s != "" && s == strings.TrimSpace(s) && !strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n\r\t\\") &&
		!strings.ContainsAny(s[:1], "-?") && !looksTyped(s)
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// looksTyped reports whether YAML would read s as something other than a
// string: a number, a boolean, null.
func looksTyped(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", "-.inf", ".nan":
		return true
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil {
		return true
	}
	if _, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
		return true
	}
	if _, err := time.Parse("2006-01-02", s); err == nil {
		return true
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
