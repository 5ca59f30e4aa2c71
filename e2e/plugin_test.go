package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/prompts"
)

// The Claude Code plugin: this repository is a marketplace holding the
// orchestrate plugin (.claude-plugin/, hooks/), installed with the real
// CLI's claude plugin commands into the project's home, as a user would.

// pluginSource is what a clone of this repository holds (its tracked and
// its new, not ignored, files), copied into a directory of the test's: the
// marketplace a user adds.
func pluginSource(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "orchestrate")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or not a file
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// installPlugin adds the marketplace and installs the plugin at the user's
// scope (the project's home), and returns the marketplace's directory. The
// manifests validate without a warning, and Claude Code lists the plugin
// enabled with no load error.
func (p *project) installPlugin() string {
	p.t.Helper()
	src := pluginSource(p.t)
	for _, args := range [][]string{
		{"plugin", "validate", src},
		{"plugin", "marketplace", "add", src},
		{"plugin", "install", "orchestrate@orchestrate"},
	} {
		out, code := p.exec(p.Dir, "", "claude", args...)
		if code != 0 {
			p.t.Fatalf("claude %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		if args[1] == "validate" && !regexp.MustCompile(`(?m)^✔ Validation passed$`).MatchString(out) {
			p.t.Errorf("claude plugin validate: not a clean pass\n%s", out)
		}
	}
	out, code := p.exec(p.Dir, "", "claude", "plugin", "list", "--json")
	if code != 0 {
		p.t.Fatalf("claude plugin list: exit %d\n%s", code, out)
	}
	var list []struct {
		ID      string   `json:"id"`
		Enabled bool     `json:"enabled"`
		Errors  []string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "["):]), &list); err != nil {
		p.t.Fatalf("claude plugin list --json: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].ID != "orchestrate@orchestrate" || !list[0].Enabled || len(list[0].Errors) > 0 {
		p.t.Fatalf("claude plugin list --json after the install: %s", out)
	}
	return src
}

// initWorkspace writes .orchestrator/ without any agent's hooks: the
// plugin brings them.
func (p *project) initWorkspace(gates string) {
	p.t.Helper()
	p.mustOrchestrate("init")
	p.config(gates)
	if _, err := os.Stat(p.path(".claude")); err == nil {
		p.t.Fatalf("orchestrate init wrote .claude/; the plugin's hooks are the only ones wanted here")
	}
}

// writesThenSays is an agent that writes content to path, then says text
// and stops.
func writesThenSays(path, content, text string) script {
	return func(c *conv) turn {
		if c.answered() {
			return say(text)
		}
		return turn{Tools: []tool{write(path, content)}}
	}
}

var statusRow = regexp.MustCompile(`(?i)\|\s*status\s*\|\s*(\w+)\s*\|`)

// The plugin's Stop hook runs the loop: the gate fails, the agent gets the
// feedback, the fix lands, the issue is resolved.
func TestPluginStopHookFixes(t *testing.T) {
	m := newModel(t, route{"PLUGINFIX", fixInSteps})
	p := newProject(t, m, stepsProject)
	p.installPlugin()
	p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")

	out, code := p.claudeEdits(".", "PLUGINFIX: make check.sh pass")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q; want the fix the feedback led to", got)
	}
	if n := len(hookFeedback(m, "PLUGINFIX")); n != 1 {
		t.Errorf("the model got the plugin hook's feedback %d times; want 1", n)
	}
	q := p.read(".orchestrator/issue_queue.md")
	if st := statusRow.FindAllStringSubmatch(q, -1); len(st) != 1 || st[0][1] != "resolved" {
		t.Errorf("want one resolved issue:\n%s", q)
	}
}

