package main

import (
	"os"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
)

// pluginDefersTo names the settings file whose own orchestrate hook runs
// sub (stop, session-start) in agent's session in repo: the plugin's (or
// the extension's) hook then leaves the work to it, so that the gates run
// once per stop. "" when there is none; a file that is missing or cannot
// be read as JSON has none.
func pluginDefersTo(agent, repo, sub string) string {
	home, _ := os.UserHomeDir()
	for _, f := range agentcli.SettingsFiles(agent, repo, home) {
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
