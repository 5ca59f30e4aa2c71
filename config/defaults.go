package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// languages in the order they are detected: the first whose marker file is
// in the repository wins.
var languages = []struct {
	lang    string
	markers []string
}{
	{"go", []string{"go.mod"}},
	{"javascript", []string{"package.json"}},
	{"python", []string{"pyproject.toml", "setup.py"}},
	{"rust", []string{"Cargo.toml"}},
}

// defaultQualityGates is seed 001's DefaultQualityGates. Rust is not in the
// seed; its gates follow the Go ones.
func defaultQualityGates(lang string) []Gate {
	switch lang {
	case "go":
		return []Gate{
			{Name: "Run tests", Command: "go test ./...", Timeout: 5 * time.Minute},
			{Name: "Build", Command: "go build ./...", Timeout: 2 * time.Minute},
		}
	case "javascript", "typescript":
		return []Gate{{Name: "Run tests", Command: "npm test", Timeout: 5 * time.Minute}}
	case "python":
		return []Gate{{Name: "Run tests", Command: "pytest", Timeout: 5 * time.Minute}}
	case "rust":
		return []Gate{
			{Name: "Run tests", Command: "cargo test", Timeout: 5 * time.Minute},
			{Name: "Build", Command: "cargo build", Timeout: 2 * time.Minute},
		}
	}
	return nil
}

// DefaultGates returns seed 001's DefaultQualityGates for the language
// detected in repoDir (go.mod, package.json, pyproject.toml or setup.py,
// Cargo.toml; a package.json with a tsconfig.json is typescript), as the YAML
// text of a top-level "gates:" key, ready to insert in a new config.yaml, with
// a comment line saying where the gates came from. It returns "" and "" when
// no language is detected.
func DefaultGates(repoDir string) (yamlText string, lang string) {
	var marker string
	for _, l := range languages {
		for _, m := range l.markers {
			if fileExists(filepath.Join(repoDir, m)) {
				lang, marker = l.lang, m
				break
			}
		}
		if lang != "" {
			break
		}
	}
	if lang == "javascript" && fileExists(filepath.Join(repoDir, "tsconfig.json")) {
		lang = "typescript"
	}
	gates := defaultQualityGates(lang)
	if len(gates) == 0 {
		return "", ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Default gates for a %s project (found %s), from DefaultQualityGates in seeds/001.\n", lang, marker)
	b.WriteString("gates:\n")
	for _, g := range gates {
		fmt.Fprintf(&b, "  - name: %s\n", strconv.Quote(g.Name))
		fmt.Fprintf(&b, "    command: %s\n", strconv.Quote(g.Command))
		fmt.Fprintf(&b, "    timeout: %s\n", shortDuration(g.Timeout))
	}
	return b.String(), lang
}

// shortDuration writes 5m rather than 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func fileExists(name string) bool {
	info, err := os.Stat(name)
	return err == nil && !info.IsDir()
}