// In a repository without .orchestrator/, the plugin does nothing: no gate
// runs, no file is written, the agent stops at once.
func TestPluginIdleWithoutWorkspace(t *testing.T) {
	m := newModel(t, route{"IDLE", writesThenSays("state.txt", "fixed=1\n", "Done.")})
	p := newProject(t, m, stepsProject)
	p.installPlugin()

	out, code := p.claudeEdits(".", "IDLE: change state.txt")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	if n := len(hookFeedback(m, "IDLE")); n != 0 {
		t.Errorf("the model got gate feedback %d times in a repository without .orchestrator/", n)
	}
	if st := p.git("status", "--porcelain", "--untracked-files=all"); st != " M state.txt\n" {
		t.Errorf("git status after the session:\n%s\nwant only the agent's own change", st)
	}
}

// On the pinned Claude Code and on the oldest the docs claim, the plugin
// installs and loads with no warning or error, its hooks run, and its
// slash command is listed and sends its text, the text orchestrate init
// --claude writes, to the model.
func TestPluginLoadsOnEachVersion(t *testing.T) {
	for _, cli := range []agentCLI{claudeCLI, claudeOldestCLI} {
		t.Run(cli.env, func(t *testing.T) {
			m := newModel(t, route{"SLASHTASK", func(c *conv) turn { return say("Nothing to change.") }})
			p := newAgentProject(t, m, cli, stepsProject)
			p.installPlugin()
			p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")
			out, code := p.claude(".", "/orchestrate:orchestrate SLASHTASK", "-p", "--output-format", "stream-json", "--verbose")
			if code != 0 {
				t.Fatalf("claude: exit %d\n%s", code, tail(out, 3000))
			}
			var init struct {
				Version       string   `json:"claude_code_version"`
				SlashCommands []string `json:"slash_commands"`
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, `"subtype":"init"`) {
					if err := json.Unmarshal([]byte(line), &init); err != nil {
						t.Fatalf("the init message: %v\n%s", err, line)
					}
					break
				}
			}
			t.Logf("Claude Code %s", init.Version)
			if !slices.Contains(init.SlashCommands, "orchestrate:orchestrate") {
				t.Errorf("the session's slash commands %q lack orchestrate:orchestrate", init.SlashCommands)
			}
			want, err := prompts.Load("", "commands/orchestrate.md")
			if err != nil {
				t.Fatal(err)
			}
			// The body, past the front matter, with the task in place of
			// $ARGUMENTS.
			body := want[strings.Index(want[3:], "---\n")+7:]
			body = strings.TrimSpace(strings.ReplaceAll(body, "$ARGUMENTS", "SLASHTASK"))
			if sent := m.requests("SLASHTASK"); len(sent) == 0 || !strings.Contains(sent[0].first(), body) {
				t.Errorf("the model did not get the slash command's text:\n%s", m.dump(3000))
			}
			// The Stop hook ran: the gate failed and filed its issue.
			if q := p.read(".orchestrator/issue_queue.md"); !strings.Contains(q, "check") {
				t.Errorf("the plugin's Stop hook did not run the gate:\n%s", q)
			}
		})
	}
}

