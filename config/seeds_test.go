package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// seedSetting is how a setting that docs/from-the-seeds.md's Configuration
// table names is written in a config.yaml, and whether it is ours.
type seedSetting struct {
	yaml string // "" when it is no key (a function, a constant, a command)
	ours bool   // read as it is, with no problem
}

// gate is a config.yaml of one command gate with the keys extra added.
func gate(extra string) string {
	return "gates:\n  - name: t\n    command: x\n    " + strings.ReplaceAll(extra, "\n", "\n    ") + "\n"
}

// seedSettings holds each setting of the table's "their setting" column,
// as the table writes it.
var seedSettings = map[string]seedSetting{
	"quality_gates:":                       {yaml: "quality_gates:\n  - {name: t, command: x}\n"},
	"required: true":                       {yaml: gate("required: true"), ours: true},
	"false":                                {yaml: gate("required: false"), ours: true},
	"max_retries: 3":                       {yaml: gate("max_retries: 3"), ours: true},
	"executor.quality_gate_max_retries: 3": {yaml: "executor:\n  quality_gate_max_retries: 3\n"},
	"headless.max_retries: 3":              {yaml: "headless:\n  max_retries: 3\n"},
	"timeout: 300":                         {yaml: gate("timeout: 300"), ours: true},
	"working_dir:":                         {yaml: gate("working_dir: frontend"), ours: true},
	"env:":                                 {yaml: gate("env: {CI: \"1\"}"), ours: true},
	"DefaultQualityGates(language)":        {},
	"retry_config.max_attempts":            {yaml: gate("retry_config:\n  max_attempts: 2")},
	"retry_config.improvement_hints":       {yaml: gate("retry_config:\n  improvement_hints: true")},
	"retry_config.preserve_context":        {yaml: gate("retry_config:\n  preserve_context: true")},
	"criteria":                             {yaml: gate("criteria: [no unused variables]")},
	"improvement_hints":                    {yaml: gate("improvement_hints: true")},
	"enforcement_mode: blocking | advisory | informational": {yaml: gate("enforcement_mode: advisory")},
	"enforcementMode":                   {yaml: gate("enforcementMode: advisory")},
	"severity":                          {yaml: gate("severity: high")},
	"SEVERITY_TO_ENFORCEMENT":           {},
	"failureAction":                     {yaml: gate("failureAction: block")},
	`[retry] strategy = "auto"`:         {yaml: "retry:\n  strategy: auto\n", ours: true},
	"fresh_after_failures = 2":          {yaml: "retry:\n  fresh_after_failures: 2\n", ours: true},
	"max_iterations = 3":                {yaml: "retry:\n  max_iterations: 3\n"},
	`[gates] formula = "code-review"`:   {yaml: "gates:\n  formula: code-review\n"},
	"[[gates.list]]":                    {yaml: "gates:\n  preset: none\n  list:\n    - {name: t, command: x}\n", ours: true},
	`type = "command"`:                  {yaml: gate("type: command"), ours: true},
	`type = "parallel_review"`:          {yaml: "gates:\n  - {name: r, type: parallel_review}\n"},
	"dimensions = [...]":                {yaml: "gates:\n  - {name: r, type: review, command: reviewer, dimensions: [correctness, security]}\n", ours: true},
	`type = "human"`:                    {yaml: "gates:\n  - {name: h, type: human}\n", ours: true},
	"prompt":                            {yaml: "gates:\n  - {name: h, type: human, prompt: Review and approve this change}\n", ours: true},
	`when = "task.priority == 1"`:       {yaml: "gates:\n  - {name: h, type: human, when: task.priority == 1}\n", ours: true},
	"serial = true":                     {yaml: gate("serial: true"), ours: true},
	"fail_fast = true":                  {yaml: gate("fail_fast: true"), ours: true},
	"touch .orchestrator/no_auto_retry": {},
}

var backticked = regexp.MustCompile("`([^`]+)`")

// configTable returns the rows of docs/from-the-seeds.md's Configuration
// table as cells, the table's escaped pipes unescaped.
func configTable(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile("../docs/from-the-seeds.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration\n")
	if !ok {
		t.Fatal("docs/from-the-seeds.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| 0") {
			continue // not a seed's row
		}
		line = strings.ReplaceAll(line, `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
		}
		if len(cells) != 3 {
			t.Fatalf("docs/from-the-seeds.md: a row of %d cells, want 3: %s", len(cells), line)
		}
		rows = append(rows, cells)
	}
	if len(rows) < 20 {
		t.Fatalf("docs/from-the-seeds.md's Configuration table has %d rows; want its seeds' settings", len(rows))
	}
	return rows
}

// Every key of every seed that docs/from-the-seeds.md names is either read
// as it is, or refused as a seed's key with the key to use instead: the
// first key of the row's "ours" column.
func TestSeedKeysHaveHints(t *testing.T) {
	for _, row := range configTable(t) {
		use := ""
		if m := backticked.FindStringSubmatch(row[2]); m != nil {
			use, _, _ = strings.Cut(m[1], ":")
		}
		for _, m := range backticked.FindAllStringSubmatch(row[1], -1) {
			setting := m[1]
			s, ok := seedSettings[setting]
			switch {
			case !ok:
				t.Errorf("seed %s's setting %q (docs/from-the-seeds.md) is not in seedSettings: add how config.yaml writes it", row[0], setting)
			case s.yaml == "":
				// Not a key: the table says where it went.
			case s.ours:
				if _, problems := parse("c.yaml", []byte(s.yaml)); len(problems) > 0 {
					t.Errorf("seed %s's %q is ours, but %q gives %v", row[0], setting, s.yaml, problems)
				}
			default:
				checkSeedHint(t, row[0], setting, s.yaml, use)
			}
		}
	}
}

func checkSeedHint(t *testing.T, seed, setting, yaml, use string) {
	t.Helper()
	_, problems := parse("c.yaml", []byte(yaml))
	for _, p := range problems {
		if msg := p.String(); strings.Contains(msg, "a seed's") && strings.Contains(msg, use) {
			return
		}
	}
	t.Errorf("seed %s's %q: %q gives %v; want a seed's key, naming %s", seed, setting, yaml, problems, use)
}

// Every seed key config knows is named in docs/from-the-seeds.md's
// Configuration table, and every setting this test knows is still there.
func TestSeedKeysDocumented(t *testing.T) {
	var their strings.Builder
	named := map[string]bool{}
	for _, row := range configTable(t) {
		their.WriteString(row[1] + "\n")
		for _, m := range backticked.FindAllStringSubmatch(row[1], -1) {
			named[m[1]] = true
		}
	}
	for k := range seedKeys {
		if !strings.Contains(their.String(), k) {
			t.Errorf("seed key %q is not in docs/from-the-seeds.md's Configuration table", k)
		}
	}
	for s := range seedSettings {
		if !named[s] {
			t.Errorf("seedSettings has %q, which docs/from-the-seeds.md no longer names", s)
		}
	}
}
