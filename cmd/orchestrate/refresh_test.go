package main

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// waitAnalytics waits until no background orchestrate analytics --if-stale
// is making the page of the workspace at ws, so that a test's directory is
// not removed under it. The command that starts one takes the page's lock
// for it before it starts it, and the refresh holds it to its end: once
// the commands are done, the lock free is the event that no refresh is
// left (a minute bounds a refresh that hangs).
func waitAnalytics(ws string) {
	w := loop.Workspace{Dir: ws}
	if _, err := os.Stat(ws); err != nil {
		return
	}
	for start := time.Now(); refreshing(w) && time.Since(start) < time.Minute; {
		time.Sleep(5 * time.Millisecond)
	}
}

// refreshing reports whether a process is making w's page now: one holds
// its lock.
func refreshing(w loop.Workspace) bool {
	unlock, err := fsx.TryLock(w.Path(loop.AnalyticsLockFile))
	if err != nil {
		return true
	}
	unlock()
	return false
}

// waitAllAnalytics is waitAnalytics for every workspace below root.
func waitAllAnalytics(root string) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(strings.TrimPrefix(path, root), string(filepath.Separator)) > 4 {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, loop.HistoryFile)); err == nil {
			waitAnalytics(path)
		}
		return nil
	})
}

// cleanupAnalytics makes the test wait, at its end, for the background
// refreshes of the workspace at ws (registered after t.TempDir, it runs
// before the directory is removed); a test that set
// ORCHESTRATE_NO_BACKGROUND=1 (t.Setenv) started none.
func cleanupAnalytics(t testing.TB, ws string) {
	t.Cleanup(func() {
		if os.Getenv("ORCHESTRATE_NO_BACKGROUND") != "1" {
			waitAnalytics(ws)
		}
	})
}

// The background refresh is detached: no standard stream of its parent
// (the Stop hook's stdout is read to its end by the agent client), a
// session of its own, and the workspace given by an absolute path.
func TestRefreshCommandDetached(t *testing.T) {
	cmd := refreshCommand("/bin/orchestrate", "/repo/.orchestrator")
	if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil || len(cmd.ExtraFiles) > 0 {
		t.Errorf("the refresh inherits streams: stdin %v, stdout %v, stderr %v, extra %v", cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles)
	}
	if cmd.SysProcAttr == nil || !cmd.SysProcAttr.Setsid {
		t.Errorf("the refresh is not in a session of its own")
	}
	if got := strings.Join(cmd.Args, " "); got != "orchestrate --dir /repo/.orchestrator analytics --if-stale" {
		t.Errorf("args %q", got)
	}
}

// A command that appends to the history starts the refresh; one that
// finds the page current, or another refresh at work, starts none.
func TestRefreshAnalyticsStarts(t *testing.T) {
	ws := loop.Workspace{Dir: filepath.Join(t.TempDir(), loop.DefaultDir)}
	if err := os.MkdirAll(ws.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Path(loop.ConfigFile), []byte("gates: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	started := 0
	startRefresh = func(loop.Workspace) { started++ }
	defer func() { startRefresh = nil }()
	refreshAnalytics(ws) // no history, no page: current
	if started != 0 {
		t.Fatalf("a refresh started for a workspace with nothing to show")
	}
	if err := run(context.Background(), []string{"--dir", ws.Dir, "session", "start"}, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if started != 1 {
		t.Fatalf("session start started %d refreshes; want 1", started)
	}
	if _, err := ws.RefreshAnalytics(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	refreshAnalytics(ws)
	if started != 1 {
		t.Errorf("a refresh started for a current page")
	}
	if err := os.WriteFile(ws.Path(loop.HistoryFile), []byte("more"), 0o644); err != nil {
		t.Fatal(err)
	}
	unlock, err := fsx.TryLock(ws.Path(loop.AnalyticsLockFile))
	if err != nil {
		t.Fatal(err)
	}
	refreshAnalytics(ws)
	unlock()
	if started != 1 {
		t.Errorf("a refresh started while another one was at work")
	}
	refreshAnalytics(ws)
	if started != 2 {
		t.Errorf("no refresh started for a stale page")
	}
}

// The page is made when someone will look, not at each step of a loop at
// work: a record, a check and a Stop hook that blocks start no refresh; a
// Stop hook that lets the agent stop, and status, do.
func TestRefreshWhenSomeoneLooks(t *testing.T) {
	root := t.TempDir()
	ws := loop.Workspace{Dir: filepath.Join(root, loop.DefaultDir)}
	if err := os.MkdirAll(ws.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := "gates:\n  - name: unit\n    command: 'test -e fixed || { echo unit: got 1, want 4; exit 1; }'\n"
	if err := os.WriteFile(ws.Path(loop.ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	failure := filepath.Join(root, "out.log")
	os.WriteFile(failure, []byte("unit: got 1, want 4\n"), 0o644)
	started := 0
	startRefresh = func(loop.Workspace) { started++ }
	defer func() { startRefresh = nil }()
	step := func(want int, stdin string, args ...string) {
		t.Helper()
		err := run(context.Background(), args, strings.NewReader(stdin), io.Discard, io.Discard)
		os.Unsetenv(loop.ChildEnv) // set by the hook for its gates' processes
		var coded *codeError       // exits 10 and 11 are answers, not failures
		if err != nil && !(errors.As(err, &coded) && coded.code >= 10) {
			t.Fatalf("%v: %v", args, err)
		}
		if started != want {
			t.Fatalf("after %v: %d refreshes started; want %d", args, started, want)
		}
	}
	stop := `{"session_id":"s1","cwd":"` + root + `","hook_event_name":"Stop"}`
	step(0, stop, "hook", "stop") // blocked: the agent goes on
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil || len(q.Issues) != 1 {
		t.Fatalf("the blocked stop filed %v issues (%v)", q, err)
	}
	step(0, "", "--dir", ws.Dir, "record", q.Issues[0].ID, failure, "--exit-code", "1")
	step(0, "", "--dir", ws.Dir, "check")
	os.WriteFile(filepath.Join(root, "fixed"), nil, 0o644)
	step(1, stop, "hook", "stop") // passed: the agent stops
	step(2, "", "--dir", ws.Dir, "status")
}

// The background refresh holds the page's lock from before it starts to
// its end: its parent takes the lock and hands it over. Held at its start
// (ORCHESTRATE_REFRESH_HOLD), the refresh is seen at work as soon as the
// command that started it has exited; before, a look in between found
// neither a current page nor a refresh, and a test or a script that
// waited for it could only guess how long to wait.
func TestRefreshHoldsTheLockFromItsStart(t *testing.T) {
	root := t.TempDir()
	ws := loop.Workspace{Dir: filepath.Join(root, loop.DefaultDir)}
	if err := os.MkdirAll(ws.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.Path(loop.ConfigFile), []byte("gates: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cleanupAnalytics(t, ws.Dir)
	hold := filepath.Join(root, "go")
	cmd := exec.Command(orchestrateBin(t), "--dir", ws.Dir, "issue", "add", "--summary", "one")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_REFRESH_HOLD="+hold)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("issue add: %v\n%s", err, out)
	}
	if ws.AnalyticsCurrent() || !refreshing(ws) {
		t.Fatalf("after the command: current %v, refreshing %v; want a refresh at work", ws.AnalyticsCurrent(), refreshing(ws))
	}
	os.WriteFile(hold, nil, 0o644)
	waitAnalytics(ws.Dir)
	if !ws.AnalyticsCurrent() {
		t.Errorf("the refresh ended and the page is not current")
	}
}
