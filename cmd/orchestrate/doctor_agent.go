package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// agentCLIs are the programs of the agent profiles, and how to install
// each.
var agentCLIs = map[string]struct{ program, install string }{
	config.ProfileClaude:   {"claude", "npm install -g @anthropic-ai/claude-code"},
	config.ProfileCodex:    {"codex", "npm install -g @openai/codex"},
	config.ProfileGemini:   {"gemini", "npm install -g @google/gemini-cli"},
	config.ProfileOpencode: {"opencode", "npm install -g opencode-ai"},
	config.ProfileCursor:   {"cursor-agent", "curl https://cursor.com/install -fsS | bash"},
	config.ProfileAider:    {"aider", "python3 -m pip install aider-install && aider-install"},
}

// agent checks the agent CLI: on PATH, its version, and whether it trusts
// the repository.
func (d *doctor) agent(ctx context.Context) {
	if d.cfg == nil {
		return
	}
	profile := d.cfg.Agent.Profile
	cli, known := agentCLIs[profile]
	if !known {
		if w := shellWords(d.cfg.Agent.Command); len(w) > 0 {
			cli.program = w[0]
		}
	}
	if cli.program == "" {
		return
	}
	path, err := exec.LookPath(cli.program)
	if err != nil {
		fix := cli.install
		if fix == "" {
			fix = "install " + cli.program + ", or change agent.command in config.yaml"
		}
		d.add("agent", "problem", cli.program+" (agent profile "+profile+") is not on PATH: orchestrate run cannot start the agent", fix)
		return
	}
	d.add("agent", "ok", path+" "+cliVersion(ctx, path), "")
	switch profile {
	case config.ProfileGemini:
		d.geminiTrust()
	case config.ProfileCodex:
		d.codexTrust()
	}
}

// cliVersion is the first line a CLI prints for --version, within a few
// seconds; "(version unknown)" when it prints none.
func cliVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_CHILD=1")
	out, _ := cmd.Output()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "(version unknown)"
	}
	return line
}

// geminiTrust: Gemini CLI refuses a folder it was not told to trust (exit
// 55), unless the command skips the check or the environment trusts it.
func (d *doctor) geminiTrust() {
	cmd := d.cfg.Agent.Command
	if strings.Contains(cmd, "--skip-trust") || strings.Contains(cmd, "GEMINI_CLI_TRUST_WORKSPACE=true") || os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		d.add("agent", "ok", "gemini: the agent command (or the environment) skips the folder trust check", "")
		return
	}
	file := filepath.Join(d.home, ".gemini", "trustedFolders.json")
	data, _, _ := fsx.ReadFile(file)
	var trusted map[string]string
	_ = json.Unmarshal(data, &trusted)
	for dir, level := range trusted {
		switch {
		case level == "TRUST_FOLDER" && within(d.repo, dir),
			level == "TRUST_PARENT" && within(d.repo, filepath.Dir(dir)):
			d.add("agent", "ok", "gemini trusts "+d.repo+" ("+file+": "+dir+")", "")
			return
		}
	}
	d.add("agent", "problem", "gemini does not trust "+d.repo+": it exits 55 before any work",
		"trust it yourself (run gemini there once, or add \""+d.repo+"\": \"TRUST_FOLDER\" to "+file+"), or add --skip-trust to agent.command")
}

// codexTrust: Codex runs a project's hooks, and writes there headless, in a
// project of config.toml marked trusted.
func (d *doctor) codexTrust() {
	home := os.Getenv("CODEX_HOME")
	if home == "" {
		home = filepath.Join(d.home, ".codex")
	}
	file := filepath.Join(home, "config.toml")
	data, _, _ := fsx.ReadFile(file)
	if codexTrusts(data, d.repo) {
		d.add("agent", "ok", "codex trusts "+d.repo+" ("+file+")", "")
		return
	}
	d.add("agent", "problem", "codex does not trust "+d.repo+": its project hooks do not run",
		"add to "+file+": [projects."+`"`+d.repo+`"`+"] trust_level = \"trusted\" (or trust it in codex), then trust the hooks with /hooks in codex")
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

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
