// Package prompts holds the prompt templates orchestrate sends to agents,
// embedded in the binary, each overridable by a file of the same name in
// .orchestrator/prompts/.
//
// It serves the orchestrate command and its packages; it is not API.
package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// The templates, and commands/: the slash commands for agent clients
// (commands/orchestrate.md, which orchestrate init --claude installs).
// Load and Names walk whatever is embedded.
//
//go:embed *.md commands
var embedded embed.FS

// MaxOverride is the most of a prompt override that Load reads.
const MaxOverride = 1 << 20

// Load returns the template called name (a slash-separated path such as
// "feedback.md" or "commands/orchestrate.md"; the ".md" may be left out):
// the user's override, overrideDir/name, when that file exists, or else the
// embedded one. An error wrapping fs.ErrNotExist means there is no such
// template; any other error is the override's, which is not silently
// ignored.
func Load(overrideDir, name string) (string, error) {
	name, err := canonical(name)
	if err != nil {
		return "", err
	}
	if overrideDir != "" {
		data, exists, err := fsx.ReadFileMax(filepath.Join(overrideDir, filepath.FromSlash(name)), MaxOverride)
		switch {
		case err != nil:
			return "", fmt.Errorf("reading prompt override: %w", err)
		case exists:
			return string(data), nil
		}
	}
	data, err := fs.ReadFile(embedded, name)
	if err != nil {
		return "", fmt.Errorf("prompt %q: %w", name, fs.ErrNotExist)
	}
	return string(data), nil
}

// canonical checks name and adds the ".md" it may lack.
func canonical(name string) (string, error) {
	if !fs.ValidPath(name) || name == "." {
		return "", fmt.Errorf("prompt %q: not a valid template name: %w", name, fs.ErrNotExist)
	}
	if path.Ext(name) == "" {
		name += ".md"
	}
	return name, nil
}

// Names returns the names of the embedded templates, sorted, with
// subdirectories as slash-separated paths ("commands/orchestrate.md").
func Names() []string {
	var names []string
	_ = fs.WalkDir(embedded, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	return names
}
