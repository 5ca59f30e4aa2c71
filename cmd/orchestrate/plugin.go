package main

import (
	"os"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
)

// claudeSettings are the Claude Code settings files that can hold hooks,
// where a session in repo reads them: the repository's shared and local
// settings, then the user's (under home; none when home is "").
func claudeSettings(repo, home string) []string {
	files := []string{
		filepath.Join(repo, ".claude", "settings.json"),
		filepath.Join(repo, ".claude", "settings.local.json"),
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	return files
}

// settingsHooks lists the orchestrate hooks that a Claude Code session in
// repo finds in its settings files; a file that is missing or cannot be
// read as JSON has none.
func settingsHooks(repo, home string) map[string][]jsonsettings.Found {
	out := map[string][]jsonsettings.Found{}
	for _, f := range claudeSettings(repo, home) {
		data, ok, err := fsx.ReadFile(f)
		if err != nil || !ok {
			continue
		}
		if found, err := jsonsettings.FindHooks(data, false); err == nil && len(found) > 0 {
			out[f] = found
		}
	}
	return out
}

// pluginDefersTo names the settings file whose own orchestrate hook runs
// sub (stop, session-start) in a session in repo: the plugin's hook then
// leaves the work to it, so that the gates run once per stop. "" when
// there is none.
func pluginDefersTo(repo, sub string) string {
	home, _ := os.UserHomeDir()
	for _, f := range claudeSettings(repo, home) {
		for _, h := range settingsHooks(repo, home)[f] {
			if h.Sub == sub {
				return f
			}
		}
	}
	return ""
}
