package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// crashState is a session state with a fixed run ID, so that a command's
// rows and files are the same from one run of it to the next.
const crashState = `# Session State

## Auto-Retry State

| Field | Value |
|-------|-------|
| total_auto_retries | 2 |
| last_retry_reason | null |
| auto_retry_enabled | true |
| run_id | 20241213-100000-abcdef |
| run_started | 2024-12-13T10:00:00Z |
`

// TestCrashAtEveryWrite kills each mutating command (SIGKILL, from within,
// through fsx.KillAtEnv) at every point where it has put a write on disk,
// one point per run, until it runs to its end. After each kill: every file
// is as it was or as the command leaves it, never a mix; the next command
// completes a half-done check, so that the queue's Retry-Counts and the
// state's total_auto_retries agree; and no temporary file survives it.
func TestCrashAtEveryWrite(t *testing.T) {
	bin := orchestrateBin(t)
	orch := func(ws, stdin string, env []string, args ...string) (*exec.Cmd, []byte, error) {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(append(os.Environ(), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z", "ORCHESTRATE_NO_BACKGROUND=1"), env...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return cmd, out, err
	}
	base := filepath.Join(t.TempDir(), ".orchestrator")
	must := func(stdin string, args ...string) {
		t.Helper()
		if _, out, err := orch(base, stdin, nil, args...); err != nil {
			t.Fatalf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	must("", "init")
	if err := os.WriteFile(filepath.Join(base, loop.StateFile), []byte(crashState), 0o644); err != nil {
		t.Fatal(err)
	}
	gates := "gates:\n  - name: unit\n    command: 'echo FAIL TestUnit; exit 1'\n    auto_retry: true\n"
	if err := os.WriteFile(filepath.Join(base, loop.ConfigFile), []byte(gates), 0o644); err != nil {
		t.Fatal(err)
	}
	must("FAIL: TestA\n", "issue", "add", "--auto-retry", "true", "--summary", "a fails", "--details", "-")
	must("", "issue", "add", "--auto-retry", "true", "--summary", "b fails")
	must("", "issue", "add", "--summary", "c, by hand")

	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		next  []string // the next command; a no-op issue set if nil
	}{
		{"gate", "", []string{"gate"}, []string{"gate"}},
		{"check", "", []string{"check"}, nil},
		{"issue-add", "FAIL: TestD\n", []string{"issue", "add", "--auto-retry", "true", "--summary", "d fails", "--details", "-"}, nil},
		{"record", "FAIL: TestA again\n", []string{"record", "ISSUE-20241213-001", "-"}, nil},
		{"issue-resolve", "", []string{"issue", "resolve", "ISSUE-20241213-002"}, nil},
		{"issue-set", "", []string{"issue", "set", "ISSUE-20241213-003", "Priority=high"}, nil},
		{"session-start", "", []string{"session", "start"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := snapshot(t, base)
			ref := copyWorkspace(t, base)
			if _, out, err := orch(ref, tc.stdin, nil, tc.args...); err != nil && exitOf(err) != 11 && exitOf(err) != 10 && exitOf(err) != 12 {
				t.Fatalf("orchestrate %s: %v\n%s", tc.name, err, out)
			}
			after := snapshot(t, ref)

			kills := 0
			for k := 1; ; k++ {
				ws := copyWorkspace(t, base)
				_, out, err := orch(ws, tc.stdin, []string{fsx.KillAtEnv + "=" + strconv.Itoa(k)}, tc.args...)
				if !killed(err) {
					if err != nil && exitOf(err) != 11 && exitOf(err) != 10 && exitOf(err) != 12 {
						t.Fatalf("orchestrate %s with no kill at step %d: %v\n%s", tc.name, k, err, out)
					}
					break
				}
				kills++
				now := snapshot(t, ws)
				for _, f := range []string{loop.QueueFile, loop.StateFile} {
					if now[f] != before[f] && now[f] != after[f] && !(tc.name == "session-start" && f == loop.StateFile && validState(now[f])) {
						t.Errorf("killed at step %d: %s is neither old nor new:\n%s", k, f, now[f])
					}
				}
				if h := now[loop.HistoryFile]; !strings.HasPrefix(h, before[loop.HistoryFile]) {
					t.Errorf("killed at step %d: history.csv lost rows:\n%s", k, h)
				}

				// The next command, under the lock, completes and cleans.
				nextCmd := tc.next
				if nextCmd == nil {
					nextCmd = []string{"issue", "set", "ISSUE-20241213-003", "Type=bug"}
				}
				if _, out, err := orch(ws, "", nil, nextCmd...); err != nil && exitOf(err) != 12 {
					t.Fatalf("killed at step %d: the next command: %v\n%s", k, err, out)
				}
				if temps := tempFiles(t, ws); len(temps) > 0 {
					t.Errorf("killed at step %d: temporary files survive the next command: %v", k, temps)
				}
				next := snapshot(t, ws)
				// The pair: the check's loop is counted if and only if its
				// issues were retried.
				if tc.name == "check" {
					queueNew := next[loop.QueueFile] == after[loop.QueueFile]
					if queueNew != (total(t, next) == total(t, after)) || !queueNew && total(t, next) != total(t, before) {
						t.Errorf("killed at step %d: after the next command the queue is %s (Retry-Counts %d) and total_auto_retries %d; before %d, after a whole check %d",
							k, map[bool]string{true: "new", false: "old"}[queueNew], retries(t, next), total(t, next), total(t, before), total(t, after))
					}
					// A check that retried its issues is in the history, at its
					// own time, once the next command has completed it.
					if queueNew && !regexp.MustCompile(`(?m)^2024-12-13T10:00:00\.000Z,[^,]*,[^,]*,check,.*,triggered,`).MatchString(next[loop.HistoryFile]) {
						t.Errorf("killed at step %d: the check retried its issues, and history.csv has no row of it after the next command:\n%s", k, next[loop.HistoryFile])
					}
				}
			}
			if kills < 2 {
				t.Errorf("%s was killed at %d points only; want every write", tc.name, kills)
			}
			t.Logf("%s: killed at %d points", tc.name, kills)
		})
	}
}

func killed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func exitOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// snapshot reads the workspace's files by name.
func snapshot(t *testing.T, ws string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{loop.QueueFile, loop.StateFile, loop.HistoryFile} {
		b, err := os.ReadFile(filepath.Join(ws, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	return files
}

func copyWorkspace(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), ".orchestrator")
	if out, err := exec.Command("cp", "-R", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return to
}

// tempFiles lists the temporary files in the workspace and its runs.
func tempFiles(t *testing.T, ws string) []string {
	t.Helper()
	runs, _ := filepath.Glob(filepath.Join(ws, "runs", "*"))
	var temps []string
	for _, dir := range append([]string{ws}, runs...) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp") {
				temps = append(temps, filepath.Join(filepath.Base(dir), e.Name()))
			}
		}
	}
	return temps
}

func validState(s string) bool {
	st := session.Parse([]byte(s))
	return len(st.Problems) == 0
}

// retries is the sum of the issues' Retry-Counts.
func retries(t *testing.T, files map[string]string) int {
	t.Helper()
	q := queue.Parse([]byte(files[loop.QueueFile]))
	if len(q.Problems) > 0 {
		t.Fatalf("queue: %v", q.Problems)
	}
	n := 0
	for _, is := range q.Issues {
		n += is.Int(queue.FieldRetryCount, 0)
	}
	return n
}

func total(t *testing.T, files map[string]string) int {
	t.Helper()
	st := session.Parse([]byte(files[loop.StateFile]))
	if len(st.Problems) > 0 {
		t.Fatalf("state: %v", st.Problems)
	}
	return st.TotalAutoRetries()
}
