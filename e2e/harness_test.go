package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// orchestrateBin is the orchestrate binary the tests build once.
var orchestrateBin string

// goEnv is the Go environment the projects' gates share with the tests: the
// build cache (so that go test is not built from nothing in each new home),
// offline.
var goEnv []string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: the real agent CLIs run without -short")
		return 0
	}
	if claudeCLI.path() == "" && codexCLI.path() == "" && opencodeCLI.path() == "" && geminiCLI.path() == "" && mcpSDKDir() == "" {
		return m.Run() // every test skips (or fails, under CI) on its own
	}
	dir, err := os.MkdirTemp("", "orchestrate-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildOrchestrate(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// buildOrchestrate builds orchestrate into dir, static as make build
// makes it, as orchestrateBin, and notes the Go environment the projects'
// gates share (goEnv).
func buildOrchestrate(dir string) error {
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err == nil && len(bytes.TrimSpace(out)) > 0 {
			goEnv = append(goEnv, k+"="+string(bytes.TrimSpace(out)))
		}
	}
	goEnv = append(goEnv, "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=")
	bin := filepath.Join(dir, "orchestrate")
	build := exec.Command("go", "build", "-o", bin, "../cmd/orchestrate")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building orchestrate: %v\n%s", err, out)
	}
	orchestrateBin = bin
	return nil
}

// agentCLI is an agent CLI the tests drive: where they find it, and how
// its absence is told.
type agentCLI struct {
	name    string // its command
	what    string // its name for people
	pkg     string // its npm package
	cache   string // the directory under .cache/ where .ci/run installs it
	env     string // the variable that holds its path
	require string // the variable that, set to 1, makes its absence a failure
}

var (
	claudeCLI   = agentCLI{"claude", "the Claude Code CLI", "@anthropic-ai/claude-code", "claude-code", "ORCHESTRATE_CLAUDE", "ORCHESTRATE_REQUIRE_CLAUDE"}
	codexCLI    = agentCLI{"codex", "the Codex CLI", "@openai/codex", "codex", "ORCHESTRATE_CODEX", "ORCHESTRATE_REQUIRE_CODEX"}
	opencodeCLI = agentCLI{"opencode", "opencode", "opencode-ai", "opencode", "ORCHESTRATE_OPENCODE", "ORCHESTRATE_REQUIRE_OPENCODE"}
	geminiCLI   = agentCLI{"gemini", "the Gemini CLI", "@google/gemini-cli", "gemini-cli", "ORCHESTRATE_GEMINI", "ORCHESTRATE_REQUIRE_GEMINI"}
	// claudeOldestCLI is the oldest Claude Code the plugin's docs claim,
	// beside the pinned one: only by its variable or .ci/run's cache, never
	// the claude on PATH.
	claudeOldestCLI = agentCLI{"claude", "Claude Code 2.1.197", "@anthropic-ai/claude-code@2.1.197", "claude-code-oldest", "ORCHESTRATE_CLAUDE_OLDEST", "ORCHESTRATE_REQUIRE_CLAUDE_OLDEST"}
)

// path finds the CLI: its variable, then the copy .ci/run caches in
// .cache/, then its command on PATH; "" when there is none.
func (a agentCLI) path() string {
	if p := os.Getenv(a.env); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if abs, err := filepath.Abs(filepath.Join("..", ".cache", a.cache, "node_modules", ".bin", a.name)); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	if a == claudeOldestCLI {
		return ""
	}
	p, err := exec.LookPath(a.name)
	if err != nil {
		return ""
	}
	return p
}

// need skips the test when the CLI is missing, or fails it when its
// require variable (CI) says it must be there.
func (a agentCLI) need(t *testing.T) string {
	t.Helper()
	p := a.path()
	if p == "" {
		if os.Getenv(a.require) == "1" {
			t.Fatalf("%s=1 but %s is missing: set %s to its path, or put %s on PATH (npm install %s)", a.require, a.what, a.env, a.name, a.pkg)
		}
		t.Skipf("%s is missing (npm install %s, then put %s on PATH or set %s); set %s=1 to fail instead", a.what, a.pkg, a.name, a.env, a.require)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s: %v", a.env, err)
	}
	return p
}

