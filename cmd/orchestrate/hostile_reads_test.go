package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileReads commits what a hostile repository could into each file
// orchestrate reads: a link to /dev/zero, a FIFO, a link to a private
// file. Every command then runs against it under a memory limit (ulimit
// -v): each ends well inside its bound with a message, never quotes the
// private file, and leaves no process behind.
func TestHostileReads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every command against every hostile file")
	}
	bin := orchestrateBin(t)
	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("aws_secret_access_key = AKIASECRETSECRET1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{"config.yaml", "issue_queue.md", "session_state.md", "history.csv", "task.md", "prompts/agent.md"}
	cases := map[string]func(path string) error{
		"dev-zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"secret":   func(p string) error { return os.Symlink(secret, p) },
	}
	commands := [][]string{
		{"validate"}, {"status"}, {"issue", "add", "--summary", "x"}, {"issue", "show", "ISSUE-20241213-001"},
		{"check"}, {"gate"}, {"session", "start"}, {"run", "--max-loops", "1"}, {"analytics"},
		{"record", "ISSUE-20241213-001", "-"},
	}
	tried, peak := 0, int64(0)
	for _, file := range files {
		for name, make := range cases {
			t.Run(file+"/"+name, func(t *testing.T) {
				root := t.TempDir()
				ws := filepath.Join(root, ".orchestrator")
				mustRun(t, root, bin, "init")
				if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte("gates:\n  - name: unit\n    command: 'true'\nagent:\n  command: 'cat >/dev/null'\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				mustRun(t, root, bin, "issue", "add", "--summary", "first")
				target := filepath.Join(ws, filepath.FromSlash(file))
				os.MkdirAll(filepath.Dir(target), 0o755)
				os.Remove(target)
				if err := make(target); err != nil {
					t.Fatal(err)
				}
				for _, args := range commands {
					tried++
					out, rss := hostileRun(t, root, bin, args...)
					peak = max(peak, rss)
					if strings.Contains(out, "SECRET") {
						t.Errorf("orchestrate %s quotes the private file:\n%s", strings.Join(args, " "), out)
					}
				}
				noProcessLeft(t, root)
			})
		}
	}
	t.Logf("%d files × %d cases × %d commands: %d runs, every one ended; peak RSS %d MiB", len(files), len(cases), len(commands), tried, peak>>10)
}

// hostileRun runs orchestrate in dir under ulimit -v (2 GiB) and a bound of
// a minute that only a hang reaches, and returns its output and peak RSS
// (KiB).
func hostileRun(t *testing.T, dir, bin string, args ...string) (string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", `ulimit -v 2097152; exec "$0" "$@"`, bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
	cmd.Stdin = strings.NewReader("FAIL: x\n")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("orchestrate %s hung (killed after a minute):\n%s", strings.Join(args, " "), out)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("orchestrate %s: %v", strings.Join(args, " "), err)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
		t.Errorf("orchestrate %s died of %v:\n%s", strings.Join(args, " "), ws.Signal(), out)
	}
	if bytes.Contains(out, []byte("fatal error:")) || bytes.Contains(out, []byte("panic:")) || cmd.ProcessState.ExitCode() == exitUsage {
		t.Errorf("orchestrate %s: exit %d, not a clear error:\n%s", strings.Join(args, " "), cmd.ProcessState.ExitCode(), tailOf(out))
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return string(out), rss
}

// noProcessLeft waits a while for every process whose working directory
// is under dir (a background refresh, say) to be gone.
func noProcessLeft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []string
		procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
		for _, p := range procs {
			if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, dir) {
				cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
				left = append(left, filepath.Dir(p)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mustRun runs orchestrate in dir, and fails the test if it fails.
func mustRun(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z", "ORCHESTRATE_NO_BACKGROUND=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func tailOf(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}
