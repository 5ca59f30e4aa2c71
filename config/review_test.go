package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseReviewAndHuman(t *testing.T) {
	in := `human: {wait: block}
gates:
  - name: review
    type: review
    command: ./reviewer {{dimension}}
    prompt: Mind the public API.
    dimensions:
      - correctness
      - {name: api, prompt: Look for breaking API changes.}
      - {name: security, prompt: Only SQL.}
    fail_on: p2
    synthesis: ./synth
    diff_base: origin/main
    timeout: 3m
  - name: sign-off
    type: human
    prompt: Approve the release notes
    when: priority == critical && task.type != docs || Category == "security fix"
    priority: high
`
	cfg, problems := parse("c.yaml", []byte(in))
	if len(problems) > 0 {
		t.Fatalf("Parse: problems %v", problems)
	}
	if cfg.Human.Wait != HumanWaitBlock {
		t.Errorf("Human.Wait = %q; want block", cfg.Human.Wait)
	}
	correctness, _ := builtinDimension("correctness")
	review := Gate{
		Name: "review", Type: TypeReview, Command: "./reviewer {{dimension}}", Timeout: 3 * time.Minute,
		Prompt:     "Mind the public API.",
		Dimensions: []Dimension{correctness, {"api", "Look for breaking API changes."}, {"security", "Only SQL."}},
		FailOn:     "P2", Synthesis: "./synth", DiffBase: "origin/main",
		Enforcement: Blocking, AutoRetry: true, Line: 3,
	}
	if !reflect.DeepEqual(cfg.Gates[0], review) {
		t.Errorf("review gate =\n%+v\nwant\n%+v", cfg.Gates[0], review)
	}
	h := cfg.Gates[1]
	// A human gate is blocking whatever its priority, has no timeout, and
	// compares with HEAD.
	if h.Type != TypeHuman || h.Enforcement != Blocking || !h.AutoRetry || h.Timeout != 0 || h.DiffBase != "HEAD" || h.Priority != "high" {
		t.Errorf("human gate = %+v", h)
	}
	if h.When == nil || h.When.Text != `priority == critical && task.type != docs || Category == "security fix"` {
		t.Fatalf("human gate When = %+v", h.When)
	}
	if got := h.When.Fields(); !reflect.DeepEqual(got, []string{"priority", "type", "Category"}) {
		t.Errorf("When.Fields() = %q", got)
	}
	// Review gates default to fail_on P1 and diff_base HEAD.
	cfg, problems = parse("c.yaml", []byte("gates:\n- {name: r, type: review, command: x}\n"))
	if len(problems) > 0 || cfg.Gates[0].FailOn != "P1" || cfg.Gates[0].DiffBase != "HEAD" || len(cfg.Gates[0].Dimensions) != 0 {
		t.Errorf("Parse(minimal review gate) = %+v, %v", cfg.Gates, problems)
	}
	if Default().Human.Wait != HumanWaitExit {
		t.Errorf("Default().Human.Wait = %q; want exit", Default().Human.Wait)
	}
}

func TestWhen(t *testing.T) {
	fields := map[string]string{"priority": "Critical", "type": "bug", "category": "", "auto-retry": "true"}
	get := func(name string) (string, bool) {
		v, ok := fields[strings.ToLower(name)]
		return v, ok && v != ""
	}
	for _, tt := range []struct {
		expr string
		want bool
	}{
		{"priority == critical", true},
		{"priority != critical", false},
		{"task.priority == CRITICAL", true},
		{"issue.type == bug && priority == critical", true},
		{"type == feature && priority == critical", false},
		{"type == feature || priority == critical", true},
		{"type == feature || priority == low", false},
		{"type == feature && priority == critical || type == bug", true},
		{`category == ""`, true},
		{"owner == ''", true},
		{"owner != ''", false},
		{"auto-retry == true", true},
		{`type == "bug"`, true},
		// Seed 003's numeric priorities: critical is 1, … low is 4.
		{"task.priority == 1", true},
		{"priority == 2", false},
		{"priority != 1", false},
		{"priority == '1' && type == bug", true},
	} {
		w, err := parseWhen(tt.expr)
		if err != nil {
			t.Errorf("parseWhen(%q): %v", tt.expr, err)
			continue
		}
		if got := w.Match(get); got != tt.want {
			t.Errorf("parseWhen(%q).Match = %v; want %v", tt.expr, got, tt.want)
		}
	}
	for _, tt := range []struct{ expr, want string }{
		{"", "empty expression"},
		{"priority", "incomplete comparison"},
		{"priority ==", "incomplete comparison"},
		{"priority = critical", `unexpected "="`},
		{"priority == critical &&", `"&&" needs a comparison after it`},
		{"priority == critical type == bug", `want && or || after priority == critical, got "type"`},
		{"(priority == critical)", `unexpected "("`},
		{"priority < 2", `unexpected "<"`},
		{`priority == "critical`, "unterminated string"},
		{"== critical && a == b", "want a field name"},
		{"a.b == c", `unknown field "a.b"`},
		{"priority == &&", `want a value after "priority =="`},
		// What can never be true.
		{"task.priority == 0", "task.priority == 0 can never be true: a priority is critical (1), high (2), medium (3) or low (4)"},
		{"task.priority == 5", "can never be true"},
		{"priority == urgent", "can never be true"},
		{"priority != urgent", "can never be true"},
		{"status == resolved", "status == resolved can never be true: when: looks at open issues"},
		{"type == bug && type == feature", "type == bug && type == feature can never be true"},
		{"priority == 1 && priority == critical && type == bug && Type != BUG", "type == bug && Type != BUG can never be true"},
		{"type == docs || priority == critical && priority == low", "priority == critical && priority == low can never be true"},
	} {
		_, err := parseWhen(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseWhen(%q) = %v; want an error with %q", tt.expr, err, tt.want)
		}
	}
}