// project is a git repository with orchestrate and the CLI on PATH, a home of
// its own, and the CLI pointed at the scripted model.
type project struct {
	t    *testing.T
	Dir  string
	Home string
	env  []string
}

// newProject is a project for Claude Code.
func newProject(t *testing.T, m *model, files map[string]string) *project {
	t.Helper()
	return newAgentProject(t, m, claudeCLI, files)
}

// newAgentProject is a project whose agent CLI is a, pointed at m.
func newAgentProject(t *testing.T, m *model, a agentCLI, files map[string]string) *project {
	t.Helper()
	cli := a.need(t)
	root := t.TempDir()
	p := &project{t: t, Dir: filepath.Join(root, "repo"), Home: filepath.Join(root, "home")}
	for _, d := range []string{p.Dir, p.Home, filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The CLI and orchestrate, by their names, on PATH.
	for name, target := range map[string]string{a.name: cli, "orchestrate": orchestrateBin} {
		if err := os.Symlink(target, filepath.Join(root, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	p.env = append(cleanEnv(),
		"PATH="+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+p.Home,
		"XDG_CONFIG_HOME="+filepath.Join(p.Home, ".config"),
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com",
	)
	p.env = append(p.env, p.agentSetup(a, m)...)
	p.env = append(p.env, goEnv...)
	for name, content := range files {
		p.write(name, content)
	}
	p.git("init", "-q", "-b", "main")
	p.git("add", "-A")
	p.git("commit", "-q", "-m", "start")
	// The hooks leave orchestrate analytics --if-stale at work in the
	// background: the directory waits for it (registered after t.TempDir,
	// this runs before the directory goes).
	t.Cleanup(func() { waitAnalytics(p.path(".orchestrator")) })
	return p
}

// agentSetup points the CLI at the scripted model, with only the model's
// requests (no telemetry, error reports, updates), and returns its
// environment.
func (p *project) agentSetup(a agentCLI, m *model) []string {
	switch a {
	case codexCLI:
		p.writeHome(".codex/config.toml", codexConfig(m))
		// Codex runs its commands in a login shell, whose /etc/profile sets
		// PATH anew: the home's profile puts back the project's, as a
		// person's own does.
		p.writeHome(".profile", "PATH="+shQuote(p.getenv("PATH"))+"\nexport PATH\n")
		return []string{"CODEX_HOME=" + filepath.Join(p.Home, ".codex"), "E2E_OPENAI_API_KEY=sk-e2e-not-a-key"}
	case geminiCLI:
		// Signed in with an API key; the folder trusted, which is the
		// person's decision (GEMINI_CLI_TRUST_WORKSPACE).
		p.writeHome(".gemini/settings.json", `{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},`+
			`"telemetry":{"enabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}`)
		return []string{"GEMINI_API_KEY=e2e-not-a-key", "GOOGLE_GEMINI_BASE_URL=" + m.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"}
	case opencodeCLI:
		p.writeHome(".config/opencode/opencode.json", opencodeConfig(m))
		return []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1"}
	}
	return []string{
		"ANTHROPIC_BASE_URL=" + m.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
	}
}

// codexConfig is $CODEX_HOME/config.toml: the scripted model as a provider
// of its own (no login: the key comes from the environment), nothing else
// sent anywhere.
func codexConfig(m *model) string {
	return `model = "gpt-e2e"
model_provider = "e2e"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.e2e]
name = "scripted"
base_url = "` + m.URL + `/v1"
env_key = "E2E_OPENAI_API_KEY"
wire_api = "responses"
`
}

// getenv is a variable of the project's environment.
func (p *project) getenv(key string) string {
	for _, kv := range p.env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// opencodeConfig is opencode's global opencode.json: the scripted model as
// an OpenAI-compatible provider of its own, the default model; no update,
// no sharing, no models.dev (OPENCODE_DISABLE_MODELS_FETCH).
func opencodeConfig(m *model) string {
	return `{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "e2e": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "scripted",
      "options": {"baseURL": "` + m.URL + `/v1", "apiKey": "sk-e2e-not-a-key"},
      "models": {"e2e-model": {"name": "scripted model"}}
    }
  },
  "model": "e2e/e2e-model",
  "small_model": "e2e/e2e-model",
  "autoupdate": false,
  "share": "disabled"
}
`
}

// writeHome writes a file under the project's home.
func (p *project) writeHome(name, content string) {
	p.t.Helper()
	path := filepath.Join(p.Home, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// waitAnalytics waits until no background refresh is making the page of
// the workspace at ws: the command that starts one takes the page's lock
// for it, and the refresh holds it to its end, so once the commands are
// done the lock free means none is left; at most a minute.
func waitAnalytics(ws string) {
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return
	}
	w := loop.Workspace{Dir: ws}
	for start := time.Now(); refreshing(w) && time.Since(start) < time.Minute; {
		time.Sleep(5 * time.Millisecond)
	}
}

// refreshing reports whether a process is making w's page now: one holds
// its lock.
func refreshing(w loop.Workspace) bool {
	unlock, err := fsx.TryLock(w.Path(loop.AnalyticsLockFile))
	if err != nil {
		return true
	}
	unlock()
	return false
}

// cleanEnv is the test's environment without what would point the CLI or
// orchestrate elsewhere.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || strings.HasPrefix(k, "ORCHESTRAT") ||
			strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "CODEX_") || strings.HasPrefix(k, "OPENCODE") ||
			strings.HasPrefix(k, "GEMINI_") || strings.HasPrefix(k, "GOOGLE_") ||
			strings.HasPrefix(k, "GIT_") || strings.HasPrefix(k, "GO") || k == "HOME" || k == "PATH" || k == "XDG_CONFIG_HOME" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (p *project) path(name string) string { return filepath.Join(p.Dir, filepath.FromSlash(name)) }

func (p *project) write(name, content string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p.path(name)), 0o755); err != nil {
		p.t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if strings.HasSuffix(name, ".sh") {
		mode = 0o755
	}
	if err := os.WriteFile(p.path(name), []byte(content), mode); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) read(name string) string {
	p.t.Helper()
	data, err := os.ReadFile(p.path(name))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(data)
}

func (p *project) git(args ...string) string {
	p.t.Helper()
	out, code := p.exec(p.Dir, "", "git", args...)
	if code != 0 {
		p.t.Fatalf("git %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// exec runs a command in dir with the project's environment and stdin, and
// returns its combined output and exit code.
func (p *project) exec(dir, stdin, name string, args ...string) (string, int) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.lookPath(name), args...)
	cmd.Dir, cmd.Env = dir, p.env
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		p.t.Fatalf("%s: %v", name, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// lookPath finds name on the project's PATH.
func (p *project) lookPath(name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, kv := range p.env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(path) {
				if info, err := os.Stat(filepath.Join(dir, name)); err == nil && !info.IsDir() {
					return filepath.Join(dir, name)
				}
			}
		}
	}
	return name
}

// orchestrate runs orchestrate in the repository.
func (p *project) orchestrate(args ...string) (string, int) {
	p.t.Helper()
	return p.exec(p.Dir, "", "orchestrate", args...)
}

// claude runs the CLI in dir (relative to the repository) with prompt as
// its argument.
func (p *project) claude(dir, prompt string, args ...string) (string, int) {
	p.t.Helper()
	return p.exec(p.path(dir), "", "claude", append(args, "--", prompt)...)
}
