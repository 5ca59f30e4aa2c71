package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanAgent is an agent that starts a grandchild and a setsid daemon,
// writes their PIDs (and its own) to pids, says it started, and waits.
const orphanAgent = `cat > /dev/null; echo $$ > pids
sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> pids
setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ "$(wc -l < pids)" -lt 3 ]; do sleep 0.01; done
echo started > started; wait`

// orphanWorkspace makes a workspace whose agent is orphanAgent, and
// returns the repository and a command maker.
func orphanWorkspace(t *testing.T) (dir string, orch func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := orchestrateBin(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	dir = t.TempDir()
	ws := filepath.Join(dir, ".orchestrator")
	cleanupAnalytics(t, ws)
	orch = func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Dir = dir
		return cmd
	}
	if out, err := orch("init").CombinedOutput(); err != nil {
		t.Fatalf("orchestrate init: %v\n%s", err, out)
	}
	config := "agent:\n  command: sh agent.sh\n  resume_command: sh agent.sh\n  timeout: 1m\n" +
		"gates:\n  - name: unit\n    command: 'true'\n"
	for name, text := range map[string]string{".orchestrator/config.yaml": config, "agent.sh": orphanAgent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, orch
}

func waitStarted(t *testing.T, dir string) {
	t.Helper()
	waitFor(t, "the agent to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil
	})
}

