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
	if claudePath() == "" {
		return m.Run() // every test skips (or fails, under CI) on its own
	}
	dir, err := os.MkdirTemp("", "orchestrate-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	orchestrateBin = filepath.Join(dir, "orchestrate")
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		out, err := exec.Command("go", "env", k).Output()
		if err == nil && len(bytes.TrimSpace(out)) > 0 {
			goEnv = append(goEnv, k+"="+string(bytes.TrimSpace(out)))
		}
	}
	goEnv = append(goEnv, "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=")
	build := exec.Command("go", "build", "-o", orchestrateBin, "../cmd/orchestrate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building orchestrate:", err)
		return 1
	}
	return m.Run()
}

// claudePath finds the Claude Code CLI: $ORCHESTRATE_CLAUDE, then the copy
// .ci/run caches in .cache/claude-code/, then claude on PATH.
func claudePath() string {
	if p := os.Getenv("ORCHESTRATE_CLAUDE"); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
		return p
	}
	if abs, err := filepath.Abs(filepath.Join("..", ".cache", "claude-code", "node_modules", ".bin", "claude")); err == nil {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	p, err := exec.LookPath("claude")
	if err != nil {
		return ""
	}
	return p
}

// needClaude skips the test when the CLI is missing, or fails it when
// ORCHESTRATE_REQUIRE_CLAUDE=1 (CI) says it must be there.
func needClaude(t *testing.T) string {
	t.Helper()
	p := claudePath()
	if p == "" {
		if os.Getenv("ORCHESTRATE_REQUIRE_CLAUDE") == "1" {
			t.Fatal("ORCHESTRATE_REQUIRE_CLAUDE=1 but the Claude Code CLI is missing: set ORCHESTRATE_CLAUDE to its path, or put claude on PATH (npm install @anthropic-ai/claude-code)")
		}
		t.Skip("the Claude Code CLI is missing (npm install @anthropic-ai/claude-code, then put claude on PATH or set ORCHESTRATE_CLAUDE); set ORCHESTRATE_REQUIRE_CLAUDE=1 to fail instead")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ORCHESTRATE_CLAUDE: %v", err)
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

func newProject(t *testing.T, m *model, files map[string]string) *project {
	t.Helper()
	claude := needClaude(t)
	root := t.TempDir()
	p := &project{t: t, Dir: filepath.Join(root, "repo"), Home: filepath.Join(root, "home")}
	for _, d := range []string{p.Dir, p.Home, filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// claude and orchestrate, by those names, on PATH.
	for name, target := range map[string]string{"claude": claude, "orchestrate": orchestrateBin} {
		if err := os.Symlink(target, filepath.Join(root, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	p.env = append(cleanEnv(),
		"PATH="+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+p.Home,
		"XDG_CONFIG_HOME="+filepath.Join(p.Home, ".config"),
		"ANTHROPIC_BASE_URL="+m.URL,
		"ANTHROPIC_API_KEY=sk-ant-e2e-not-a-key",
		// Only the model's requests: no telemetry, error reports, updates.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com",
	)
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
