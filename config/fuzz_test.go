package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, that every problem has a
// message, and that a config without problems has gates with names and
// commands (but for human gates), which validate --explain writes in a form
// that parses back without problems.
func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("gates:\n- <<: [{a: 1}, *x]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("retry: {max_retries: 0x10, global_cap: 1_000}\n"))
	f.Add([]byte("human: {wait: block}\ngates:\n  preset: quick-review\n  list:\n  - {name: tests, command: t}\n  - {name: h, type: human, when: 'a == b && c != \"d\"'}\n  - {name: code_review, dimensions: [security, {name: x, prompt: y}], fail_on: P2}\n"))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, name := range seeds {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, problems := parse("config.yaml", data)
		if cfg == nil {
			t.Fatalf("Parse(%q) returned a nil Config", data)
		}
		for _, p := range problems {
			if p.Msg == "" || p.File != "config.yaml" || p.Line < 0 {
				t.Fatalf("Parse(%q): malformed problem %+v", data, p)
			}
		}
		if len(problems) == 0 {
			for _, g := range cfg.Gates {
				if g.Name == "" || (g.Command == "" && !g.IsHuman()) || g.Enforcement == "" {
					t.Fatalf("Parse(%q): gate %+v accepted", data, g)
				}
			}
			text := FormatGates("config.yaml", cfg.Gates)
			if _, ps := parse("config.yaml", []byte(text)); len(ps) > 0 && len(cfg.Gates) > 0 {
				t.Fatalf("Parse(%q): FormatGates gives\n%s\nwhich has problems %v", data, text, ps)
			}
		}
	})
}
