package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// budgetConfig is a workspace whose one gate always fails the same way,
// and never halts on it: only Max-Retries bounds the launches. The agent
// notes each launch in $LAUNCHES, then works for as long as it is let.
func budgetConfig(maxRetries, globalCap, sleep int) string {
	return "retry:\n  max_retries: " + strconv.Itoa(maxRetries) + "\n  global_cap: " + strconv.Itoa(globalCap) + "\n  halt_after_identical: 100\n" +
		"agent:\n  command: 'echo launch >> \"$LAUNCHES\"; sleep " + strconv.Itoa(sleep) + "'\n" +
		"gates:\n  - name: unit\n    command: 'echo FAIL TestUnit; exit 1'\n    auto_retry: true\n"
}

// launchesIn counts the launches the agent noted.
func launchesIn(path string) int {
	data, _ := os.ReadFile(path)
	return strings.Count(string(data), "launch\n")
}

// budgetProject is agentsProject with the gate's issue filed by a first
// evaluation (orchestrate gate): one auto-retry issue at Retry-Count 0,
// no launch yet. env adds LAUNCHES to each command.
func budgetProject(t *testing.T, cfg string) (ws, launches string, orch func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := orchestrateBin(t)
	_, ws, _, base := agentsProject(t, bin, cfg, 0)
	launches = filepath.Join(t.TempDir(), "launches")
	orch = func(args ...string) *exec.Cmd {
		cmd := base(args...)
		cmd.Env = append(cmd.Env, "LAUNCHES="+launches, "ORCHESTRATE_NO_BACKGROUND=1")
		return cmd
	}
	if out, err := orch("gate").CombinedOutput(); err != nil && exitOf(err) != 12 {
		t.Fatalf("orchestrate gate: %v\n%s", err, out)
	}
	q, err := queue.Load(filepath.Join(ws, "issue_queue.md"))
	if err != nil || len(q.Issues) != 1 {
		t.Fatalf("the gate filed %v issues (%v); want 1", q, err)
	}
	return ws, launches, orch
}

// TestLaunchBudget: whatever stops the runs (a SIGKILL during each
// launch, --max-loops 1, the per-run cap), an issue is given exactly
// 1 + Max-Retries launches over all of them, never one more: a launch
// is counted before it starts.
func TestLaunchBudget(t *testing.T) {
	const maxRetries = 2
	for _, tc := range []struct {
		name string
		cfg  string
		args []string
		kill bool
	}{
		{"killed", budgetConfig(maxRetries, 15, 30), []string{"run", "--agents", "1", "--lease", "3s"}, true},
		{"killed-one-agent", budgetConfig(maxRetries, 15, 30), []string{"run"}, true},
		{"max-loops", budgetConfig(maxRetries, 15, 0), []string{"run", "--max-loops", "1"}, false},
		{"cap", budgetConfig(maxRetries+1, 1, 0), []string{"run"}, false},
		{"agents-max-loops", budgetConfig(maxRetries, 15, 0), []string{"run", "--agents", "1", "--max-loops", "1"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			max := maxRetries
			if tc.name == "cap" {
				max = maxRetries + 1
			}
			_, launches, orch := budgetProject(t, tc.cfg)
			var outs []string
			for i := 0; i < max+4; i++ {
				before := launchesIn(launches)
				run := orch(tc.args...)
				var out strings.Builder
				run.Stdout, run.Stderr = &out, &out
				if err := run.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- run.Wait() }()
				if tc.kill {
					// Killed as soon as its agent is launched; a run that
					// launches none ends by itself.
					deadline := time.Now().Add(time.Minute)
				wait:
					for {
						select {
						case <-done:
							done <- nil
							break wait
						case <-time.After(20 * time.Millisecond):
						}
						if launchesIn(launches) > before {
							run.Process.Signal(syscall.SIGKILL)
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("run %d neither launched nor ended in a minute:\n%s", i, out.String())
						}
					}
				}
				select {
				case <-done:
				case <-time.After(2 * time.Minute):
					run.Process.Kill()
					t.Fatalf("run %d did not end:\n%s", i, out.String())
				}
				outs = append(outs, out.String())
			}
			if got, want := launchesIn(launches), 1+max; got != want {
				t.Errorf("%d launches over %d runs; want 1 + Max-Retries = %d\n%s", got, max+4, want, strings.Join(outs, "\n----\n"))
			}
		})
	}
}

// tamperAgent is an agent that notes its launch in $LAUNCHES, then sets
// back through $ORCHESTRATOR_DIR every count that bounds it: its issues'
// Retry-Count and Launch-Count, and the run's total_auto_retries.
const tamperAgent = `echo launch >> "$LAUNCHES"
sed -i -e 's/^\(| *Retry-Count *| *\)[0-9][0-9]*/\10/' -e 's/^\(| *Launch-Count *| *\)[0-9][0-9]*/\10/' "$ORCHESTRATOR_DIR/issue_queue.md"
sed -i -e 's/^\(| *total_auto_retries *| *\)[0-9][0-9]*/\10/' "$ORCHESTRATOR_DIR/session_state.md"
`

// TestAgentResetsItsCounts: an agent that sets its counts back to 0
// through $ORCHESTRATOR_DIR after each launch gets no more launches for
// it: the run keeps its own counts, takes the larger of its and the
// file's, and says each count that went down. The issue's 1 + Max-Retries
// and the run's 1 + global_cap hold exactly.
func TestAgentResetsItsCounts(t *testing.T) {
	for _, tc := range []struct {
		name            string
		maxRetries, cap int
		want            int
		args            []string
		said            string
	}{
		{"retries", 2, 15, 3, []string{"run", "--max-loops", "12"}, "Retry-Count went down from"},
		{"cap", 50, 3, 4, []string{"run", "--max-loops", "12"}, "total_auto_retries went down from"},
		{"agents", 2, 15, 3, []string{"run", "--agents", "1", "--max-loops", "12"}, "Launch-Count went down from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(t.TempDir(), "agent.sh")
			if err := os.WriteFile(script, []byte(tamperAgent), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := "retry:\n  max_retries: " + strconv.Itoa(tc.maxRetries) + "\n  global_cap: " + strconv.Itoa(tc.cap) + "\n  halt_after_identical: 100\n" +
				"agent:\n  command: 'sh " + script + "'\n" +
				"gates:\n  - name: unit\n    command: 'echo FAIL TestUnit; exit 1'\n    auto_retry: true\n"
			_, launches, orch := budgetProject(t, cfg)
			out, _ := orch(tc.args...).CombinedOutput()
			if got := launchesIn(launches); got != tc.want {
				t.Errorf("%d launches; want %d\n%s", got, tc.want, out)
			}
			if !strings.Contains(string(out), tc.said) {
				t.Errorf("the run did not say %q:\n%s", tc.said, out)
			}
		})
	}
}
