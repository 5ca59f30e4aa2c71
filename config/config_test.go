package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

const full = `# every key there is
retry:
  max_retries: 7
  global_cap: 20
  halt_after_identical: 4
  strategy: fresh
  fresh_after_failures: 1
agent:
  command: "my-agent --print"
  resume_command: my-agent --continue
  timeout: 45m
parallelism: 3
on_exhaustion: stash
output: {head_bytes: 100, tail_bytes: 200, feedback_lines: 10, feedback_bytes: 1000}
gates:
  - name: tests
    command: go test ./...
    timeout: 5m
    working_dir: .
    env: {GOFLAGS: -count=1, N: 3}
    enforcement: blocking
    max_retries: 3
    serial: true
    fail_fast: true
    auto_retry: false
    priority: critical
    hints: ["Run go test ./... locally", "Read the first failure first"]
  - name: lint
    command: golangci-lint run
    required: false
    timeout: 90
  - name: vet
    command: go vet ./...
    priority: low
on_success: leave
`

func TestParseFull(t *testing.T) {
	cfg, problems := parse("config.yaml", []byte(full))
	if len(problems) > 0 {
		t.Fatalf("Parse: unexpected problems %v", problems)
	}
	want := &Config{
		Retry: Retry{MaxRetries: 7, GlobalCap: 20, HaltAfterIdentical: 4, Strategy: "fresh", FreshAfterFailures: 1},
		Agent: Agent{Profile: agentcli.Custom, Command: "my-agent --print", ResumeCommand: "my-agent --continue", Timeout: 45 * time.Minute,
			ReviewCommand: `my-agent --print "$ORCHESTRATE_REVIEW_PROMPT"`, Session: agentcli.SessionChosen, CommandSet: true, ResumeSet: true},
		Parallelism:  3,
		OnExhaustion: "stash",
		OnSuccess:    "leave",
		Output:       Output{HeadBytes: 100, TailBytes: 200, FeedbackLines: 10, FeedbackBytes: 1000, LogHeadBytes: DefaultLogHeadBytes, LogTailBytes: DefaultLogTailBytes},
		KeepRuns:     DefaultKeepRuns,
		Human:        Human{Wait: HumanWaitExit},
		Gates: []Gate{
			{
				Name: "tests", Command: "go test ./...", Timeout: 5 * time.Minute, WorkingDir: ".",
				Env:         map[string]string{"GOFLAGS": "-count=1", "N": "3"},
				Enforcement: Blocking, MaxRetries: 3, MaxRetriesSet: true, Serial: true, FailFast: true, AutoRetry: false,
				Priority: "critical", Hints: []string{"Run go test ./... locally", "Read the first failure first"},
				Line: 16,
			},
			{Name: "lint", Command: "golangci-lint run", Timeout: 90 * time.Second, Enforcement: Advisory, Line: 28},
			{Name: "vet", Command: "go vet ./...", Timeout: DefaultGateTimeout, Enforcement: Informational, Priority: "low", Line: 32},
		},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Parse(full) =\n%+v\nwant\n%+v", cfg, want)
	}
	if got := cfg.GateMaxRetries(cfg.Gates[0]); got != 3 {
		t.Errorf("GateMaxRetries(tests) = %d; want 3", got)
	}
	if got := cfg.GateMaxRetries(cfg.Gates[1]); got != 7 {
		t.Errorf("GateMaxRetries(lint) = %d; want 7 (retry.max_retries)", got)
	}
}

