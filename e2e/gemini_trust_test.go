package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The real Gemini CLI in a folder it was never told to trust (a fresh
// clone, CI) exits 55 before any model request. orchestrate run tells that
// apart from an agent whose work fails the gates: it stops at once, with
// one line that quotes gemini and says what to do, and counts nothing (no
// issue filed, no retry). Before, it relaunched gemini and halted the
// task's issue as stuck.
func TestGeminiUntrustedFolder(t *testing.T) {
	gemini := geminiCLI.need(t)
	root := t.TempDir()
	repo, home, bin := filepath.Join(root, "repo"), filepath.Join(root, "home"), filepath.Join(root, "bin")
	for _, d := range []string{repo, filepath.Join(home, ".gemini"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"gemini": gemini, "orchestrate": orchestrateBin} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Signed in with an API key, as in CI; the folder is not trusted. No
	// request may leave: the base URL is a closed port.
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`{"security":{"auth":{"selectedType":"gemini-api-key"}}}`), 0o644)
	env := append(cleanEnv(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GEMINI_API_KEY=not-a-key", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9")
	orch := func(args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(bin, "orchestrate"), args...)
		cmd.Dir, cmd.Env = repo, env
		out, err := cmd.CombinedOutput()
		if err != nil && cmd.ProcessState == nil {
			t.Fatal(err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := orch("init", "--agent", "gemini"); code != 0 {
		t.Fatalf("init: %s", out)
	}
	os.WriteFile(filepath.Join(repo, ".orchestrator", "config.yaml"),
		[]byte("agent:\n  profile: gemini\ngates:\n  - name: check\n    command: 'test -f fixed.txt'\n"), 0o644)
	out, code := orch("run", "--task", "create fixed.txt")
	if code != 1 {
		t.Fatalf("run: exit %d, want 1\n%s", code, out)
	}
	var errLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "orchestrate: ") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) != 1 || !strings.Contains(errLines[0], "Gemini CLI does not trust this folder (exit 55: \"Gemini CLI is not running in a trusted directory.") ||
		!strings.Contains(errLines[0], "GEMINI_CLI_TRUST_WORKSPACE=true") || !strings.Contains(errLines[0], "nothing was counted") {
		t.Errorf("the run's error, in one line that quotes gemini and says what to do:\n%s", out)
	}
	if q, _ := os.ReadFile(filepath.Join(repo, ".orchestrator", "issue_queue.md")); strings.Contains(string(q), "## ISSUE-") {
		t.Errorf("an issue was filed:\n%s", q)
	}
	hist, _ := os.ReadFile(filepath.Join(repo, ".orchestrator", "history.csv"))
	events := map[string]int{}
	for _, l := range strings.Split(string(hist), "\n")[1:] {
		if f := strings.Split(l, ","); len(f) > 3 {
			events[f[3]]++
		}
	}
	if events["agent"] != 1 || events["gate"] != 0 || events["record"] != 0 || events["issue_add"] != 0 {
		t.Errorf("history: %v; want one agent launch, and no gate, record or issue row:\n%s", events, hist)
	}
}
