package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// watchDeadline bounds every wait for the watcher; on a quiet machine each
// takes a debounce and a few milliseconds.
const watchDeadline = 10 * time.Second

// watchOutput collects what a watcher writes and says when it wrote.
type watchOutput struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newWatchOutput() *watchOutput { return &watchOutput{wrote: make(chan struct{}, 1)} }

func (o *watchOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	n, err := o.buf.Write(p)
	o.mu.Unlock()
	select {
	case o.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (o *watchOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func (o *watchOutput) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Len()
}

// waitFor waits until the output after offset from contains want and
// returns the offset just past it. It gives up at the deadline or when
// exited is closed (the watcher is gone).
func (o *watchOutput) waitFor(t *testing.T, from int, want string, exited <-chan struct{}) int {
	t.Helper()
	deadline := time.NewTimer(watchDeadline)
	defer deadline.Stop()
	for {
		s := o.String()
		if i := strings.Index(s[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-o.wrote:
		case <-exited:
			if s := o.String(); strings.Contains(s[from:], want) {
				continue
			}
			t.Fatalf("the watcher exited before printing %q; it printed:\n%s", want, s)
		case <-deadline.C:
			t.Fatalf("no %q within %v; the watcher printed:\n%s", want, watchDeadline, s)
		}
	}
}

// watchProc is orchestrate watch running as a process.
type watchProc struct {
	cmd      *exec.Cmd
	out, err *watchOutput
	exited   chan struct{}
	waitErr  error
}

func startWatch(t *testing.T, ws string, args ...string) *watchProc {
	t.Helper()
	bin := orchestrateBin(t)
	p := &watchProc{out: newWatchOutput(), err: newWatchOutput(), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"--dir", ws, "watch"}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.err
	// A binary built with -race sleeps a second before it exits, unless
	// told not to.
	p.cmd.Env = append(os.Environ(), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// stop sends sig and checks that the watcher exits 0, promptly.
func (p *watchProc) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(watchDeadline):
		t.Fatalf("the watcher did not exit within %v of %v", watchDeadline, sig)
	}
	if p.waitErr != nil {
		t.Errorf("after %v: %v; want exit 0; stderr:\n%s", sig, p.waitErr, p.err)
	}
}

// watchQueue is a queue of one issue with the given status and summary.
func watchQueue(status, summary string) string {
	return fmt.Sprintf(`# Issue queue

## ISSUE-20241213-001

| Field | Value |
|-------|-------|
| Type | bug |
| Priority | critical |
| Status | %s |
| Auto-Retry | true |
| Retry-Count | 0 |
| Max-Retries | 10 |

### Summary
%s
`, status, summary)
}

// TestWatch edits the queue every way an editor or a tool saves it while
// orchestrate watch runs, and checks that each save is shown promptly:
// in place, a temporary file renamed over it, deleted, created again,
// made malformed, in a burst, with the whole directory replaced. Then
// Ctrl-C ends it with exit 0.
func TestWatch(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	queuePath := filepath.Join(ws, "issue_queue.md")
	write := func(path, content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// replace saves as careful editors and this tool do: a temporary
	// file in the same directory, renamed over the file.
	replace := func(content string) {
		t.Helper()
		tmp := filepath.Join(ws, ".issue_queue.md.swp")
		write(tmp, content)
		if err := os.Rename(tmp, queuePath); err != nil {
			t.Fatal(err)
		}
	}
	write(queuePath, watchQueue("pending", "as-found"))
	q := watchQueue("", "")
	statusLine := strings.Count(q[:strings.Index(q, "| Status")], "\n") + 1

	start := time.Now()
	p := startWatch(t, ws)
	// The first display comes once the watcher is in place.
	at := p.out.waitFor(t, 0, "ok: 1 issue, no problems", p.exited)
	t.Logf("first display after %v", time.Since(start).Round(time.Millisecond))

	analyticsPath := filepath.Join(ws, "analytics.html")
	steps := []struct {
		name   string
		do     func()
		want   []string
		exists string // a file that must exist once want is shown
	}{{
		name: "in place",
		do:   func() { write(queuePath, watchQueue("pending", "edited-in-place")) },
		want: []string{"edited-in-place"},
	}, {
		name: "rename over",
		do:   func() { replace(watchQueue("in_progress", "replaced-by-rename")) },
		want: []string{"replaced-by-rename"},
	}, {
		name: "delete",
		do:   func() { os.Remove(queuePath) },
		want: []string{"issue_queue.md does not exist)", "no issues"},
	}, {
		name: "create again",
		do:   func() { write(queuePath, watchQueue("pending", "created-again")) },
		want: []string{"created-again"},
	}, {
		name: "unknown status",
		do:   func() { write(queuePath, watchQueue("done", "created-again")) },
		want: []string{fmt.Sprintf(`issue_queue.md:%d: ISSUE-20241213-001: unknown status "done"`, statusLine)},
	}, {
		name: "history",
		do: func() {
			write(filepath.Join(ws, "history.csv"),
				"time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n")
		},
		want:   []string{"wrote " + analyticsPath},
		exists: analyticsPath,
	}, {
		name: "files it does not watch, then a save",
		do: func() {
			write(filepath.Join(ws, "notes.txt"), "not watched\n")
			write(filepath.Join(ws, ".hidden"), "not watched\n")
			replace(watchQueue("pending", "after-the-others"))
		},
		want: []string{"after-the-others", "ok: 1 issue, no problems"},
	}, {
		name: "directory replaced",
		do: func() {
			if err := os.RemoveAll(ws); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			write(queuePath, watchQueue("pending", "directory-back"))
		},
		want: []string{"directory-back"},
	}}
	for _, s := range steps {
		t0 := time.Now()
		s.do()
		for _, w := range s.want {
			at = p.out.waitFor(t, at, w, p.exited)
		}
		t.Logf("%s: shown after %v", s.name, time.Since(t0).Round(time.Millisecond))
		if s.exists != "" {
			if _, err := os.Stat(s.exists); err != nil {
				t.Errorf("%s: %v", s.name, err)
			}
		}
	}
	p.err.waitFor(t, 0, "is back", p.exited)

	// A burst of saves is one refresh, or a few on a busy machine; never
	// one for each save.
	const burst = 20
	from := p.out.Len()
	t0 := time.Now()
	for i := range burst {
		write(queuePath, watchQueue("pending", fmt.Sprintf("burst-%d", i)))
	}
	end := p.out.waitFor(t, from, fmt.Sprintf("burst-%d ", burst-1), p.exited)
	refreshes := strings.Count(p.out.String()[from:end], "\n== ")
	t.Logf("burst of %d saves: %d refresh(es), the last shown after %v", burst, refreshes, time.Since(t0).Round(time.Millisecond))
	if refreshes < 1 || refreshes > burst/2 {
		t.Errorf("a burst of %d saves made %d refreshes; want 1 to %d", burst, refreshes, burst/2)
	}

	p.stop(t, os.Interrupt)

	out := p.out.String()
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "== ") {
			continue
		}
		// Only the files the test saved, never the report it wrote, the
		// temporary files or the other files.
		for _, ignored := range []string{"analytics.html", ".swp", ".hidden", "notes.txt", ".lock"} {
			if strings.Contains(line, ignored) {
				t.Errorf("a refresh for %s: %s", ignored, line)
			}
		}
	}
	if n, most := strings.Count(out, "\n== "), 3*len(steps)+burst/2; n > most {
		t.Errorf("%d refreshes for %d saves; want at most %d:\n%s", n, len(steps)+burst, most, out)
	}
	t.Logf("%d refreshes in %v", strings.Count(out, "\n== "), time.Since(start).Round(time.Millisecond))
}

// TestWatchSIGTERM: a service manager's stop is a clean exit too.
func TestWatchSIGTERM(t *testing.T) {
	ws := t.TempDir()
	p := startWatch(t, ws)
	p.out.waitFor(t, 0, "ok: 0 issues, no problems", p.exited)
	p.stop(t, syscall.SIGTERM)
}

// TestWatchJSON runs the watch in this process with --json and
// --max-refreshes: one JSON line a refresh, then exit 0 by itself.
func TestWatchJSON(t *testing.T) {
	ws := t.TempDir()
	out := newWatchOutput()
	var stderr bytes.Buffer
	exited := make(chan struct{})
	var err error
	go func() {
		defer close(exited)
		err = run(t.Context(), []string{"--dir", ws, "--json", "watch", "--debounce", "20ms", "--max-refreshes", "1"},
			strings.NewReader(""), out, &stderr)
	}()
	at := out.waitFor(t, 0, "\n", exited)
	// Renamed into place, so that one event brings the whole file.
	tmp := filepath.Join(ws, ".issue_queue.md.tmp")
	if err := os.WriteFile(tmp, []byte(watchQueue("done", "x")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(ws, "issue_queue.md")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, at, "\n", exited)
	select {
	case <-exited:
	case <-time.After(watchDeadline):
		t.Fatal("--max-refreshes 1 did not end the watch")
	}
	if err != nil {
		t.Fatalf("watch: %v; stderr:\n%s", err, &stderr)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines; want 2:\n%s", len(lines), out)
	}
	var first, second watchJSON
	for i, v := range []*watchJSON{&first, &second} {
		if err := json.Unmarshal([]byte(lines[i]), v); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, lines[i])
		}
	}
	if first.Refresh != 0 || !first.OK || first.Issues != 0 {
		t.Errorf("first line = %+v; want refresh 0, ok, no issues", first)
	}
	if second.Refresh != 1 || second.OK || second.Issues != 1 || len(second.Problems) != 1 ||
		strings.Join(second.Changed, ",") != "issue_queue.md" || second.Statuses["done"] != 1 {
		t.Errorf("second line = %+v; want refresh 1 of issue_queue.md, one issue, one problem", second)
	}
}

// TestWatchErrors: the mistakes that stop the watch before it starts.
func TestWatchErrors(t *testing.T) {
	ws := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dir", ws, "watch", "--debounce", "-1s"}, exitUsage, "--debounce must not be negative"},
		{[]string{"--dir", ws, "watch", "--max-refreshes", "-1"}, exitUsage, "--max-refreshes must not be negative"},
		{[]string{"--dir", ws, "watch", "now"}, exitUsage, "takes no arguments"},
		{[]string{"--dir", filepath.Join(ws, "missing"), "watch"}, exitError, "no workspace"},
	} {
		var stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), watchDeadline)
		code := exitCode(run(ctx, tt.args, strings.NewReader(""), io.Discard, &stderr), &stderr)
		cancel()
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("orchestrate %s: exit %d, %q; want exit %d, %q", strings.Join(tt.args[2:], " "), code, stderr.String(), tt.code, tt.want)
		}
	}
}

// TestWatchApproval: an approval made by editing the queue by hand, while
// watch runs, is shown at once.
func TestWatchApproval(t *testing.T) {
	t.Parallel()
	ws := filepath.Join(t.TempDir(), ".orchestrator")
	os.MkdirAll(ws, 0o755)
	request := func(approved string) string {
		return fmt.Sprintf(`## ISSUE-20241213-001

| Field | Value |
|-------|-------|
| Type | approval |
| Status | pending |
| Gate | sign-off |
| Approved | %s |
`, approved)
	}
	path := filepath.Join(ws, "issue_queue.md")
	os.WriteFile(path, []byte(request("")), 0o644)
	p := startWatch(t, ws)
	at := p.out.waitFor(t, 0, "approval ISSUE-20241213-001 for gate sign-off: pending", p.exited)
	os.WriteFile(path, []byte(request("true")), 0o644)
	p.out.waitFor(t, at, "approval ISSUE-20241213-001 for gate sign-off: approved (was pending)", p.exited)
	p.stop(t, os.Interrupt)
}