// waitPIDsGone waits for every process in dir/pids to be gone: not a
// zombie either.
func waitPIDsGone(t *testing.T, dir string) {
	t.Helper()
	pids, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, f := range strings.Fields(string(pids)) {
		pid, _ := strconv.Atoi(f)
		for running(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL) // no orphan outlives the test
				t.Errorf("process %d outlived orchestrate", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// TestRunKilledLeavesNoOrphans: orchestrate run killed with SIGKILL takes
// its agent with it, the agent's children and setsid daemons too; and the
// next run, started at once, waits the moment the agent's supervisor
// takes to stop them rather than refuse.
func TestRunKilledLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	dir, orch := orphanWorkspace(t)
	// An agent deaf to SIGTERM: its group lives out the supervisor's
	// grace, until SIGKILL, as the next run starts.
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("trap '' TERM\n"+orphanAgent), 0o644)
	cmd := orch("run", "--task", "never done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	cmd.Process.Kill()
	cmd.Wait()

	// A new agent script beside the one still running, put in its place
	// by a rename (sh reads a script as it runs it).
	os.Remove(filepath.Join(dir, "started"))
	os.WriteFile(filepath.Join(dir, "agent.sh.new"), []byte("cat > /dev/null"), 0o644)
	os.Rename(filepath.Join(dir, "agent.sh.new"), filepath.Join(dir, "agent.sh"))
	out, err := orch("run", "--once", "--task", "done").CombinedOutput()
	if strings.Contains(string(out), "still running") {
		t.Errorf("the next run: %v\n%s", err, out)
	}
	waitPIDsGone(t, dir)
}

// TestRunRefusesWhileAKilledRunsAgentLives: the group a killed run left
// (recorded in .run.lock) keeps the next run from starting a second agent
// on the same tree until it is gone.
func TestRunRefusesWhileAKilledRunsAgentLives(t *testing.T) {
	t.Parallel()
	dir, orch := orphanWorkspace(t)
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("cat > /dev/null"), 0o644)
	left := exec.Command("sleep", "300")
	left.Env = append(os.Environ(), "ORCHESTRATE_RUN_ID=20241213-100000-aaaaaa")
	left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	defer left.Process.Kill()
	pgid := left.Process.Pid
	lock := filepath.Join(dir, ".orchestrator", ".run.lock")
	record := fmt.Sprintf("999999 orchestrate run\ngroup %d 20241213-100000-aaaaaa\n", pgid)
	if err := os.WriteFile(lock, []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("orchestrate: a previous run's agent is still running: process group %d of run 20241213-100000-aaaaaa (stop it with kill -- -%d, then run again)", pgid, pgid)
	// Refused, and again: neither the refusal nor abort's look at the
	// lock forgets the group.
	for _, args := range [][]string{{"run", "--once", "--task", "t"}, {"abort"}, {"run", "--once", "--task", "t"}} {
		cmd := orch(args...)
		// The group outlives any wait: a short one refuses as the
		// default's seconds do.
		cmd.Env = append(os.Environ(), "ORCHESTRATE_LEFTOVER_WAIT=300ms")
		out, err := cmd.CombinedOutput()
		if args[0] == "abort" {
			continue
		}
		if exitOf(err) != 1 || !strings.Contains(string(out), want) {
			t.Errorf("run with a live leftover group: %v\n%s\nwant exit 1 and %q", err, out, want)
		}
	}
	// A group of the same ID that is not the run's (another run's mark) is
	// no reason to refuse; nor is one that is gone.
	os.WriteFile(lock, []byte(fmt.Sprintf("999999 orchestrate run\ngroup %d 20241213-100000-bbbbbb\n", pgid)), 0o644)
	if out, err := orch("run", "--once", "--task", "t").CombinedOutput(); strings.Contains(string(out), "still running") {
		t.Errorf("run with another run's group: %v\n%s", err, out)
	}
	left.Process.Kill()
	left.Wait()
	os.WriteFile(lock, []byte(record), 0o644)
	if out, err := orch("run", "--once", "--task", "t").CombinedOutput(); strings.Contains(string(out), "still running") {
		t.Errorf("run once the group is gone: %v\n%s", err, out)
	}
}

// TestRunHangupThroughATerminal runs orchestrate run in a pseudo-terminal
// and closes it, as closing a terminal window does: SIGHUP stops the run
// as SIGTERM does, its agent with all its children, and the run is
// recorded as interrupted.
func TestRunHangupThroughATerminal(t *testing.T) {
	t.Parallel()
	dir, orch := orphanWorkspace(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 for the pseudo-terminal")
	}
	run := orch("run", "--task", "never done")
	// python3's pty module: the command runs as the session leader with the
	// terminal as its controlling terminal; closing the master hangs up.
	const hangup = `
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
deadline = time.time() + 20
while not os.path.exists("started") and time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.05)
    if r:
        try:
            os.read(fd, 65536)
        except OSError:
            break
os.close(fd)
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    print("signal", os.WTERMSIG(status))
else:
    print("exit", os.WEXITSTATUS(status))
`
	cmd := exec.Command(python, append([]string{"-c", hangup}, run.Args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "exit 1" {
		t.Errorf("orchestrate run after its terminal closed: %s; want exit 1 (interrupted), not killed by SIGHUP", got)
	}
	waitPIDsGone(t, dir)
	history, err := os.ReadFile(filepath.Join(dir, ".orchestrator", "history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := ",run_end,,,,interrupted,"; !strings.Contains(string(history), want) {
		t.Errorf("history.csv lacks %q:\n%s", want, history)
	}
}

// TestHookStopKilledLeavesNoOrphans: the Stop hook killed (SIGKILL) while
// its gate runs takes the gate with it, the gate's setsid daemon too.
func TestHookStopKilledLeavesNoOrphans(t *testing.T) {
	dir, orch := orphanWorkspace(t)
	gate := strings.Replace(orphanAgent, "cat > /dev/null; ", "", 1)
	if err := os.WriteFile(filepath.Join(dir, "gate.sh"), []byte(gate), 0o644); err != nil {
		t.Fatal(err)
	}
	config := "gates:\n  - name: unit\n    command: sh gate.sh\n"
	if err := os.WriteFile(filepath.Join(dir, ".orchestrator", "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := orch("hook", "stop")
	cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"Stop"}`, dir))
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	waitPIDsGone(t, dir)
}
