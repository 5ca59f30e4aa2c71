package orchestrate_test

// The Claude Code plugin's files, and its hook script run as Claude Code
// runs it (sh, the session's JSON on stdin, CLAUDE_PROJECT_DIR set): the
// real CLI's side is in e2e/plugin_test.go.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/prompts"
)

// The manifests name the plugin's parts by paths inside it, and each part
// is there: the hooks by ${CLAUDE_PLUGIN_ROOT} in hooks/hooks.json, which
// Claude Code loads by convention, the slash command by the embedded
// template orchestrate init writes too.
func TestPluginManifests(t *testing.T) {
	var market struct {
		Name    string `json:"name"`
		Plugins []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"plugins"`
	}
	readJSON(t, ".claude-plugin/marketplace.json", &market)
	if market.Name != "orchestrate" || len(market.Plugins) != 1 || market.Plugins[0].Name != "orchestrate" || market.Plugins[0].Source != "./" {
		t.Errorf("marketplace.json: %+v; want the marketplace orchestrate holding the plugin orchestrate at ./", market)
	}
	var plugin struct {
		Name     string   `json:"name"`
		Version  string   `json:"version"`
		Commands []string `json:"commands"`
	}
	readJSON(t, ".claude-plugin/plugin.json", &plugin)
	if plugin.Name != "orchestrate" || plugin.Version == "" {
		t.Errorf("plugin.json: name %q, version %q", plugin.Name, plugin.Version)
	}
	checkPluginFields(t)
	checkPluginCommand(t, plugin.Commands)
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, "hooks/hooks.json", &hooks)
	var events []string
	for event, groups := range hooks.Hooks {
		events = append(events, event)
		for _, g := range groups {
			for _, h := range g.Hooks {
				script, arg, _ := strings.Cut(h.Command, " ")
				path, ok := strings.CutPrefix(strings.Trim(script, `"`), "${CLAUDE_PLUGIN_ROOT}/")
				if !ok {
					t.Errorf("%s hook %q: not under ${CLAUDE_PLUGIN_ROOT}", event, h.Command)
					continue
				}
				if info, err := os.Stat(path); err != nil || info.Mode()&0o111 == 0 {
					t.Errorf("%s hook: %s is not an executable file (%v)", event, path, err)
				}
				if want := map[string]string{"Stop": "stop", "SessionStart": "session-start"}[event]; arg != want {
					t.Errorf("%s hook runs %q; want %q", event, arg, want)
				}
				if event == "Stop" && h.Timeout != pluginStopTimeout {
					t.Errorf("Stop hook timeout %d s; want an hour, %d s (Claude Code reads seconds)", h.Timeout, pluginStopTimeout)
				}
			}
		}
	}
	slices.Sort(events)
	if !slices.Equal(events, []string{"SessionStart", "Stop"}) {
		t.Errorf("hooks.json events %v", events)
	}
}

// pluginStopTimeout is the plugin's Stop hook timeout, in seconds: an
// hour, as docs/plugin.md says.
const pluginStopTimeout = 3600

// pluginFields are the fields of plugin.json that every Claude Code the
// docs claim (2.1.197 and newer) knows: an older one warns of any other
// ("Unknown field 'network'") in claude plugin validate.
var pluginFields = []string{"agents", "author", "commands", "dependencies", "description", "homepage", "hooks",
	"keywords", "license", "lspServers", "mcpServers", "name", "outputStyles", "repository", "skills", "userConfig", "version"}

// checkPluginFields checks that plugin.json holds only pluginFields, and
// that its hooks do not name hooks/hooks.json: Claude Code loads that file
// by convention, and 2.1.197 fails the plugin's hooks when the manifest
// names it too ("Duplicate hooks file detected").
func checkPluginFields(t *testing.T) {
	var fields map[string]json.RawMessage
	readJSON(t, ".claude-plugin/plugin.json", &fields)
	for name, value := range fields {
		if !slices.Contains(pluginFields, name) {
			t.Errorf("plugin.json: field %q is not one every Claude Code from 2.1 knows", name)
		}
		if name == "hooks" && strings.Contains(string(value), "hooks/hooks.json") {
			t.Errorf("plugin.json: hooks %s names hooks/hooks.json, which Claude Code loads by itself", value)
		}
	}
}

