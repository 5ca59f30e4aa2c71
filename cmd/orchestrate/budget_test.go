package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
		{"killed", budgetConfig(maxRetries, 15, 30), []string{"run", "--agents", "2", "--lease", "3s"}, true},
		{"killed-one-agent", budgetConfig(maxRetries, 15, 30), []string{"run"}, true},
		{"max-loops", budgetConfig(maxRetries, 15, 0), []string{"run", "--max-loops", "1"}, false},
		{"cap", budgetConfig(maxRetries+1, 1, 0), []string{"run"}, false},
		{"agents-max-loops", budgetConfig(maxRetries, 15, 0), []string{"run", "--agents", "2", "--max-loops", "1"}, false},
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
				var out syncBuffer
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
		{"agents", 2, 15, 3, []string{"run", "--agents", "2", "--max-loops", "12"}, "Launch-Count went down from"},
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

// TestKilledRunTakenOverAtOnce: after a run --agents killed (SIGKILL)
// while its agent works, under a lease of ten minutes, the next run takes
// the issue over at once, at the next epoch: the holder was a process of
// this machine, and it is gone. A holder that is alive is waited for, and
// the wait is said.
func TestKilledRunTakenOverAtOnce(t *testing.T) {
	t.Parallel()
	_, launches, orch := budgetProject(t, budgetConfig(5, 15, 30))
	run := orch("run", "--agents", "2", "--lease", "10m")
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); launchesIn(launches) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the agent was not launched in a minute")
		}
	}
	run.Process.Signal(syscall.SIGKILL)
	run.Wait()

	next := orch("run", "--agents", "2", "--lease", "10m")
	var out syncBuffer
	next.Stdout, next.Stderr = &out, &out
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { next.Process.Signal(syscall.SIGKILL); next.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); launchesIn(launches) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the next run did not take the claim of the killed one over in 30s (its lease is 10m):\n%s", out.String())
		}
	}
	// The run's output comes through a pipe and this process's copier,
	// the launch straight to the file: the line may come a moment after.
	defer func() {
		if t.Failed() {
			t.Logf("the next run's output:\n%s", out.String())
		}
	}()
	waitFor(t, "the next run's claim at epoch 2", func() bool { return strings.Contains(out.String(), "(epoch 2)") })
}

// TestLiveHolderWaitSaid: a claim held by a live process of this machine
// (a person's claim --as, its holder this test) under a long lease is
// waited for, and the wait is said at once: which issue, whose claim,
// until when.
func TestLiveHolderWaitSaid(t *testing.T) {
	t.Parallel()
	ws, _, orch := budgetProject(t, budgetConfig(5, 15, 0))
	q, _ := queue.Load(filepath.Join(ws, "issue_queue.md"))
	id := q.Issues[0].ID
	if out, err := orch("claim", id, "--as", "alice", "--lease", "10m").CombinedOutput(); err != nil {
		t.Fatalf("claim: %v\n%s", err, out)
	}
	next := orch("run", "--agents", "2")
	var out syncBuffer
	next.Stdout, next.Stderr = &out, &out
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { next.Process.Signal(syscall.SIGKILL); next.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "waiting for claims"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the wait was not said in 30s:\n%s", out.String())
		}
	}
	if s := out.String(); !strings.Contains(s, id) || !strings.Contains(s, "alice@") {
		t.Errorf("the wait does not name the issue and its holder:\n%s", s)
	}
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestClaimHolderOutlivesItsShell: an agent that claims through its shell
// tool (a new sh -c for each command) is one holder: the process that
// runs the shells, not a shell that exits at once. Its second claim of
// the issue it holds is a no-op at the same epoch (exit 0, not 11), and
// the claim stays held once the shell is gone. --as NAME@HOST/PID names
// the holder whole.
func TestClaimHolderOutlivesItsShell(t *testing.T) {
	ws, _, orch := budgetProject(t, budgetConfig(5, 15, 0))
	q, _ := queue.Load(filepath.Join(ws, "issue_queue.md"))
	id := q.Issues[0].ID
	bin := orchestrateBin(t)
	viaShell := func(args ...string) (string, int) {
		cmd := orch()
		cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", `"$@"; code=$?; exit $code`, "sh", bin, "--dir", ws}
		cmd.Args = append(cmd.Args, args...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			return string(out), 0
		}
		return string(out), exitOf(err)
	}
	out, code := viaShell("claim", id, "--as", "agent-7")
	if code != 0 || !strings.Contains(out, "at epoch 1") {
		t.Fatalf("first claim: exit %d\n%s", code, out)
	}
	me := "agent-7@" + hostnameOf(t) + "/" + strconv.Itoa(os.Getpid())
	if !strings.Contains(out, me) {
		t.Errorf("the holder is not the process that runs the shells (%s):\n%s", me, out)
	}
	out, code = viaShell("claim", id, "--as", "agent-7")
	if code != 0 || !strings.Contains(out, "at epoch 1") {
		t.Errorf("claiming again what one holds: exit %d; want 0 at epoch 1\n%s", code, out)
	}
	out, code = viaShell("claim", id, "--as", "other")
	if code != 11 {
		t.Errorf("another's claim of a held issue, once the first shell exited: exit %d; want 11\n%s", code, out)
	}
	whole := "bot@" + hostnameOf(t) + "/" + strconv.Itoa(os.Getpid())
	out, code = viaShell("claim", id, "--as", whole, "--force")
	if code != 0 || !strings.Contains(out, "claimed "+id+": "+whole+" at epoch 2") {
		t.Errorf("--as %s --force: exit %d\n%s", whole, code, out)
	}
}