// TestPrices: agent.prices by model, integers and decimals, and the
// default entry for a model not listed or not named.
func TestPrices(t *testing.T) {
	cfg, problems := ParseIn("c.yaml", []byte("agent:\n  prices:\n    default: {input: 1.25, output: 10, cache_read: 0.125}\n    gpt-5:\n      input: 2\n      output: 16\n"), "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for _, tt := range []struct {
		model, from string
		want        Price
	}{
		{"gpt-5", "gpt-5", Price{Input: 2, Output: 16}},
		{"gpt-4o", PriceDefault, Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"", PriceDefault, Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
	} {
		p, from, ok := cfg.Agent.PriceOf(tt.model)
		if !ok || from != tt.from || p != tt.want {
			t.Errorf("PriceOf(%q) = %+v, %q, %v; want %+v from %q", tt.model, p, from, ok, tt.want, tt.from)
		}
	}
	cfg, _ = ParseIn("c.yaml", []byte("agent:\n  prices:\n    gpt-5: {input: 2}\n"), "")
	if _, _, ok := cfg.Agent.PriceOf("o3"); ok {
		t.Error("a model not listed, and no default, has a price")
	}
}

func TestDefaults(t *testing.T) {
	d := Default()
	if d.Retry.MaxRetries != 10 || d.Retry.GlobalCap != 15 || d.Retry.HaltAfterIdentical != 3 {
		t.Errorf("Default().Retry = %+v; want max_retries 10, global_cap 15, halt_after_identical 3", d.Retry)
	}
	if d.Retry.Strategy != "auto" || d.Retry.FreshAfterFailures != 2 || d.OnExhaustion != "keep" {
		t.Errorf("Default() = %+v; want strategy auto, fresh_after_failures 2, on_exhaustion keep", d)
	}
	if d.Agent.Command != `claude -p --session-id "$ORCHESTRATE_SESSION_ID" --output-format json --permission-mode acceptEdits` ||
		d.Agent.ResumeCommand != `claude -p --resume "$ORCHESTRATE_SESSION_ID" --output-format json --permission-mode acceptEdits` ||
		d.Agent.Profile != agentcli.Claude || d.Agent.Session != agentcli.SessionChosen || d.Agent.Usage != agentcli.UsageClaudeJSON || d.Agent.Timeout != 30*time.Minute {
		t.Errorf("Default().Agent = %+v", d.Agent)
	}
	if d.Output != (Output{16384, 16384, 40, 4096, 4 << 20, 4 << 20}) || d.KeepRuns != 20 || d.Parallelism != 0 || len(d.Gates) != 0 {
		t.Errorf("Default() = %+v", d)
	}
	for _, in := range []string{"", "# only a comment\n", "---\n", "~\n", "{}\n"} {
		cfg, problems := parse("config.yaml", []byte(in))
		if len(problems) > 0 || !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("Parse(%q) = %+v, %v; want the defaults", in, cfg, problems)
		}
	}
	// Unset gate keys: blocking, auto-retried, the default timeout.
	cfg, problems := parse("config.yaml", []byte("gates:\n- {name: a, command: 'true'}\n"))
	want := Gate{Name: "a", Command: "true", Timeout: DefaultGateTimeout, Enforcement: Blocking, AutoRetry: true, Line: 2}
	if len(problems) > 0 || !reflect.DeepEqual(cfg.Gates, []Gate{want}) {
		t.Errorf("Parse(minimal gate) = %+v, %v; want %+v", cfg.Gates, problems, want)
	}
}

func TestEnforcement(t *testing.T) {
	for _, tt := range []struct {
		keys string
		want Enforcement
	}{
		{"", Blocking},
		{"enforcement: advisory", Advisory},
		{"enforcement: informational", Informational},
		{"required: true", Blocking},
		{"required: false", Advisory},
		{"required: no", Advisory},
		{"priority: critical", Blocking},
		{"priority: high", Advisory},
		{"priority: medium", Advisory},
		{"priority: low", Informational},
		{"{priority: low, enforcement: blocking}", Blocking},
		{"{priority: critical, required: false}", Advisory},
	} {
		keys := tt.keys
		if !strings.HasPrefix(keys, "{") {
			keys = "{" + keys + "}"
		}
		in := "gates:\n- <<: " + keys + "\n  name: g\n  command: x\n"
		cfg, problems := parse("c.yaml", []byte(in))
		if len(problems) > 0 || len(cfg.Gates) != 1 {
			t.Errorf("Parse(%q): problems %v", in, problems)
			continue
		}
		if got := cfg.Gates[0].Enforcement; got != tt.want {
			t.Errorf("Parse(%q).Gates[0].Enforcement = %s; want %s", in, got, tt.want)
		}
	}
}

