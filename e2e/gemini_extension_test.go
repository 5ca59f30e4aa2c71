package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Gemini CLI extension installs with the real CLI from a clone's
// gemini-extension/, is listed, and leaves nothing of its own behind when
// uninstalled.
func TestGeminiExtensionInstall(t *testing.T) {
	gemini := geminiCLI.need(t)
	src := filepath.Join(pluginSource(t), "gemini-extension")
	home := t.TempDir()
	run := func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, gemini, args...)
		cmd.Dir = home
		cmd.Env = append(cleanEnv(), "HOME="+home, "PATH="+os.Getenv("PATH"), "GEMINI_API_KEY=not-a-key")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gemini %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// It asks whether to trust the extension's folder: the person's answer.
	if out := run("y\n", "extensions", "install", src, "--consent"); !strings.Contains(out, `Extension "orchestrate" installed successfully and enabled.`) {
		t.Fatalf("gemini extensions install:\n%s", out)
	}
	if out := run("", "extensions", "list"); !strings.Contains(out, "orchestrate (1.0.0)") || !strings.Contains(out, "Enabled (User): true") {
		t.Fatalf("gemini extensions list:\n%s", out)
	}
	hooks, err := os.ReadFile(filepath.Join(home, ".gemini", "extensions", "orchestrate", "hooks", "hooks.json"))
	if err != nil || !strings.Contains(string(hooks), "orchestrate hook stop --agent gemini --plugin") {
		t.Fatalf("the installed extension's hooks: %v\n%s", err, hooks)
	}
	if out := run("", "extensions", "uninstall", "orchestrate"); !strings.Contains(out, "successfully uninstalled") {
		t.Fatalf("gemini extensions uninstall:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini", "extensions", "orchestrate")); err == nil {
		t.Errorf("the extension's directory is still there after the uninstall")
	}
	for _, f := range []string{"settings.json", "extensions/extension-enablement.json"} {
		if data, err := os.ReadFile(filepath.Join(home, ".gemini", f)); err == nil && strings.Contains(string(data), "orchestrate") {
			t.Errorf("~/.gemini/%s still names orchestrate:\n%s", f, data)
		}
	}
}
