package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate"
	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
)

var initCmd = &command{
	name:    "init",
	summary: "write .orchestrator/ from the bundled example; never overwrites",
	usage: `Usage: orchestrate init [--dir DIR] [--agent NAME]... [--claude] [--mcp]

Writes the workspace directory (.orchestrator/ by default) from the bundled
example: config.yaml, issue_queue.md and session_state.md. A file that is
already there is kept as it is, never overwritten. config.yaml gets the
gates of the repository's language and the agent profile's commands written
out: the claude profile's (edits accepted, the gates' commands allowed in
Bash, a pinned session), or the first --agent's.

With --mcp, also registers the MCP server (orchestrate mcp, see
orchestrate help mcp) for each --agent, merged with what is there:
claude in .mcp.json, gemini in .gemini/settings.json, cursor in
.cursor/mcp.json (mcpServers.orchestrate); for codex it prints the
command that adds it (codex mcp add).

With --agent NAME (claude, codex, gemini, cursor; repeat it for more than
one), also installs that agent's hooks in the repository (aider and
opencode have no hook that runs when they stop: --agent aider|opencode
only chooses the profile orchestrate run drives): a session-start
hook (orchestrate hook session-start) and a stop hook (orchestrate hook
stop), which run the gates when the agent says it is done (see orchestrate
help hook). --claude is --agent claude.

  claude  .claude/settings.json  SessionStart, Stop; and the /orchestrate
                                 slash command, .claude/commands/orchestrate.md
                                 (kept if there)
  codex   .codex/hooks.json      SessionStart, Stop (trust them in codex: /hooks)
  gemini  .gemini/settings.json  SessionStart, AfterAgent
  cursor  .cursor/hooks.json     sessionStart, stop (with "version": 1)

The file is merged with what is there: every other key and hook is kept,
and a hook already there is not added twice. A file that is not a JSON
object is an error, and nothing is written. The stop hook gets a timeout
that covers the configured gates (the serial gates' timeouts one after
another, then the parallel phase's, plus a minute; seconds, or
milliseconds for Gemini CLI), and Cursor's a loop_limit of the gates'
largest Max-Retries; a hook of ours already there with a smaller one (or
none) gets them: run init --agent again after adding or slowing gates. The
hooks need orchestrate on the PATH: init warns when it is not, since the
hook would fail with exit 127 and no gate would run.

config.yaml gets the default quality gates of the repository's language
when it finds one (go.mod, package.json, pyproject.toml or setup.py,
Cargo.toml), with a comment saying so.

Examples:
  orchestrate init
  orchestrate init --claude
  orchestrate init --agent codex --agent cursor
  orchestrate init --agent claude --agent gemini --mcp
  orchestrate --dir /srv/repo/.orchestrator init

Exit codes: 0 written (or everything already there), 1 error, 2 usage.
`,
	run: runInit,
}

func runInit(e *env, args []string) error {
	fs := e.flags("init")
	claude := fs.Bool("claude", false, "install Claude Code's hooks and slash command: --agent claude")
	var agents agentList
	fs.Var(&agents, "agent", "install an agent's hooks: "+strings.Join(agentNames(), ", "))
	withMCP := fs.Bool("mcp", false, "")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	if *claude {
		agents.add(agentcli.Claude)
	}
	// Everything that can be refused is checked before anything is written.
	if err := checkLinkedWorkspace(e.dir); err != nil {
		return err
	}
	setups, notes, err := planAgents(e.ws(), agents)
	if err == nil {
		err = checkInitMCP(e.ws().Root(), agents, *withMCP)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return err
	}
	unlock, err := e.ws().LockNew(e.ctx)
	if err != nil {
		return err
	}
	defer unlock()
	profile := agentcli.Claude
	if len(agents) > 0 {
		profile = agents[0] // the first agent named is the one run drives
	}
	written, kept, err := writeExample(e, profile)
	if err != nil {
		return err
	}
	var warnings, timeouts []string
	if len(setups) > 0 {
		if _, err := exec.LookPath("orchestrate"); err != nil {
			warnings = append(warnings, "orchestrate is not on the PATH: the hooks run `orchestrate hook …`, which would fail with exit 127, and no gate would run; put orchestrate on the PATH (go install, or a link in a directory of $PATH)")
		}
	}
	for _, s := range setups {
		if err := s.finish(e.ws()); err != nil {
			return err
		}
		w, k, err := s.apply()
		if err != nil {
			return err
		}
		written, kept = append(written, w...), append(kept, k...)
		warnings = append(warnings, s.warnings...)
		line := fmt.Sprintf("%s: the stop hook's timeout is %s (the gates' timeouts and a minute)", s.agent, s.timeout)
		if s.file.Note != "" {
			line += "; " + s.file.Note
		}
		timeouts = append(timeouts, line)
	}
	if *withMCP {
		w, k, n, err := registerMCP(e.ws().Root(), agents, false)
		if err != nil {
			return err
		}
		written, kept, notes = append(written, w...), append(kept, k...), append(notes, n...)
	}
	return printInit(e, written, kept, warnings, notes, timeouts)
}

