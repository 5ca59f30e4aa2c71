package main

import (
	"os"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
	"github.com/orchestrate-dev/orchestrate/loop"
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

// agentSettings are the settings files of an agent that can hold its
// hooks, for a session in repo: Gemini CLI's project and user
// settings.json, or Claude Code's (claudeSettings).
func agentSettings(agent, repo, home string) []string {
	if agent != loop.AgentGemini {
		return claudeSettings(repo, home)
	}
	files := []string{filepath.Join(repo, ".gemini", "settings.json")}
	if home != "" {
		files = append(files, filepath.Join(home, ".gemini", "settings.json"))
	}
	return files
}

// pluginDefersTo names the settings file whose own orchestrate hook runs
// sub (stop, session-start) in agent's session in repo: the plugin's (or
// the extension's) hook then leaves the work to it, so that the gates run
// once per stop. "" when there is none; a file that is missing or cannot
// be read as JSON has none.
func pluginDefersTo(agent, repo, sub string) string {
	home, _ := os.UserHomeDir()
	for _, f := range agentSettings(agent, repo, home) {
		data, ok, err := fsx.ReadFile(f)
		if err != nil || !ok {
			continue
		}
		found, err := jsonsettings.FindHooks(data, false)
		if err != nil {
			continue
		}
		for _, h := range found {
			if h.Sub == sub {
				return f
			}
		}
	}
	return ""
}
