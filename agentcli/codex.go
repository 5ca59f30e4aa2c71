package agentcli

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// Codex is Codex CLI's profile, and the agent of its hooks.
const Codex = "codex"

// UsageCodexJSONL is codex exec --json: thread.started, turn.completed
// events.
const UsageCodexJSONL = "codex-jsonl"

var codex = Profile{
	Name:        Codex,
	Command:     `codex exec --json --sandbox workspace-write%s -`,
	Resume:      `codex exec --json --sandbox workspace-write%s resume "$ORCHESTRATE_SESSION_ID" -`,
	Review:      `codex exec --sandbox read-only "$ORCHESTRATE_REVIEW_PROMPT"`,
	Session:     SessionReported,
	Usage:       UsageCodexJSONL,
	Permissions: "edits files and runs commands inside the working tree's sandbox (--sandbox workspace-write: no network, nothing written outside the tree but Go's build cache when a gate runs go: --add-dir); never asks",
	Program:     "codex",
	Install:     "npm install -g @openai/codex",
	Hooks: &Hooks{Path: ".codex/hooks.json", StartEvent: "SessionStart", StopEvent: "Stop",
		Note: "codex runs a project's hooks only when it trusts both the project and the hooks: " +
			"the project (trust it when codex asks, run codex exec --trust once here, or add [projects.\"<this folder>\"] trust_level = \"trusted\" to $CODEX_HOME/config.toml) " +
			"and the hooks themselves (review and trust them with /hooks in codex, again after every change to .codex/hooks.json; " +
			"from a script, codex app-server's hooks/list and config/batchWrite, as docs/hooks.md shows)"},
	allowed:  codexWritableDirs,
	failures: codexStartFailures,
	trust:    codexTrust,
}

// codexWritableDirs returns the --add-dir arguments (with their leading
// space) that the check commands need writable beside the working tree in
// codex's workspace-write sandbox: Go's build cache for a go command, where
// go test writes what it builds (the sandbox makes the rest of the disk
// read-only, and go test fails with "read-only file system" on any
// package it has not built before). "" when none does.
func codexWritableDirs(checks []string) string {
	for _, c := range checks {
		if f := strings.Fields(c); len(f) > 0 && f[0] == "go" {
			return ` --add-dir "$(go env GOCACHE)"`
		}
	}
	return ""
}

var codexStartFailures = []StartFailure{
	{Match: `not inside a trusted directory`,
		What: "Codex does not trust this folder",
		Fix:  "trust the project in codex (run it here once), or add --skip-git-repo-check to agent.command"},
	// Codex cannot reach its model API: it says so every few seconds
	// ({"type":"error","message":"Reconnecting... waiting for
	// network (Connection failed: …)"}) and never exits.
	{Match: `reconnecting\.\.\. waiting for network`, Stall: 3, Until: `"type":"turn\.completed"`,
		What: "codex could not reach its model API (it was stopped after 3 reconnects)",
		Fix:  "check the network and the model provider's base_url in $CODEX_HOME/config.toml, then run again"},
}

// parseCodex reads codex exec --json's events: thread.started has the
// thread (the session to resume), each turn.completed the turn's usage.
func parseCodex(out []byte) Report {
	var r Report
	for _, o := range jsonObjects(out) {
		switch str(o, "type") {
		case "thread.started":
			r.Usage.Session = str(o, "thread_id")
		case "turn.completed":
			u := obj(o, "usage")
			r.Usage.Turns++
			r.Usage.InputTokens += int64(num(u, "input_tokens"))
			r.Usage.OutputTokens += int64(num(u, "output_tokens"))
			r.Usage.CacheReadTokens += int64(num(u, "cached_input_tokens"))
		case "item.completed":
			if it := obj(o, "item"); str(it, "type") == "agent_message" {
				r.Result = str(it, "text")
			}
		}
	}
	return r
}

// codexTrust: Codex runs a project's hooks, and writes there headless, in a
// project of config.toml marked trusted.
func codexTrust(c TrustCheck) Trust {
	home := c.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(c.Home, ".codex")
	}
	file := filepath.Join(home, "config.toml")
	data, _, _ := fsx.ReadFile(file)
	if codexTrusts(data, c.Repo) {
		return Trust{OK: true, Detail: "codex trusts " + c.Repo + " (" + file + ")"}
	}
	return Trust{Detail: "codex does not trust " + c.Repo + ": its project hooks do not run",
		Fix: "add to " + file + ": [projects." + `"` + c.Repo + `"` + "] trust_level = \"trusted\" (or trust it in codex), then trust the hooks with /hooks in codex"}
}

// codexTrusts reports whether config.toml marks the project dir, or one
// above it, trusted: [projects."DIR"] then trust_level = "trusted".
func codexTrusts(data []byte, repo string) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	project := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			project = ""
			if p, ok := strings.CutPrefix(line, "[projects."); ok {
				project = strings.Trim(strings.TrimSuffix(p, "]"), `"'`)
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && project != "" && strings.TrimSpace(k) == "trust_level" && strings.Trim(strings.TrimSpace(v), `"'`) == "trusted" && within(repo, project) {
			return true
		}
	}
	return false
}