// printInit says what init wrote and kept, its warnings and its notes.
func printInit(e *env, written, kept, warnings, notes, timeouts []string) error {
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "orchestrate: warning: %s\n", w)
	}
	if e.json {
		return e.printJSON(map[string]any{"dir": e.dir, "written": nonNil(written), "kept": nonNil(kept), "warnings": nonNil(warnings), "notes": nonNil(notes)})
	}
	for _, p := range written {
		fmt.Fprintf(e.stdout, "wrote %s\n", p)
	}
	for _, p := range kept {
		fmt.Fprintf(e.stdout, "kept  %s (already there)\n", p)
	}
	for _, t := range append(timeouts, notes...) {
		fmt.Fprintln(e.stdout, t)
	}
	return nil
}

// writeExample writes the example workspace's files that are not there
// yet, config.yaml with the repository's gates and the profile's
// commands; it returns the files written and those kept.
func writeExample(e *env, profile string) (written, kept []string, err error) {
	err = walkExample(func(rel string, data []byte) error {
		dst := filepath.Join(e.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(dst); err == nil {
			kept = append(kept, dst)
			return nil
		}
		if rel == loop.ConfigFile {
			data = withDefaultGates(data, e.ws().Root())
			data = withAgentCommands(data, dst, e.ws().Root(), profile)
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
	return written, kept, err
}

// planAgents plans the setup of each agent that has hooks; an agent with
// no stop hook of its own (opencode, aider) gets a note instead:
// orchestrate run drives it, with its profile's commands.
func planAgents(ws loop.Workspace, agents []string) (setups []*agentSetup, notes []string, err error) {
	for _, a := range agents {
		if cli, _ := agentcli.Lookup(a); cli.Hooks == nil {
			notes = append(notes, a+": no hooks to install (it has no hook that runs when it stops): orchestrate run drives it")
			continue
		}
		s, err := planAgent(ws, a)
		if err != nil {
			return nil, nil, err
		}
		setups = append(setups, s)
	}
	return setups, notes, nil
}

// agentList is --agent, repeated.
type agentList []string

func (a *agentList) String() string { return strings.Join(*a, ",") }

func (a *agentList) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if _, ok := agentcli.Lookup(name); !ok || name == agentcli.Custom {
			return fmt.Errorf("no agent %q: want one of %s", name, strings.Join(agentNames(), ", "))
		}
		a.add(name)
	}
	return nil
}

func (a *agentList) add(name string) {
	if !slices.Contains(*a, name) {
		*a = append(*a, name)
	}
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

// withAgentCommands writes the agent profile's commands into the example
// config: the claude profile's allow the commands of the gates it has;
// another profile's replace the claude lines, with what they let the agent do.
func withAgentCommands(cfg []byte, path, repo, profile string) []byte {
	c, problems := config.ParseIn(path, cfg, repo)
	p, ok := agentcli.Lookup(profile)
	if len(problems) > 0 || !ok || p.Command == "" {
		return cfg
	}
	claude, _ := agentcli.Lookup(agentcli.Claude)
	plain, plainResume := claude.AgentCommands(nil)
	command, resume := p.AgentCommands(config.CheckCommands(c.Gates))
	if profile == agentcli.Claude {
		cfg = bytes.Replace(cfg, []byte("command: '"+plain+"'\n"), []byte("command: '"+command+"'\n"), 1)
		return bytes.Replace(cfg, []byte("resume_command: '"+plainResume+"'\n"), []byte("resume_command: '"+resume+"'\n"), 1)
	}
	start := bytes.Index(cfg, []byte("  profile: claude"))
	end := bytes.Index(cfg, []byte("resume_command: '"+plainResume+"'\n"))
	if start < 0 || end < start {
		return cfg
	}
	end += len("resume_command: '" + plainResume + "'\n")
	var b bytes.Buffer
	fmt.Fprintf(&b, "  profile: %s   # %s\n", profile, strings.Join(agentcli.Profiles, " | "))
	fmt.Fprintf(&b, "  # The %s profile's commands, written out for you to narrow or widen. It\n", profile)
	for _, line := range wrap(p.Permissions+".", 72) {
		fmt.Fprintf(&b, "  # %s\n", line)
	}
	fmt.Fprintf(&b, "  command: '%s'\n", command)
	if resume != "" {
		fmt.Fprintf(&b, "  resume_command: '%s'\n", resume)
	}
	return append(append(append([]byte{}, cfg[:start]...), b.Bytes()...), cfg[end:]...)
}

// wrap breaks text into lines of at most width bytes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
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

// checkLinkedWorkspace refuses a workspace directory that is a symbolic
// link to a directory outside the repository that holds it (a cloned
// repository can commit .orchestrator -> $HOME): init would write there.
// Naming the target with --dir is the way to mean it.
func checkLinkedWorkspace(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	target, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("%s is a symbolic link that leads nowhere (%v); init writes nothing through it", dir, err)
	}
	repo, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(repo, target); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is a symbolic link to %s, outside the repository; init writes nothing through it: to use that directory, run orchestrate init --dir %s", dir, target, target)
	}
	return nil
}