func hostnameOf(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCountsSetBackThenRunKilled: an agent sets its counts back to 0
// through $ORCHESTRATOR_DIR, and its run is killed (SIGKILL) before the
// agent exits, when the run would put them back. The next run finds
// counts of 0 in the queue, but the launches counted in .launches before
// each launch started: the issue gets no launch past its 1 + Max-Retries.
func TestCountsSetBackThenRunKilled(t *testing.T) {
	t.Parallel()
	const maxRetries = 2
	script := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(script, []byte(tamperAgent+"sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "retry:\n  max_retries: " + strconv.Itoa(maxRetries) + "\n  halt_after_identical: 100\n" +
		"agent:\n  command: 'sh " + script + "'\n" +
		"gates:\n  - name: unit\n    command: 'echo FAIL TestUnit; exit 1'\n    auto_retry: true\n"
	ws, launches, orch := budgetProject(t, cfg)
	path := filepath.Join(ws, "issue_queue.md")
	for i := 0; i < maxRetries+4; i++ {
		before := launchesIn(launches)
		run := orch("run", "--agents", "2", "--lease", "3s")
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		// Killed once its agent was launched and set its counts back; a
		// run that launches none ends by itself.
		done := make(chan struct{})
		go func() { run.Wait(); close(done) }()
		ended := func() bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		}
		for deadline := time.Now().Add(time.Minute); !ended(); time.Sleep(20 * time.Millisecond) {
			if q, err := queue.Load(path); launchesIn(launches) > before && err == nil && q.Issues[0].Int(queue.FieldLaunchCount, -1) == 0 {
				run.Process.Signal(syscall.SIGKILL)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d neither launched nor ended in a minute", i)
			}
		}
		<-done
	}
	if got, want := launchesIn(launches), 1+maxRetries; got != want {
		t.Errorf("%d launches over %d killed runs; want 1 + Max-Retries = %d", got, maxRetries+4, want)
	}
}

// TestCountsOfAnotherIssueSetBack: an agent sets back the counts of
// another issue, whose work in the run is over (--max-loops 1), through
// $ORCHESTRATOR_DIR. The run puts back only the counts of the issue it
// works on, but the next runs count the other's from .launches too: it
// gets no launch past its 1 + Max-Retries.
func TestCountsOfAnotherIssueSetBack(t *testing.T) {
	t.Parallel()
	const maxRetries = 1
	script := filepath.Join(t.TempDir(), "agent.sh")
	agent := `id=${ORCHESTRATE_CLAIM%%:*}
echo "$id" >> "$LAUNCHES"
case $id in *-002) sleep 1; sed -i -e 's/^\(| *Retry-Count *| *\)[0-9][0-9]*/\10/' -e 's/^\(| *Launch-Count *| *\)[0-9][0-9]*/\10/' "$ORCHESTRATOR_DIR/issue_queue.md";; esac
`
	if err := os.WriteFile(script, []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "retry:\n  max_retries: " + strconv.Itoa(maxRetries) + "\n  halt_after_identical: 100\n" +
		"agent:\n  command: 'sh " + script + "'\n" +
		"gates:\n  - name: unit\n    command: 'echo FAIL TestUnit; exit 1'\n"
	_, _, _, base := agentsProject(t, orchestrateBin(t), cfg, 2)
	launches := filepath.Join(t.TempDir(), "launches")
	for i := 0; i < 4; i++ {
		cmd := base("run", "--agents", "2", "--max-loops", "1")
		cmd.Env = append(cmd.Env, "LAUNCHES="+launches)
		cmd.Run()
	}
	data, _ := os.ReadFile(launches)
	if n := strings.Count(string(data), "-001\n"); n > 1+maxRetries {
		t.Errorf("ISSUE-…-001 launched %d times; want at most 1 + Max-Retries = %d", n, 1+maxRetries)
	}
}

// TestRetryAfterLaunchesSpent: an issue out of launches (stuck,
// exhausted) gets 1 + Max-Retries launches again after a person's `issue
// retry`: the retry sets back the launches counted apart from the queue
// (.launches) with the queue's counts.
func TestRetryAfterLaunchesSpent(t *testing.T) {
	t.Parallel()
	const maxRetries = 1
	ws, launches, orch := budgetProject(t, budgetConfig(maxRetries, 15, 0))
	runs := func() {
		for range maxRetries + 2 {
			orch("run", "--max-loops", "1").Run()
		}
	}
	runs()
	if got := launchesIn(launches); got != 1+maxRetries {
		t.Fatalf("%d launches before the retry; want %d", got, 1+maxRetries)
	}
	q, err := queue.Load(filepath.Join(ws, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	id := q.Issues[0].ID
	if st := q.Issues[0].Status(); st != queue.StatusStuck {
		t.Fatalf("%s is %s after its launches; want stuck", id, st)
	}
	if out, err := orch("issue", "retry", id).CombinedOutput(); err != nil {
		t.Fatalf("issue retry: %v\n%s", err, out)
	}
	runs()
	if got, want := launchesIn(launches), 2*(1+maxRetries); got != want {
		t.Errorf("%d launches in all after the retry; want %d", got, want)
	}
}
