package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
)

// drainTimeout is how long the output pipe may stay open once the whole
// process group is dead: only a process that left the group (setsid, a
// daemon) can still hold it, and its output is not the gate's.
const drainTimeout = 500 * time.Millisecond

// run runs one gate. The second result is an error writing its log.
func run(ctx context.Context, g config.Gate, opts *Options, logPath string) (Result, error) {
	r := Result{Gate: g, ExitCode: -1, Started: opts.now(), LogPath: logPath}
	finish := func(o Outcome, msg string) (Result, error) {
		r.Outcome, r.Err = o, msg
		r.Duration = opts.now().Sub(r.Started)
		return r, nil
	}
	if ctx.Err() != nil {
		return finish(Errored, "canceled before it started")
	}

	dir := opts.RepoRoot
	if g.WorkingDir != "" {
		dir = filepath.Join(opts.RepoRoot, g.WorkingDir)
	}
	if dir != "" {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return finish(Errored, fmt.Sprintf("working_dir %q is not a directory", g.WorkingDir))
		}
	}

	var log *os.File
	var logErr error
	if logPath != "" {
		log, logErr = os.Create(logPath)
		if logErr != nil {
			log, r.LogPath = nil, ""
		}
	}
	var logw io.Writer
	if log != nil {
		logw = log
	}
	out := newCapture(opts.output(), logw)

	pr, pw, err := os.Pipe()
	if err != nil {
		closeLog(log, &logErr)
		return finish(Errored, fmt.Sprintf("making the output pipe: %v", err))
	}

	runCtx, cancel := context.WithCancel(ctx)
	if g.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, g.Timeout)
	}
	defer cancel()

	base := opts.Env
	if base == nil {
		base = os.Environ()
	}
	cmd := exec.CommandContext(runCtx, "sh", "-c", g.Command)
	cmd.Dir = dir
	cmd.Env = sortedEnv(base, g.Env)
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: output interleaved as written
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	grace := opts.killGrace()
	group := &group{}
	cmd.Cancel = func() error { return group.terminate(cmd.Process.Pid) }
	// If the leader ignores SIGTERM, exec kills it after the grace; then
	// cleanup below kills the rest of the group.
	cmd.WaitDelay = grace

	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		closeLog(log, &logErr)
		return finish(Errored, fmt.Sprintf("could not start: %v", err))
	}
	pw.Close() // the children hold their copies; EOF comes when the last one closes
	group.started(cmd.Process.Pid)

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 64<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	// Runs once the leader has exited. On Linux the leader is not reaped yet,
	// so its process group ID cannot have been reused by anyone else.
	cleanup := func() {
		group.leaderExited()
		group.signal(syscall.SIGTERM) // what the leader left behind
		deadline := time.Now().Add(grace)
		if t := group.terminatedAt(); !t.IsZero() {
			deadline = t.Add(grace)
		}
		wait(copied, time.Until(deadline))
		group.signal(syscall.SIGKILL)
		if !wait(copied, drainTimeout) {
			if pr.SetReadDeadline(time.Now()) != nil {
				pr.Close()
			}
			<-copied
		}
		group.reaped()
	}
	waitErr := waitGroupLeader(cmd, cleanup)
	pr.Close()
	if logErr == nil {
		logErr = out.logErr
	}
	closeLog(log, &logErr)

	r.Output, r.OutputBytes, r.Omitted = out.String(), out.total, out.omitted()
	r.Duration = opts.now().Sub(r.Started)
	state := cmd.ProcessState
	switch {
	case !group.terminatedAt().IsZero() && ctx.Err() != nil:
		r.Outcome, r.Err = Errored, "canceled: "+ctx.Err().Error()
	case !group.terminatedAt().IsZero():
		r.Outcome, r.Err = TimedOut, fmt.Sprintf("timed out after %s", g.Timeout)
	case state == nil:
		r.Outcome, r.Err = Errored, fmt.Sprintf("waiting for it: %v", waitErr)
	case state.Exited():
		r.ExitCode = state.ExitCode()
		switch r.ExitCode {
		case 0:
			r.Outcome = Pass
		case 126:
			r.Outcome, r.Err = Errored, "command not executable (exit 126)"
		case 127:
			r.Outcome, r.Err = Errored, "command not found (exit 127)"
		default:
			r.Outcome = Fail
		}
	default:
		r.Outcome = Fail
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = signalName(ws.Signal())
		}
	}
	return r, logErr
}

func closeLog(f *os.File, errp *error) {
	if f == nil {
		return
	}
	if err := f.Close(); err != nil && *errp == nil {
		*errp = err
	}
}

// wait waits for c to close, at most d; it reports whether c closed.
func wait(c <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-c:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
		return false
	}
}

// group signals a gate's process group for as long as its leader is not
// reaped: after that the ID may belong to someone else.
type group struct {
	mu         sync.Mutex
	pgid       int
	exited     bool      // the leader has exited: a timeout now is too late to count
	done       bool      // the leader is reaped: the group ID is no longer ours
	terminated time.Time // when the context ended and SIGTERM was sent
}

// terminate is the exec.Cmd's Cancel: the timeout or the caller's
// cancellation sends SIGTERM to the whole group.
func (g *group) terminate(pid int) error {
	g.started(pid) // Cancel may come before run gets to say so
	g.mu.Lock()
	if g.exited {
		g.mu.Unlock()
		return os.ErrProcessDone
	}
	if g.terminated.IsZero() {
		g.terminated = time.Now()
	}
	g.mu.Unlock()
	if !g.signal(syscall.SIGTERM) {
		return os.ErrProcessDone
	}
	return nil
}

func (g *group) terminatedAt() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.terminated
}

// signal sends sig to the group; false once the leader is reaped.
func (g *group) signal(sig syscall.Signal) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done || g.pgid <= 0 {
		return false
	}
	err := syscall.Kill(-g.pgid, sig)
	return err == nil || !errors.Is(err, syscall.ESRCH)
}

func (g *group) started(pid int) {
	g.mu.Lock()
	g.pgid = pid
	g.mu.Unlock()
}

func (g *group) leaderExited() {
	g.mu.Lock()
	g.exited = true
	g.mu.Unlock()
}

func (g *group) reaped() {
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
