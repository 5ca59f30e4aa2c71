package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// agent checks the agent CLI: on PATH, its version, and whether it trusts
// the repository.
func (d *doctor) agent(ctx context.Context) {
	if d.cfg == nil {
		return
	}
	profile := d.cfg.Agent.Profile
	cli := d.cfg.Agent.CLI()
	program := cli.Program
	if program == "" {
		program = agentcli.Program(d.cfg.Agent.Command)
	}
	if program == "" {
		return
	}
	path, err := exec.LookPath(program)
	if err != nil {
		fix := cli.Install
		if fix == "" {
			fix = "install " + program + ", or change agent.command in config.yaml"
		}
		d.add("agent", "problem", program+" (agent profile "+profile+") is not on PATH: orchestrate run cannot start the agent", fix)
		return
	}
	d.add("agent", "ok", path+" "+cliVersion(ctx, path), "")
	trust, ok := cli.Trusts(agentcli.TrustCheck{Repo: d.repo, Home: d.home, Command: d.cfg.Agent.Command, Getenv: os.Getenv})
	switch {
	case !ok:
	case trust.OK:
		d.add("agent", "ok", trust.Detail, trust.Fix)
	default:
		d.add("agent", "problem", trust.Detail, trust.Fix)
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
