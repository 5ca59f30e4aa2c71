package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
)

func init() {
	register(&command{
		name:    "init",
		summary: "write .orchestrator/ from the bundled example; never overwrites",
		usage: `Usage: orchestrate init [--dir DIR] [--claude]

Writes the workspace directory (.orchestrator/ by default) from the bundled
example: config.yaml, issue_queue.md and session_state.md. A file that is
already there is kept as it is, never overwritten.

With --claude, also sets up Claude Code in the repository: the /orchestrate
slash command in .claude/commands/orchestrate.md (kept if there), and the
Stop hook, orchestrate hook stop, in .claude/settings.json, merged with what
is there: every other key and hook is kept, and a hook already there is not
added twice. A settings.json that is not a JSON object is an error, and
nothing is written. The hook needs orchestrate on the PATH.

config.yaml gets the default quality gates of the repository's language
when it finds one (go.mod, package.json, pyproject.toml or setup.py,
Cargo.toml), with a comment saying so.

Examples:
  orchestrate init
  orchestrate init --claude
  orchestrate --dir /srv/repo/.orchestrator init

Exit codes: 0 written (or everything already there), 1 error, 2 usage.
`,
		run: runInit,
	})
}

func runInit(e *env, args []string) error {
	fs := e.flags("init")
	claude := fs.Bool("claude", false, "install the slash command and the Stop hook in .claude/")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	// Everything that can be refused is checked before anything is written.
	var setup *claudeSetup
	if *claude {
		var err error
		if setup, err = planClaude(e.ws()); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return err
	}
	unlock, err := e.ws().Lock(e.ctx)
	if err != nil {
		return err
	}
	defer unlock()
	var written, kept []string
	err = walkExample(func(rel string, data []byte) error {
		dst := filepath.Join(e.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(dst); err == nil {
			kept = append(kept, dst)
			return nil
		}
		if rel == loop.ConfigFile {
			data = withDefaultGates(data, e.ws().Root())
			data = withAgentCommands(data, dst, e.ws().Root())
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := fsx.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		written = append(written, dst)
		return nil
	})
	if err != nil {
		return err
	}
	if setup != nil {
		w, k, err := setup.apply()
		if err != nil {
			return err
		}
		written, kept = append(written, w...), append(kept, k...)
	}
	if e.json {
		return e.printJSON(map[string]any{"dir": e.dir, "written": nonNil(written), "kept": nonNil(kept)})
	}
	for _, p := range written {
		fmt.Fprintf(e.stdout, "wrote %s\n", p)
	}
	for _, p := range kept {
		fmt.Fprintf(e.stdout, "kept  %s (already there)\n", p)
	}
	return nil
}

// withDefaultGates puts the default gates of the repository's language in
// place of the example config's empty gate list.
func withDefaultGates(cfg []byte, repo string) []byte {
	gates, lang := config.DefaultGates(repo)
	if lang == "" {
		return cfg
	}
	return bytes.Replace(cfg, []byte("gates: []\n"), []byte(gates), 1)
}

// withAgentCommands writes the claude profile's commands into the example
// config, allowing the agent to run the commands of the gates it has.
func withAgentCommands(cfg []byte, path, repo string) []byte {
	c, problems := config.ParseIn(path, cfg, repo)
	if len(problems) > 0 {
		return cfg
	}
	p, _ := config.LookupProfile(config.ProfileClaude)
	plain, plainResume := p.AgentCommands(nil)
	command, resume := p.AgentCommands(config.CheckCommands(c.Gates))
	cfg = bytes.Replace(cfg, []byte("command: '"+plain+"'\n"), []byte("command: '"+command+"'\n"), 1)
	return bytes.Replace(cfg, []byte("resume_command: '"+plainResume+"'\n"), []byte("resume_command: '"+resume+"'\n"), 1)
}

// walkExample calls fn with each file of the embedded example directory.
func walkExample(fn func(rel string, data []byte) error) error {
	return fs.WalkDir(orchestrate.Example, orchestrate.ExampleDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := orchestrate.Example.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(orchestrate.ExampleDir, p)
		return fn(path.Clean(filepath.ToSlash(rel)), data)
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
