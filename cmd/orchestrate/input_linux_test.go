package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// orchestrate signature and record, blocked reading a stdin nobody writes
// to, end on SIGTERM and SIGINT with "interrupted", as a user's Ctrl-C or
// a supervisor's kill expects.
func TestInputInterruptedBySignal(t *testing.T) {
	bin := orchestrateBin(t)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: cannot tell when the command handles signals")
	}
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	cleanupAnalytics(t, ws) // issue add starts the background refresh
	if out, err := exec.Command(bin, "--dir", ws, "init").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--dir", ws, "issue", "add", "--summary", "x").CombinedOutput(); err != nil {
		t.Fatalf("issue add: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		sig  syscall.Signal
	}{
		{[]string{"signature"}, syscall.SIGTERM},
		{[]string{"signature", "-"}, syscall.SIGINT},
		{[]string{"record", "ISSUE-20241213-001"}, syscall.SIGTERM},
	} {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, tc.args...)...)
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
		r, stdin, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdin = r
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		stdin.Write([]byte("--- FAIL: TestX (0.00s)\n"))
		// Once the command has read what was written, it is in its read
		// loop, with its signal handling in place.
		waitDrained(t, stdin)
		waitCaught(t, cmd.Process.Pid, tc.sig)
		cmd.Process.Signal(tc.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			t.Fatalf("%v: still reading a minute after %v", tc.args, tc.sig)
		}
		stdin.Close()
		if err == nil || !strings.Contains(stderr.String(), "reading stdin: interrupted") {
			t.Errorf("%v after %v: %v, stderr %q; want a failure, reading stdin: interrupted", tc.args, tc.sig, err, stderr.String())
		}
	}
}

// waitCaught waits until process pid catches sig (its SigCgt in
// /proc/PID/status), which Go's signal.Notify makes it do at start.
func waitCaught(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	for i := 0; i < 6000; i++ {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
				mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err == nil && mask&(1<<(uint(sig)-1)) != 0 {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never caught %v", pid, sig)
}

// waitDrained waits until the pipe that w writes to is empty: its reader
// read everything.
func waitDrained(t *testing.T, w *os.File) {
	t.Helper()
	for i := 0; i < 6000; i++ {
		var n int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, w.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
			t.Fatalf("FIONREAD: %v", errno)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never read its stdin")
}