func TestProblems(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want []string // the problems, as Problem.String gives them
	}{
		{"syntax", "retry: {}\nparallelism: 2\nagent 2\non_exhaustion: keep\n", []string{"c.yaml:3: could not find expected ':'"}},
		{"top level not a mapping", "- a\n- b\n", []string{"c.yaml:1: want a mapping of settings (retry, agent, gates, …), got a list; is this file orchestrate's config?"}},
		{"second document", "retry: {}\n---\nretry: {}\n", []string{"c.yaml:2: a second YAML document: config.yaml holds one"}},
		{"unknown top-level key", "parallelism: 2\nretries: 3\n", []string{`c.yaml:2: unknown key "retries"; did you mean "retry"?`}},
		{"unknown key far from all", "zzz: 1\n", []string{`c.yaml:1: unknown key "zzz" (known keys: agent, agents, gates, human, keep_runs, on_exhaustion, on_success, output, parallelism, retry)`}},
		{"unknown nested key", "retry:\n  max_retry: 3\n", []string{`c.yaml:2: unknown key "max_retry" in retry; did you mean "max_retries"?`}},
		{"unknown gate key", "gates:\n  - name: t\n    command: x\n    tiemout: 5m\n", []string{`c.yaml:4: unknown key "tiemout" in gates[0]; did you mean "timeout"?`}},
		{"seed keys", "quality_gates: []\nexecutor:\n  quality_gate_max_retries: 3\nheadless: {max_retries: 3}\nretry:\n  max_iterations: 3\ngates:\n  formula: code-review\n",
			[]string{
				`c.yaml:1: unknown key "quality_gates": a seed's key; use gates instead`,
				`c.yaml:2: unknown key "executor": a seed's key; use retry (its quality_gate_max_retries is retry.max_retries) instead`,
				`c.yaml:4: unknown key "headless": a seed's key; use retry (its max_retries is retry.max_retries) instead`,
				`c.yaml:6: unknown key "max_iterations" in retry: a seed's key; use retry.max_retries instead`,
				`c.yaml:8: unknown key "formula" in gates: a seed's key; use gates.preset instead`,
			}},
		{"seed gate type", "gates:\n  - name: r\n    type: parallel_review\n",
			[]string{`c.yaml:3: gate "r": type: "parallel_review" is a seed's gate type; use type: review instead`, `c.yaml:2: gate "r": a gate needs a command`}},
		{"duplicate key", "parallelism: 1\nparallelism: 2\n", []string{`c.yaml:2: duplicate key "parallelism" (first on line 1)`}},
		{"section not a mapping", "retry: 3\n", []string{"c.yaml:1: retry: want a mapping, got the integer 3"}},
		{"string for integer", "retry:\n  max_retries: ten\n", []string{`c.yaml:2: retry.max_retries: want an integer, got the string "ten"`}},
		{"quoted integer", "parallelism: \"4\"\n", []string{`c.yaml:1: parallelism: want an integer, got the string "4"`}},
		{"float for integer", "output:\n  head_bytes: 1.5\n", []string{"c.yaml:2: output.head_bytes: want an integer, got the number 1.5"}},
		{"negative", "retry:\n  global_cap: -1\n", []string{"c.yaml:2: retry.global_cap: -1 is out of range (want at least 0)"}},
		{"zero halt", "retry:\n  halt_after_identical: 0\n", []string{"c.yaml:2: retry.halt_after_identical: 0 is out of range (want at least 1)"}},
		{"too big", "output:\n  tail_bytes: 1000000000\n", []string{"c.yaml:2: output.tail_bytes: 1000000000 is out of range (want 0 to 67108864)"}},
		{"list for integer", "parallelism: [1]\n", []string{"c.yaml:1: parallelism: want an integer, got a list"}},
		{"bad strategy", "retry:\n  strategy: sometimes\n", []string{`c.yaml:2: retry.strategy: invalid value "sometimes" (want same, fresh, auto)`}},
		{"bad on_exhaustion", "on_exhaustion: delete\n", []string{`c.yaml:1: on_exhaustion: invalid value "delete" (want keep, stash)`}},
		{"bad duration", "agent:\n  timeout: 5 minutes\n", []string{`c.yaml:2: agent.timeout: invalid duration "5 minutes" (want e.g. 90s, 5m, 1h30m)`}},
		{"zero duration", "agent:\n  timeout: 0s\n", []string{"c.yaml:2: agent.timeout: must be longer than zero"}},
		{"bool duration", "agent:\n  timeout: true\n", []string{"c.yaml:2: agent.timeout: want a duration such as 90s, 5m or 1h30m, got the boolean true"}},
		{"empty command", "agent:\n  command: \"  \"\n", []string{"c.yaml:2: agent.command: must not be empty"}},
		{"prices not a mapping", "agent:\n  prices: 3\n", []string{"c.yaml:2: agent.prices: want a mapping of models to prices (default: {input: 1.25, output: 10, cache_read: 0.125}), got the integer 3"}},
		{"price not a mapping", "agent:\n  prices:\n    gpt-5: 3\n", []string{"c.yaml:3: agent.prices.gpt-5: want a mapping, got the integer 3"}},
		{"price negative", "agent:\n  prices:\n    default: {input: 1, output: -0.5}\n", []string{"c.yaml:3: agent.prices.default.output: -0.5 is out of range (want at least 0)"}},
		{"price not a number", "agent:\n  prices:\n    default:\n      input: cheap\n", []string{`c.yaml:4: agent.prices.default.input: want a number of US dollars per million tokens, got the string "cheap"`}},
		{"price nan", "agent:\n  prices:\n    default: {cache_read: .nan}\n", []string{"c.yaml:3: agent.prices.default.cache_read: want a number of US dollars per million tokens, got the number .nan"}},
		{"price unknown key", "agent:\n  prices:\n    default: {input: 1, outptu: 2}\n", []string{`c.yaml:3: unknown key "outptu" in agent.prices.default; did you mean "output"?`}},
		{"gates not a list", "gates: go test\n", []string{`c.yaml:1: gates: want a list of gates, or a mapping with preset and list, got the string "go test"`}},
		{"gates mapping without a preset's keys", "gates:\n  tests: go test\n", []string{`c.yaml:2: unknown key "tests" in gates (known keys: list, preset)`}},
		{"gate not a mapping", "gates:\n  - go test ./...\n", []string{`c.yaml:2: gates[0]: want a mapping (name, command, …), got the string "go test ./..."`}},
		{"gate without name", "gates:\n  - command: x\n", []string{"c.yaml:2: gates[0]: a gate needs a name"}},
		{"gate without command", "gates:\n  - name: t\n", []string{`c.yaml:2: gate "t": a gate needs a command`}},
		{"gate without either", "gates:\n  - {}\n", []string{"c.yaml:2: gates[0]: a gate needs a name", "c.yaml:2: gates[0]: a gate needs a command"}},
		{"duplicate gate name", "gates:\n  - {name: t, command: x}\n  - {name: u, command: y}\n  - {name: t, command: z}\n",
			[]string{`c.yaml:4: duplicate gate name "t" (first on line 2)`}},
		{"gate bad types", "gates:\n  - name: t\n    command: x\n    serial: maybe\n    max_retries: -2\n    timeout: soon\n",
			[]string{
				`c.yaml:4: gate "t": serial: want true or false, got the string "maybe"`,
				`c.yaml:5: gate "t": max_retries: -2 is out of range (want at least 0)`,
				`c.yaml:6: gate "t": timeout: invalid duration "soon" (want e.g. 90s, 5m, 1h30m)`,
			}},
		{"bad enforcement", "gates:\n  - name: t\n    command: x\n    enforcement: strict\n",
			[]string{`c.yaml:4: gate "t": enforcement: invalid value "strict" (want blocking, advisory, informational)`}},
		{"bad priority", "gates:\n  - name: t\n    command: x\n    priority: urgent\n",
			[]string{`c.yaml:4: gate "t": priority: invalid value "urgent" (want critical, high, medium, low)`}},
		{"required contradicts enforcement", "gates:\n  - name: t\n    command: x\n    enforcement: advisory\n    required: true\n",
			[]string{`c.yaml:5: gate "t": required: required: true contradicts enforcement: advisory (on line 4); keep one`}},
		{"fail_fast on advisory", "gates:\n  - name: t\n    command: x\n    priority: medium\n    fail_fast: true\n",
			[]string{`c.yaml:5: gate "t": fail_fast: only a blocking gate can stop the evaluation (this one is advisory)`}},
		{"env not a mapping", "gates:\n  - name: t\n    command: x\n    env: [A=1]\n",
			[]string{`c.yaml:4: gate "t": env: want a mapping of variables, got a list`}},
		{"env bad name and value", "gates:\n  - name: t\n    command: x\n    env:\n      1X: a\n      OK: [b]\n",
			[]string{`c.yaml:5: gate "t": env: "1X" is not a valid variable name`, `c.yaml:6: gate "t": env.OK: want a string, got a list`}},
		{"hints not a list", "gates:\n  - name: t\n    command: x\n    hints: read the error\n",
			[]string{`c.yaml:4: gate "t": hints: want a list of strings, got the string "read the error"`}},
		{"working_dir outside", "gates:\n  - name: t\n    command: x\n    working_dir: ../other\n  - name: u\n    command: x\n    working_dir: /abs\n",
			[]string{
				`c.yaml:4: gate "t": working_dir: "../other" is outside the repository (want a path relative to its root)`,
				`c.yaml:7: gate "u": working_dir: "/abs" is outside the repository (want a path relative to its root)`,
			}},
		{"report outside, a directory, on a human gate", "gates:\n  - name: t\n    command: x\n    report: ../r.xml\n  - name: u\n    command: x\n    report: out/\n  - name: h\n    type: human\n    report: r.xml\n",
			[]string{
				`c.yaml:4: gate "t": report: "../r.xml" is outside the repository (want a file relative to the gate's working_dir)`,
				`c.yaml:7: gate "u": report: "out/" is a directory (want the report's file: report.xml, test.json)`,
				`c.yaml:10: gate "h": report: not for a human gate`,
			}},
		{"multi-line name", "gates:\n  - name: \"a\\nb\"\n    command: x\n",
			[]string{"c.yaml:2: gates[0].name: must be one line", "c.yaml:2: gates[0]: a gate needs a name"}},
		{"bad merge", "retry:\n  <<: 3\n", []string{"c.yaml:2: a merge key (<<) wants a mapping or a list of mappings, not the integer 3"}},
		{"all problems, not only the first", "retry:\n  max_retries: x\n  strategy: y\nparallelism: z\nfoo: 1\n",
			[]string{
				`c.yaml:2: retry.max_retries: want an integer, got the string "x"`,
				`c.yaml:3: retry.strategy: invalid value "y" (want same, fresh, auto)`,
				`c.yaml:4: parallelism: want an integer, got the string "z"`,
				`c.yaml:5: unknown key "foo" (known keys: agent, agents, gates, human, keep_runs, on_exhaustion, on_success, output, parallelism, retry)`,
			}},
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

func TestAnchorsAndMerge(t *testing.T) {
	in := `
x-gate: &base
  timeout: 2m
  env: {A: "1"}
gates:
  - <<: *base
    name: one
    command: "true"
  - <<: *base
    name: two
    command: "false"
    timeout: 3m
`
	_, problems := parse("c.yaml", []byte(in))
	// x-gate is not a key we know: strictness wins over convenience.
	if len(problems) != 1 || problems[0].Line != 2 {
		t.Fatalf("Parse: problems %v; want one, on line 2", problems)
	}
	in = strings.Replace(in, "x-gate: &base", "output: &base", 1)
	in = strings.Replace(in, "  timeout: 2m\n  env: {A: \"1\"}\n", "  head_bytes: 10\n", 1)
	in = strings.Replace(in, "<<: *base", "<<: {timeout: 2m, env: {A: '1'}}", -1)
	cfg, problems := parse("c.yaml", []byte(in))
	if len(problems) > 0 {
		t.Fatalf("Parse(%q): problems %v", in, problems)
	}
	if g := cfg.Gates; len(g) != 2 || g[0].Timeout != 2*time.Minute || g[1].Timeout != 3*time.Minute || g[1].Env["A"] != "1" {
		t.Errorf("Parse(merge).Gates = %+v", g)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	cfg, problems, err := Load(filepath.Join(dir, "config.yaml"))
	if err != nil || problems != nil || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load(missing) = %+v, %v, %v; want defaults", cfg, problems, err)
	}
	name := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(name, []byte("parallelism: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems, err = Load(name)
	if err != nil || len(problems) != 1 || problems[0].String() != name+`:1: parallelism: want an integer, got the string "x"` {
		t.Errorf("Load(bad) = %v, %v", problems, err)
	}
	if _, _, err := Load(dir); err == nil {
		t.Errorf("Load(a directory): no error")
	}
}

func TestProblemString(t *testing.T) {
	if got := (Problem{File: "a/config.yaml", Msg: "m"}).String(); got != "a/config.yaml: m" {
		t.Errorf("Problem without line = %q", got)
	}
}

func TestDefaultGates(t *testing.T) {
	for _, tt := range []struct {
		files []string
		lang  string
		cmds  []string
	}{
		{nil, "", nil},
		{[]string{"README.md"}, "", nil},
		{[]string{"go.mod"}, "go", []string{"go test ./...", "go build ./..."}},
		{[]string{"package.json"}, "javascript", []string{"npm test"}},
		{[]string{"package.json", "tsconfig.json"}, "typescript", []string{"npm test"}},
		{[]string{"pyproject.toml"}, "python", []string{"pytest"}},
		{[]string{"setup.py"}, "python", []string{"pytest"}},
		{[]string{"Cargo.toml"}, "rust", []string{"cargo test", "cargo build"}},
		{[]string{"Cargo.toml", "go.mod"}, "go", []string{"go test ./...", "go build ./..."}},
	} {
		dir := t.TempDir()
		for _, f := range tt.files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		text, lang := DefaultGates(dir)
		if lang != tt.lang {
			t.Errorf("DefaultGates(%v) lang = %q; want %q", tt.files, lang, tt.lang)
		}
		if tt.lang == "" {
			if text != "" {
				t.Errorf("DefaultGates(%v) = %q; want nothing", tt.files, text)
			}
			continue
		}
		if !strings.HasPrefix(text, "# ") || !strings.Contains(text, "DefaultQualityGates") {
			t.Errorf("DefaultGates(%v) = %q; want a comment line first saying where the gates came from", tt.files, text)
		}
		cfg, problems := parse("config.yaml", []byte(text))
		if len(problems) > 0 {
			t.Errorf("DefaultGates(%v) does not parse: %v\n%s", tt.files, problems, text)
			continue
		}
		var cmds []string
		for _, g := range cfg.Gates {
			cmds = append(cmds, g.Command)
			if g.Timeout != 5*time.Minute && g.Timeout != 2*time.Minute {
				t.Errorf("DefaultGates(%v): gate %q timeout %v", tt.files, g.Name, g.Timeout)
			}
		}
		if !reflect.DeepEqual(cmds, tt.cmds) {
			t.Errorf("DefaultGates(%v) commands = %q; want %q", tt.files, cmds, tt.cmds)
		}
	}
}

// TestDesignExample parses DESIGN.md's example, completed with every key.
func TestDesignExample(t *testing.T) {
	cfg, problems, err := Load(filepath.Join("testdata", "design.yaml"))
	if err != nil || len(problems) > 0 {
		t.Fatalf("Load(design.yaml) = %v, %v", problems, err)
	}
	want := Default()
	want.Gates = cfg.Gates
	// The claude profile lets the agent run the gates' commands, and no other.
	allowed := ` --allowedTools "Bash(go test *)" "Bash(go vet *)" "Bash(golangci-lint run *)"`
	want.Agent.Command += allowed
	want.Agent.ResumeCommand += allowed
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("Load(design.yaml) = %+v; want the defaults but for the gates", cfg)
	}
	var got []string
	for _, g := range cfg.Gates {
		got = append(got, fmt.Sprintf("%s:%s:%d:%v", g.Name, g.Enforcement, cfg.GateMaxRetries(g), g.AutoRetry))
	}
	if want := []string{"tests:blocking:3:true", "vet:blocking:10:true", "lint:advisory:10:false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("gates = %q; want %q", got, want)
	}
}

// parse is ParseIn with no repository: a preset finds no language's commands.
func parse(file string, data []byte) (*Config, []Problem) {
	return ParseIn(file, data, "")
}

// A config.yaml that is some other file (a link to a private file, say)
// is refused without quoting it, and a long value in the wrong place is
// quoted by a short excerpt only.
func TestProblemsQuoteNoSecret(t *testing.T) {
	for _, src := range []string{
		"aws_secret_access_key = AKIASECRETSECRET1234\n",
		"retry:\n  max_retries: AKIASECRETSECRET1234abcdefgh\n",
	} {
		_, problems := parse("c.yaml", []byte(src))
		if len(problems) == 0 {
			t.Fatalf("Parse(%q): no problem", src)
		}
		for _, p := range problems {
			if strings.Contains(p.String(), "SECRETSECRET") {
				t.Errorf("Parse(%q): %s quotes the secret", src, p)
			}
		}
	}
}

// A config.yaml over MaxConfigSize is an error naming the cap, never
// parsed; a link or a FIFO is refused.
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxConfigSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("Load(a file over the cap) = %v", err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(link); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Load(a link to /dev/zero) = %v", err)
	}
}

// TestFormatAgentPrices: validate --explain's agent section gives back the
// prices it was read with.
func TestFormatAgentPrices(t *testing.T) {
	in := "agent:\n  prices:\n    default: {input: 1.25, output: 10, cache_read: 0.125}\n    \"gpt-5 mini\": {input: 0.25}\n"
	cfg, problems := ParseIn("c.yaml", []byte(in), "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	text := FormatAgent(cfg.Agent)
	again, problems := ParseIn("c.yaml", []byte(text), "")
	if len(problems) > 0 || !reflect.DeepEqual(again.Agent.Prices, cfg.Agent.Prices) {
		t.Errorf("FormatAgent gave\n%s\nwhich reads back as %+v, %v; want %+v", text, again.Agent.Prices, problems, cfg.Agent.Prices)
	}
}

// TestGateReport reads a gate's report file, and validate --explain
// writes it back.
func TestGateReport(t *testing.T) {
	cfg, problems := ParseIn("c.yaml", []byte("gates:\n  - name: t\n    command: go test -json ./... > test.json\n    working_dir: sub\n    report: test.json\n"), "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if g := cfg.Gates[0]; g.Report != "test.json" {
		t.Errorf("Report = %q, want test.json", g.Report)
	}
	if s := FormatGates("c.yaml", cfg.Gates); !strings.Contains(s, "report: test.json") {
		t.Errorf("FormatGates does not write the report:\n%s", s)
	}
}
