package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunInterrupted runs orchestrate run and interrupts it as Ctrl-C does,
// once while the agent works and once while a gate runs: the run stops at
// once, the agent's or the gate's whole process group with it, it says
// why, and every file is whole.
func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	bin := orchestrateBin(t)
	var err error
	// A shell that starts a grandchild, says so, and waits for it.
	const busy = `cat > /dev/null; echo $$ > pids; sleep 60 & echo $! >> pids; echo started > started; wait`
	for _, tc := range []struct {
		name, agent, gate string
		historyRow        string // what history.csv says of what was interrupted
	}{
		{"agent", busy, "true", ",1,agent,,,1,error,"},
		{"gate", "cat > /dev/null", busy, ",run_start,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, ".orchestrator")
			cleanupAnalytics(t, ws)
			orch := func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
				cmd.Dir = dir
				return cmd
			}
			if out, err := orch("init").CombinedOutput(); err != nil {
				t.Fatalf("orchestrate init: %v\n%s", err, out)
			}
			config := "agent:\n  command: sh agent.sh\n  resume_command: sh agent.sh\n  timeout: 1m\n" +
				"gates:\n  - name: unit\n    command: sh gate.sh\n"
			for name, text := range map[string]string{
				".orchestrator/config.yaml": config, "agent.sh": tc.agent, "gate.sh": tc.gate,
			} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}

			cmd := orch("run", "--task", "never done")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			waitFor(t, "the busy command to start", func() bool {
				_, err := os.Stat(filepath.Join(dir, "started"))
				return err == nil
			})
			start := time.Now()
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("orchestrate run did not stop within 20s of SIGINT\nstdout:\n%s\nstderr:\n%s", &stdout, &stderr)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("orchestrate run took %v to stop after SIGINT", took)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("orchestrate run after SIGINT: %v; want exit status 1", err)
			}
			if want := "orchestrate: interrupted during loop 1"; !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr = %q; want it to contain %q", &stderr, want)
			}

			// The busy command and its grandchild are gone.
			pids, err := os.ReadFile(filepath.Join(dir, "pids"))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range strings.Fields(string(pids)) {
				pid, _ := strconv.Atoi(f)
				waitFor(t, "process "+f+" to be gone", func() bool {
					return syscall.Kill(pid, 0) == syscall.ESRCH
				})
			}

			history, err := os.ReadFile(filepath.Join(ws, "history.csv"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{tc.historyRow, ",1,run_end,,,,interrupted,"} {
				if !strings.Contains(string(history), want) {
					t.Errorf("history.csv lacks %q:\n%s", want, history)
				}
			}
			if out, err := orch("validate").CombinedOutput(); err != nil {
				t.Errorf("orchestrate validate after the interrupted run: %v\n%s", err, out)
			}
			// The lock went with the run: the next one starts.
			if out, err := orch("abort").CombinedOutput(); !strings.Contains(string(out), "No run in progress") {
				t.Errorf("orchestrate abort after the interrupted run: %v\n%s", err, out)
			}
		})
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