func TestReviewProblems(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []string
	}{
		{"bad type", "gates:\n- {name: g, type: robot, command: x}\n",
			[]string{`c.yaml:2: gate "g": type: invalid value "robot" (want command, review, human)`}},
		{"review keys on a command gate", "gates:\n- name: g\n  command: x\n  fail_on: P1\n  dimensions: [security]\n  synthesis: y\n  diff_base: main\n  when: a == b\n",
			[]string{
				`c.yaml:4: gate "g": fail_on: only a review gate has findings (add type: review)`,
				`c.yaml:5: gate "g": dimensions: only a review gate has findings (add type: review)`,
				`c.yaml:6: gate "g": synthesis: only a review gate has findings (add type: review)`,
				`c.yaml:7: gate "g": diff_base: only a review or human gate has one (this one is a command gate)`,
				`c.yaml:8: gate "g": when: only a human gate has a condition (add type: human)`,
			}},
		{"command keys on a human gate", "gates:\n- name: h\n  type: human\n  command: x\n  timeout: 5m\n  serial: true\n",
			[]string{
				`c.yaml:4: gate "h": command: a human gate runs no command: a person approves it`,
				`c.yaml:5: gate "h": timeout: a human gate has no timeout: it waits for a person (human.wait says how orchestrate run waits)`,
				`c.yaml:6: gate "h": serial: not for a human gate`,
			}},
		{"advisory human gate", "gates:\n- name: h\n  type: human\n  enforcement: advisory\n",
			[]string{`c.yaml:4: gate "h": enforcement: a human gate is blocking: an approval that does not block means nothing`}},
		{"review without a command", "gates:\n- {name: r, type: review}\n",
			[]string{`c.yaml:2: gate "r": a review gate needs a command: the reviewer, which reads the diff on stdin and prints findings`}},
		{"bad fail_on", "gates:\n- {name: r, type: review, command: x, fail_on: P5}\n",
			[]string{`c.yaml:2: gate "r": fail_on: invalid value "P5" (want P0, P1, P2, P3)`}},
		{"fail_on a list", "gates:\n- {name: r, type: review, command: x, fail_on: [P1]}\n",
			[]string{`c.yaml:2: gate "r": fail_on: want a priority (P0 to P3), got a list`}},
		{"bad dimensions", "gates:\n- name: r\n  type: review\n  command: x\n  dimensions:\n  - securty\n  - {prompt: p}\n  - Security\n  - correctness\n  - correctness\n  - [a]\n  - {name: mine}\n",
			[]string{
				`c.yaml:6: gate "r": dimensions: unknown dimension "securty" (did you mean "security"?); give {name, prompt} for one of your own`,
				`c.yaml:7: gate "r": dimensions: a dimension needs a name`,
				`c.yaml:8: gate "r": dimensions: "Security" is not a dimension name (want lower-case letters, digits, - and _)`,
				`c.yaml:10: gate "r": dimensions: duplicate dimension "correctness" (first on line 9)`,
				`c.yaml:11: gate "r": dimensions: want a dimension name or {name, prompt}, got a list`,
				`c.yaml:12: gate "r": dimensions: unknown dimension "mine" (known: correctness, security, performance, resilience, maintainability, testing, documentation); give {name, prompt} for one of your own`,
			}},
		{"empty dimensions", "gates:\n- {name: r, type: review, command: x, dimensions: []}\n",
			[]string{`c.yaml:2: gate "r": dimensions: an empty list: leave dimensions out for one reviewer`}},
		{"dimensions not a list", "gates:\n- {name: r, type: review, command: x, dimensions: security}\n",
			[]string{`c.yaml:2: gate "r": dimensions: want a list of dimensions (correctness, security, …), got the string "security"`}},
		{"bad diff_base", "gates:\n- {name: r, type: review, command: x, diff_base: --output=x}\n- {name: s, type: review, command: x, diff_base: 'main..HEAD'}\n",
			[]string{
				`c.yaml:2: gate "r": diff_base: "--output=x" is not a revision (want e.g. HEAD, main, origin/main, HEAD~3)`,
				`c.yaml:3: gate "s": diff_base: "main..HEAD" is not a revision (want e.g. HEAD, main, origin/main, HEAD~3)`,
			}},
		{"prerequisite without serial", "gates:\n- {name: t, command: x, prerequisite: false}\n- {name: h, type: human, prerequisite: true}\n",
			[]string{
				`c.yaml:2: gate "t": prerequisite: only a serial gate is a prerequisite of the parallel ones (add serial: true)`,
				`c.yaml:3: gate "h": prerequisite: not for a human gate`,
			}},
		{"bad when", "gates:\n- {name: h, type: human, when: priority = critical}\n",
			[]string{`c.yaml:2: gate "h": when: unexpected "=" (the operators are ==, !=, && and ||)`}},
		{"bad human.wait", "human:\n  wait: forever\n",
			[]string{`c.yaml:2: human.wait: invalid value "forever" (want exit, block)`}},
		{"unknown human key", "human:\n  wayt: block\n",
			[]string{`c.yaml:2: unknown key "wayt" in human; did you mean "wait"?`}},
		{"bad preset", "gates:\n  preset: thorough\n",
			[]string{`c.yaml:2: gates.preset: invalid value "thorough" (want quick-review, code-review, security-audit, none)`}},
		{"preset without a tests command", "gates:\n  preset: quick-review\n",
			[]string{`c.yaml:2: gates.preset: quick-review: its gate "tests" needs a command (no go.mod, package.json, pyproject.toml, setup.py or Cargo.toml in the repository): add {name: tests, command: …} to gates.list`}},
		{"list not a list", "gates:\n  preset: none\n  list: {name: a}\n",
			[]string{`c.yaml:3: gates.list: want a list of gates, got a mapping`}},
		{"bad entry in list", "gates:\n  preset: none\n  list:\n  - {name: a}\n",
			[]string{`c.yaml:4: gate "a": a gate needs a command`}},
		{"duplicate in list", "gates:\n  preset: quick-review\n  list:\n  - {name: tests, command: t}\n  - {name: tests, command: u}\n",
			[]string{`c.yaml:5: duplicate gate name "tests" (first on line 4)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := parse("c.yaml", []byte(tt.in))
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q) problems =\n  %s\nwant\n  %s", tt.in, strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func gateNames(gates []Gate) []string {
	var out []string
	for _, g := range gates {
		out = append(out, g.Name+":"+g.Kind())
	}
	return out
}

func TestPresets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		preset string
		gates  []string
		dims   []string
	}{
		{"none", nil, nil},
		{"quick-review", []string{"tests:command", "code_review:review"}, []string{"correctness", "security"}},
		{"code-review", []string{"tests:command", "typecheck:command", "code_review:review"},
			[]string{"correctness", "security", "performance", "resilience", "maintainability", "testing", "documentation"}},
		{"security-audit", []string{"tests:command", "code_review:review", "human_approval:human"}, []string{"security", "resilience", "correctness"}},
	} {
		in := "agent: {command: my-agent -p}\ngates: {preset: " + tt.preset + "}\n"
		cfg, problems := ParseIn("c.yaml", []byte(in), dir)
		if len(problems) > 0 {
			t.Errorf("ParseIn(%q): %v", in, problems)
			continue
		}
		if cfg.Preset != tt.preset {
			t.Errorf("ParseIn(%q).Preset = %q", in, cfg.Preset)
		}
		if got := gateNames(cfg.Gates); !reflect.DeepEqual(got, tt.gates) {
			t.Errorf("ParseIn(%q) gates = %q; want %q", in, got, tt.gates)
		}
		for _, g := range cfg.Gates {
			if g.Preset != tt.preset || g.Line != 0 || g.Enforcement != Blocking || !g.AutoRetry {
				t.Errorf("preset %s: gate %+v", tt.preset, g)
			}
			switch g.Name {
			case "tests":
				if g.Command != "go test ./..." || !g.Serial || !g.FailFast {
					t.Errorf("preset %s: tests = %+v", tt.preset, g)
				}
			case "typecheck":
				if g.Command != "go vet ./..." || !g.Serial {
					t.Errorf("preset %s: typecheck = %+v", tt.preset, g)
				}
			case "code_review":
				var dims []string
				for _, d := range g.Dimensions {
					dims = append(dims, d.Name)
					if d.Prompt == "" {
						t.Errorf("preset %s: dimension %s has no prompt", tt.preset, d.Name)
					}
				}
				if !reflect.DeepEqual(dims, tt.dims) {
					t.Errorf("preset %s: dimensions %q; want %q", tt.preset, dims, tt.dims)
				}
				want := `my-agent -p "$ORCHESTRATE_REVIEW_PROMPT"`
				if g.Command != want || g.Synthesis != want || g.FailOn != "P1" {
					t.Errorf("preset %s: code_review = %+v", tt.preset, g)
				}
			}
		}
	}

	// The list changes preset gates by name, key by key, and adds its own.
	in := `gates:
  preset: code-review
  list:
    - name: new
      command: make lint
    - name: tests
      command: make test
      priority: low
      fail_fast: false
    - name: code_review
      fail_on: P0
      dimensions: [security]
    - name: typecheck
      type: human
`
	cfg, problems := ParseIn("c.yaml", []byte(in), dir)
	if len(problems) > 0 {
		t.Fatalf("ParseIn: %v", problems)
	}
	if got, want := gateNames(cfg.Gates), []string{"tests:command", "typecheck:human", "code_review:review", "new:command"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("gates = %q; want %q", got, want)
	}
	tests := cfg.Gates[0]
	if tests.Command != "make test" || !tests.Serial || tests.FailFast || tests.Enforcement != Informational || tests.AutoRetry || tests.Line != 6 || tests.Preset != "code-review" {
		t.Errorf("tests = %+v; want the preset's, with the list's command, priority and fail_fast", tests)
	}
	if tc := cfg.Gates[1]; tc.Command != "" || tc.Serial || tc.Preset != "code-review" {
		t.Errorf("typecheck = %+v; want a human gate that replaces the preset's", tc)
	}
	if r := cfg.Gates[2]; r.FailOn != "P0" || len(r.Dimensions) != 1 || r.Synthesis == "" || r.Line != 10 {
		t.Errorf("code_review = %+v", r)
	}
	if n := cfg.Gates[3]; n.Preset != "" || n.Line != 4 {
		t.Errorf("new = %+v", n)
	}

	// Without go.mod, a preset's tests gate needs its command from the list;
	// typecheck is left out when the language has none.
	cfg, problems = ParseIn("c.yaml", []byte("gates:\n  preset: code-review\n  list:\n  - {name: tests, command: ./test.sh}\n"), t.TempDir())
	if len(problems) > 0 || !reflect.DeepEqual(gateNames(cfg.Gates), []string{"tests:command", "code_review:review"}) {
		t.Errorf("ParseIn(no language) = %q, %v", gateNames(cfg.Gates), problems)
	}
}

// TestFormatGatesRoundTrip: what validate --explain prints parses back to
// the same gates.
func TestFormatGatesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := `gates:
  preset: security-audit
  list:
    - name: "odd: name #1"
      command: "echo 'a: b' && exit 1"
      env: {B: "yes", A: "1", C: ""}
      hints: ["- a dash", "true"]
      working_dir: web
      priority: medium
      max_retries: 2
    - name: code_review
      dimensions: [correctness, {name: api, prompt: "Breaking changes: none allowed"}]
      prompt: "multi\nline"
    - name: human_approval
      when: priority == critical || type == "security fix"
`
	cfg, problems := ParseIn("c.yaml", []byte(in), dir)
	if len(problems) > 0 {
		t.Fatalf("ParseIn: %v", problems)
	}
	text := FormatGates("c.yaml", cfg.Gates)
	for _, want := range []string{"# from preset security-audit\n  - name: tests", "# from preset security-audit, changed at c.yaml:11", "# c.yaml:4"} {
		if !strings.Contains(text, want) {
			t.Errorf("FormatGates: no %q in\n%s", want, text)
		}
	}
	back, problems := parse("c.yaml", []byte(text))
	if len(problems) > 0 {
		t.Fatalf("Parse(FormatGates(…)): %v\n%s", problems, text)
	}
	for i := range cfg.Gates {
		cfg.Gates[i].Line, cfg.Gates[i].Preset = 0, ""
		back.Gates[i].Line = 0
	}
	if !reflect.DeepEqual(back.Gates, cfg.Gates) {
		t.Errorf("Parse(FormatGates(gates)) =\n%+v\nwant\n%+v\n%s", back.Gates, cfg.Gates, text)
	}
}