// Two sessions in one repository: the second, which fixes what halted the
// first, never touches the first's issue.
func TestPluginSessionsKeepToTheirOwn(t *testing.T) {
	const a, b = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	m := newModel(t,
		route{"NEVERFIX", writesThenSays("state.txt", "fixed=1\n", "Done.")},
		route{"REALFIX", writesThenSays("state.txt", "fixed=2\n", "Fixed.")})
	p := newProject(t, m, stepsProject)
	p.installPlugin()
	p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")

	if out, code := p.claude(".", "NEVERFIX: make check.sh pass", "-p", "--permission-mode", "acceptEdits", "--session-id", a); code != 0 {
		t.Fatalf("claude (session a): exit %d\n%s", code, out)
	}
	before := p.read(".orchestrator/issue_queue.md")
	if !strings.Contains(before, a) || !regexp.MustCompile(`(?i)\|\s*halted\s*\|\s*true\s*\|`).MatchString(before) {
		t.Fatalf("session a's issue is not halted:\n%s", before)
	}
	if out, code := p.claude(".", "REALFIX: make check.sh pass", "-p", "--permission-mode", "acceptEdits", "--session-id", b); code != 0 {
		t.Fatalf("claude (session b): exit %d\n%s", code, out)
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Fatalf("state.txt = %q after session b", got)
	}
	if after := p.read(".orchestrator/issue_queue.md"); after != before {
		t.Errorf("session b changed session a's issues:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// With the plugin and the hooks orchestrate init --claude writes, one stop
// runs the gates once.
func TestPluginAndProjectHooksRunOnce(t *testing.T) {
	m := newModel(t, route{"ONCE", writesThenSays("state.txt", "fixed=2\n", "Done.")})
	p := newProject(t, m, stepsProject)
	p.installPlugin()
	p.mustOrchestrate("init", "--claude")
	count := filepath.Join(p.Home, "gate-runs")
	p.config("gates:\n  - name: check\n    command: echo run >> " + count + " && sh check.sh\n")

	if out, code := p.claudeEdits(".", "ONCE: make check.sh pass"); code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(count)
	if err != nil {
		t.Fatalf("the gate never ran: %v", err)
	}
	if n := strings.Count(string(data), "run\n"); n != 1 {
		t.Errorf("one stop ran the gate %d times; want 1", n)
	}
}

// Without the orchestrate binary, the plugin says so at the session's
// start, with the command that installs it, and the agent stops as usual.
func TestPluginWithoutBinary(t *testing.T) {
	m := newModel(t, route{"NOBIN", writesThenSays("state.txt", "fixed=1\n", "Done.")})
	p := newProject(t, m, stepsProject)
	src := p.installPlugin()
	p.initWorkspace("gates:\n  - name: check\n    command: sh check.sh\n")
	// orchestrate leaves PATH: only claude stays.
	bin := filepath.Join(filepath.Dir(p.Dir), "bin")
	if err := os.Remove(filepath.Join(bin, "orchestrate")); err != nil {
		t.Fatal(err)
	}
	out, code := p.claude(".", "NOBIN: change state.txt",
		"-p", "--permission-mode", "acceptEdits", "--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	// The command names the plugin's own source: where claude keeps it.
	install := regexp.MustCompile(`cd '([^']+)' && go install ./cmd/orchestrate`).FindStringSubmatch(out)
	if install == nil {
		t.Fatalf("the session's output does not say how to install orchestrate:\n%s", tail(out, 3000))
	}
	if _, err := os.Stat(filepath.Join(install[1], "cmd", "orchestrate", "main.go")); err != nil {
		t.Errorf("the install command's directory %s holds no source (the marketplace is %s): %v", install[1], src, err)
	}
	if n := len(hookFeedback(m, "NOBIN")); n != 0 {
		t.Errorf("the model got gate feedback %d times without orchestrate", n)
	}
}

// Uninstalling leaves nothing of the plugin's in the user's settings.
func TestPluginUninstall(t *testing.T) {
	m := newModel(t)
	p := newProject(t, m, stepsProject)
	p.installPlugin()
	for _, args := range [][]string{
		{"plugin", "uninstall", "orchestrate@orchestrate"},
		{"plugin", "marketplace", "remove", "orchestrate"},
	} {
		if out, code := p.exec(p.Dir, "", "claude", args...); code != 0 {
			t.Fatalf("claude %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	for _, f := range []string{".claude/settings.json", ".claude/plugins/installed_plugins.json", ".claude/plugins/known_marketplaces.json"} {
		data, err := os.ReadFile(filepath.Join(p.Home, f))
		if err != nil {
			continue
		}
		if strings.Contains(string(data), "orchestrate") {
			t.Errorf("~/%s still names orchestrate after the uninstall:\n%s", f, data)
		}
	}
	if out, _ := p.exec(p.Dir, "", "claude", "plugin", "list", "--json"); strings.Contains(out, "orchestrate") {
		t.Errorf("claude plugin list after the uninstall:\n%s", out)
	}
}