// checkPluginCommand checks that the plugin's one slash command is the
// file orchestrate init --claude writes to .claude/commands/.
func checkPluginCommand(t *testing.T, commands []string) {
	want, err := prompts.Load("", "commands/orchestrate.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(commands) != 1 {
		t.Fatalf("plugin.json: commands %q; want the one slash command", commands)
	}
	got, err := os.ReadFile(commands[0])
	if err != nil {
		t.Fatalf("plugin.json: command %s: %v", commands[0], err)
	}
	if string(got) != want {
		t.Errorf("plugin.json: command %s is not the text orchestrate init --claude writes", commands[0])
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// hookScript is the plugin's hook, by its absolute path.
func hookScript(t testing.TB) string {
	abs, err := filepath.Abs(filepath.Join("hooks", "orchestrate-hook"))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// runPluginHook runs the plugin's hook for event in dir with the payload
// on stdin, PATH holding only bin and the system's directories.
func runPluginHook(t testing.TB, dir, bin, event, payload string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(hookScript(t), event)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir, "CLAUDE_PROJECT_DIR=" + dir}, env...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// fakeOrchestrate puts on bin an orchestrate that records its arguments
// and stdin in log and answers with out and exit code code.
func fakeOrchestrate(t *testing.T, bin, log, out string, code int) {
	t.Helper()
	script := "#!/bin/sh\necho \"$@\" >> " + log + "\ncat >> " + log + "\nprintf '%s' '" + out + "'\nexit " + string(rune('0'+code)) + "\n"
	if err := os.WriteFile(filepath.Join(bin, "orchestrate"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestPluginHookScript(t *testing.T) {
	const payload = `{"session_id":"s1","cwd":"x","hook_event_name":"Stop"}`
	newRepo := func(t *testing.T, workspace bool) (dir, bin, log string) {
		root := t.TempDir()
		dir, bin = filepath.Join(root, "repo"), filepath.Join(root, "bin")
		for _, d := range []string{filepath.Join(dir, ".git"), filepath.Join(dir, "sub"), bin} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if workspace {
			if err := os.Mkdir(filepath.Join(dir, ".orchestrator"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir, bin, filepath.Join(root, "log")
	}
	t.Run("no workspace: nothing runs", func(t *testing.T) {
		dir, bin, log := newRepo(t, false)
		fakeOrchestrate(t, bin, log, `{"decision":"block","reason":"x"}`, 0)
		for _, event := range []string{"stop", "session-start"} {
			out, _, code := runPluginHook(t, filepath.Join(dir, "sub"), bin, event, payload, "CLAUDE_PROJECT_DIR="+filepath.Join(dir, "sub"))
			if out != "" || code != 0 {
				t.Errorf("%s: stdout %q, exit %d; want nothing, 0", event, out, code)
			}
		}
		if _, err := os.Stat(log); err == nil {
			t.Errorf("orchestrate ran in a repository without .orchestrator/")
		}
	})
	t.Run("workspace: orchestrate hook EVENT --plugin gets the input", func(t *testing.T) {
		dir, bin, log := newRepo(t, true)
		fakeOrchestrate(t, bin, log, `{"decision":"block","reason":"x"}`, 0)
		out, _, code := runPluginHook(t, filepath.Join(dir, "sub"), bin, "stop", payload, "CLAUDE_PROJECT_DIR=")
		if out != `{"decision":"block","reason":"x"}` || code != 0 {
			t.Errorf("stdout %q, exit %d; want orchestrate's answer, 0", out, code)
		}
		if got, _ := os.ReadFile(log); string(got) != "hook stop --plugin\n"+payload+"\n" {
			t.Errorf("orchestrate got %q", got)
		}
	})
	t.Run("the project directory's workspace, from a directory outside it", func(t *testing.T) {
		dir, bin, log := newRepo(t, true)
		fakeOrchestrate(t, bin, log, `{"decision":"block","reason":"x"}`, 0)
		elsewhere := t.TempDir()
		out, _, code := runPluginHook(t, elsewhere, bin, "stop", payload, "CLAUDE_PROJECT_DIR="+dir)
		if out != `{"decision":"block","reason":"x"}` || code != 0 {
			t.Errorf("stdout %q, exit %d; want orchestrate's answer, 0", out, code)
		}
		if got, _ := os.ReadFile(log); string(got) != "hook stop --plugin\n"+payload+"\n" {
			t.Errorf("orchestrate got %q", got)
		}
	})
	t.Run("a process orchestrate launched: nothing runs", func(t *testing.T) {
		dir, bin, log := newRepo(t, true)
		fakeOrchestrate(t, bin, log, "", 0)
		if out, _, code := runPluginHook(t, dir, bin, "stop", payload, "ORCHESTRATE_CHILD=1"); out != "" || code != 0 {
			t.Errorf("stdout %q, exit %d", out, code)
		}
		if _, err := os.Stat(log); err == nil {
			t.Errorf("orchestrate ran under ORCHESTRATE_CHILD=1")
		}
	})
	t.Run("no binary: said at the session's start, once", func(t *testing.T) {
		dir, bin, _ := newRepo(t, true)
		out, _, code := runPluginHook(t, dir, bin, "session-start", `{"session_id":"s1","source":"startup"}`)
		var msg struct{ SystemMessage string }
		if err := json.Unmarshal([]byte(out), &msg); err != nil || code != 0 {
			t.Fatalf("stdout %q (%v), exit %d; want a systemMessage, 0", out, err, code)
		}
		root, _ := filepath.Abs(".")
		if want := "(cd '" + root + "' && go install ./cmd/orchestrate)"; !strings.Contains(msg.SystemMessage, "not on PATH") || !strings.Contains(msg.SystemMessage, want) {
			t.Errorf("systemMessage %q; want it to say orchestrate is missing and %s", msg.SystemMessage, want)
		}
		for _, c := range []struct{ event, payload string }{
			{"stop", payload},
			{"session-start", `{"session_id":"s1","source": "compact"}`},
		} {
			if out, _, code := runPluginHook(t, dir, bin, c.event, c.payload); out != "" || code != 0 {
				t.Errorf("%s %s: stdout %q, exit %d; want nothing, 0", c.event, c.payload, out, code)
			}
		}
	})
	t.Run("an orchestrate without --plugin: said as too old", func(t *testing.T) {
		dir, bin, log := newRepo(t, true)
		fakeOrchestrate(t, bin, log, "", 2)
		out, _, code := runPluginHook(t, dir, bin, "session-start", `{"session_id":"s1","source":"startup"}`)
		if !strings.Contains(out, "too old for this plugin") || code != 0 {
			t.Errorf("stdout %q, exit %d", out, code)
		}
		if out, _, code := runPluginHook(t, dir, bin, "stop", payload); out != "" || code != 0 {
			t.Errorf("stop: stdout %q, exit %d; want nothing, 0", out, code)
		}
	})
}

// The hook's cost where it does not apply: a Stop in a repository without
// .orchestrator/, as the median wall time of a run, beside sh -c true run
// the same way. It fails past 20 ms.
func BenchmarkPluginHookIdle(b *testing.B) {
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b", ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	const payload = `{"session_id":"s1","cwd":"x","hook_event_name":"Stop"}`
	median := func(cmd func() *exec.Cmd) time.Duration {
		var d []time.Duration
		for range 51 {
			c := cmd()
			c.Stdin = strings.NewReader(payload)
			start := time.Now()
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	script := hookScript(b)
	for b.Loop() {
		hook := median(func() *exec.Cmd {
			c := exec.Command(script, "stop")
			c.Dir, c.Env = filepath.Join(dir, "a", "b"), []string{"PATH=/usr/bin:/bin", "CLAUDE_PROJECT_DIR=" + filepath.Join(dir, "a", "b")}
			return c
		})
		base := median(func() *exec.Cmd { return exec.Command("sh", "-c", "cat >/dev/null") })
		b.ReportMetric(float64(hook.Microseconds())/1000, "ms/idle-hook")
		b.ReportMetric(float64(base.Microseconds())/1000, "ms/sh-cat")
		if hook > 20*time.Millisecond {
			b.Fatalf("the idle plugin hook took %v at the median; the bound is 20ms", hook)
		}
	}
}

// The Gemini CLI extension's hooks (gemini-extension/hooks/hooks.json),
// each command run as Gemini CLI runs it (bash -c, the payload on stdin,
// in the session's directory).
func TestGeminiExtensionHooks(t *testing.T) {
	var file struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	readJSON(t, "gemini-extension/hooks/hooks.json", &file)
	var manifest struct{ Name, Version string }
	readJSON(t, "gemini-extension/gemini-extension.json", &manifest)
	if manifest.Name != "orchestrate" || manifest.Version == "" {
		t.Errorf("gemini-extension.json: %+v", manifest)
	}
	command := func(event string) string {
		if len(file.Hooks[event]) != 1 || len(file.Hooks[event][0].Hooks) != 1 {
			t.Fatalf("hooks.json: want one %s hook", event)
		}
		return file.Hooks[event][0].Hooks[0].Command
	}
	start, stop := command("SessionStart"), command("AfterAgent")
	if ms := file.Hooks["AfterAgent"][0].Hooks[0].Timeout; ms != pluginStopTimeout*1000 {
		t.Errorf("AfterAgent timeout %d ms; want the plugin's hour, %d ms (Gemini CLI reads milliseconds)", ms, pluginStopTimeout*1000)
	}
	runHook := func(t *testing.T, dir, bin, cmd string) string {
		c := exec.Command("bash", "-c", cmd)
		c.Dir, c.Env = dir, []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}
		c.Stdin = strings.NewReader(`{"session_id":"g1","hook_event_name":"AfterAgent"}`)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return string(out)
	}
	newDir := func(t *testing.T, workspace bool) (dir, bin string) {
		dir, bin = t.TempDir(), t.TempDir()
		if workspace {
			if err := os.Mkdir(filepath.Join(dir, ".orchestrator"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir, bin
	}
	t.Run("no binary, no workspace: nothing said", func(t *testing.T) {
		dir, bin := newDir(t, false)
		for _, cmd := range []string{start, stop} {
			if out := runHook(t, dir, bin, cmd); out != "{}\n" {
				t.Errorf("stdout %q; want {}", out)
			}
		}
	})
	t.Run("no binary in a workspace: said at the start", func(t *testing.T) {
		dir, bin := newDir(t, true)
		var msg struct{ SystemMessage string }
		if err := json.Unmarshal([]byte(runHook(t, dir, bin, start)), &msg); err != nil || !strings.Contains(msg.SystemMessage, "not on PATH") || !strings.Contains(msg.SystemMessage, "go install ./cmd/orchestrate") {
			t.Errorf("SessionStart: %q, %v", msg.SystemMessage, err)
		}
		if out := runHook(t, dir, bin, stop); out != "{}\n" {
			t.Errorf("AfterAgent: %q; want {}", out)
		}
	})
	t.Run("orchestrate hook EVENT --agent gemini --plugin", func(t *testing.T) {
		dir, bin := newDir(t, true)
		log := filepath.Join(dir, "log")
		fakeOrchestrate(t, bin, log, `{"decision":"deny","reason":"x"}`, 0)
		if out := runHook(t, dir, bin, stop); out != `{"decision":"deny","reason":"x"}` {
			t.Errorf("AfterAgent: %q; want orchestrate's answer", out)
		}
		if got, _ := os.ReadFile(log); !strings.HasPrefix(string(got), "hook stop --agent gemini --plugin\n{") {
			t.Errorf("orchestrate got %q", got)
		}
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		runHook(t, dir, bin, start)
		if got, _ := os.ReadFile(log); !strings.HasPrefix(string(got), "hook session-start --agent gemini --plugin\n{") {
			t.Errorf("SessionStart: orchestrate got %q; want hook session-start", got)
		}
	})
	t.Run("too old an orchestrate: said at the start, never a deny", func(t *testing.T) {
		dir, bin := newDir(t, true)
		fakeOrchestrate(t, bin, filepath.Join(dir, "log"), "", 2)
		if out := runHook(t, dir, bin, start); !strings.Contains(out, "too old for this extension") {
			t.Errorf("SessionStart: %q", out)
		}
		if out := runHook(t, dir, bin, stop); out != "{}\n" {
			t.Errorf("AfterAgent: %q; want {}", out)
		}
	})
}
