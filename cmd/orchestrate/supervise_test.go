package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The supervisor every gate and agent runs under starts from the running
// executable: replacing or removing the file orchestrate was started from
// (an upgrade, a rebuild) changes nothing for a run in progress.

// gatedAgent is an agent that says it started and waits for the file go.
const gatedAgent = `cat > /dev/null; echo started > started
while [ ! -e go ]; do sleep 0.01; done`

// ownBinary copies orchestrate to a directory of the test's, where the
// test may replace or remove it, and returns a command maker for the
// workspace of the repository dir, made with init and given config.
func ownBinary(t *testing.T, config string) (dir, bin string, orch func(args ...string) *exec.Cmd) {
	t.Helper()
	src, err := os.Open(orchestrateBin(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin = filepath.Join(t.TempDir(), "orchestrate")
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
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
	for name, text := range map[string]string{".orchestrator/config.yaml": config, "agent.sh": gatedAgent} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, bin, orch
}

const gatedConfig = "agent:\n  command: sh agent.sh\n  resume_command: sh agent.sh\n  timeout: 1m\ngates:\n"

// TestGatesPassAfterTheBinaryIsReplaced: a new orchestrate put in place of
// the old one while a run goes on (renamed over it, as an install does)
// does not become the run's supervisor: the run's passing gates pass.
func TestGatesPassAfterTheBinaryIsReplaced(t *testing.T) {
	dir, bin, orch := ownBinary(t, gatedConfig+"  - name: unit\n    command: 'echo all tests pass; exit 0'\n")
	cmd := orch("run", "--once", "--task", "t")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	next := bin + ".new"
	if err := os.WriteFile(next, []byte("#!/bin/sh\necho 'unknown command' >&2; exit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	log, _ := os.ReadFile(filepath.Join(dir, ".orchestrator", "runs", runIDOf(t, dir), "unit.log"))
	if err != nil || !strings.Contains(string(log), "all tests pass") {
		t.Errorf("run after the binary was replaced: %v\n%s\nunit.log: %s", err, out.Bytes(), log)
	}
}

// TestRunKilledAfterTheBinaryIsRemovedLeavesNoGateProcess: with the file
// orchestrate was started from removed, its gates still run under their
// supervisor, and a SIGKILL of the run takes a gate's children and setsid
// daemons with it.
func TestRunKilledAfterTheBinaryIsRemovedLeavesNoGateProcess(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	gate := `sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> pids
setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 &
( setsid sh -c 'echo $$ >> pids; exec sleep 300' </dev/null >/dev/null 2>&1 & )
while [ "$(wc -l < pids)" -lt 3 ]; do sleep 0.01; done
echo started > gate-started; sleep 300`
	dir, bin, orch := ownBinary(t, gatedConfig+"  - name: unit\n    command: sh gate.sh\n")
	if err := os.WriteFile(filepath.Join(dir, "gate.sh"), []byte(gate), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := orch("run", "--once", "--task", "t")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, dir)
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the gate to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "gate-started"))
		return err == nil
	})
	cmd.Process.Kill()
	cmd.Wait()
	waitPIDsGone(t, dir)
	if strings.Contains(out.String(), "without their supervisor") {
		t.Errorf("a warning of no supervisor where there is one:\n%s", out.Bytes())
	}
}

// runIDOf returns the ID of the one run in the repository dir's runs/.
func runIDOf(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, ".orchestrator", "runs"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("runs/: %v, %d entries; want one run", err, len(entries))
	}
	return entries[0].Name()
}

// TestWithoutProcSaysSoOnce: where /proc is not there (here: hidden under
// an empty file system in a mount namespace of the test's), a run says
// once, on stderr and in its run.log, that its commands run without their
// supervisor, and its agent and gates still run, in process groups.
func TestWithoutProcSaysSoOnce(t *testing.T) {
	hide := []string{"unshare", "-rm", "sh", "-c", `mount -t tmpfs none /proc && exec "$@"`, "sh"}
	if err := exec.Command(hide[0], append(hide[1:], "true")...).Run(); err != nil {
		t.Skip("cannot hide /proc here (unshare -rm, mount):", err)
	}
	dir, bin, _ := ownBinary(t, gatedConfig+"  - name: unit\n    command: 'echo all tests pass'\n  - name: lint\n    command: 'true'\n")
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hide[0], append(hide[1:], bin, "--dir", filepath.Join(dir, ".orchestrator"), "run", "--once", "--task", "t")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	const warning = "warning: commands run without their supervisor, in a process group only"
	if err != nil || strings.Count(stderr.String(), warning) != 1 {
		t.Errorf("run without /proc: %v; want exit 0 and the warning once on stderr:\n%s", err, stderr.Bytes())
	}
	logs := filepath.Join(dir, ".orchestrator", "runs", runIDOf(t, dir))
	runLog, _ := os.ReadFile(filepath.Join(logs, "run.log"))
	if strings.Count(string(runLog), warning) != 1 {
		t.Errorf("run.log = %q; want the warning once", runLog)
	}
	if unit, _ := os.ReadFile(filepath.Join(logs, "unit.log")); !strings.Contains(string(unit), "all tests pass") {
		t.Errorf("unit.log = %q", unit)
	}
}
