package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
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
	switch {
	case g.IsReview():
		return runReview(ctx, g, opts, logPath)
	case g.IsHuman():
		r := Result{Gate: g, ExitCode: -1, Started: opts.now()}
		decideHuman(&r, opts, true)
		return r, nil
	}
	r := Result{Gate: g, ExitCode: -1, Started: opts.now(), LogPath: logPath}
	if ctx.Err() != nil {
		r.Outcome, r.Err = Errored, "canceled before it started"
		return r, nil
	}
	dir, err := gateDir(g, opts)
	if err != nil {
		r.Outcome, r.Err = Errored, err.Error()
		return r, nil
	}
	logErr := execute(ctx, &r, spec{command: g.Command, dir: dir, env: g.Env, timeout: g.Timeout}, opts, logPath)
	return r, logErr
}

// gateDir returns the directory a gate's commands run in.
func gateDir(g config.Gate, opts *Options) (string, error) {
	dir := opts.RepoRoot
	if g.WorkingDir != "" {
		dir = filepath.Join(opts.RepoRoot, g.WorkingDir)
	}
	if dir != "" {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return "", fmt.Errorf("working_dir %q is not a directory", g.WorkingDir)
		}
	}
	return dir, nil
}

// spec is one command to run.
type spec struct {
	command string
	dir     string
	env     map[string]string // laid over Options.Env
	timeout time.Duration     // 0: none but the context's
	// timeoutMsg is Result.Err on a timeout; "" is "timed out after <timeout>".
	timeoutMsg string
	stdin      string // a file the command reads as its stdin; "" for none
	// stdout, when set, gets the command's stdout alone, apart from the
	// interleaved output that the capture and the log get.
	stdout *limitedBuffer
}

// limitedBuffer keeps the first max bytes written to it and counts the rest.
type limitedBuffer struct {
	buf     []byte
	max     int
	dropped int64
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	if len(p) > b.max-len(b.buf) {
		b.dropped += int64(len(p) - max(0, min(len(p), b.max-len(b.buf))))
	}
	return len(p), nil
}

// execute runs sp and fills r's outcome, exit code, output and duration; r
// must have Started set. The error is one writing the log.
func execute(ctx context.Context, r *Result, sp spec, opts *Options, logPath string) error {
	finish := func(o Outcome, msg string) error {
		r.Outcome, r.Err = o, msg
		r.Duration = opts.now().Sub(r.Started)
		return nil
	}
	if ctx.Err() != nil {
		return finish(Errored, "canceled before it started")
	}

	var log *logCap
	var logErr error
	if logPath != "" {
		log, logErr = createLog(logPath, opts.Output)
		if logErr != nil {
			log, r.LogPath = nil, ""
		}
	}
	var logw io.Writer
	if log != nil {
		logw = log
	}
	out := &lockedWriter{w: newCapture(opts.output(), logw).signing(opts.signatureOptions())}

	var stdin *os.File
	if sp.stdin != "" {
		f, err := os.Open(sp.stdin)
		if err != nil {
			closeLog(log, &logErr)
			return finish(Errored, fmt.Sprintf("opening its stdin: %v", err))
		}
		defer f.Close()
		stdin = f
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		closeLog(log, &logErr)
		return finish(Errored, fmt.Sprintf("making the output pipe: %v", err))
	}
	readers := []*os.File{pr}
	var spr, spw *os.File
	if sp.stdout != nil {
		if spr, spw, err = os.Pipe(); err != nil {
			pr.Close()
			pw.Close()
			closeLog(log, &logErr)
			return finish(Errored, fmt.Sprintf("making the output pipe: %v", err))
		}
		readers = append(readers, spr)
	}

	runCtx, cancel := context.WithCancel(ctx)
	if sp.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, sp.timeout)
	}
	defer cancel()

	base := opts.Env
	if base == nil {
		base = os.Environ()
	}
	// The thread that starts the command stays this goroutine's until it
	// ends: the parent-death signal fires when the starting thread exits.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	grace := opts.killGrace()
	cmd, waitDelay := command(runCtx, sp.command, sortedEnv(base, sp.env), grace)
	cmd.Dir = sp.dir
	cmd.Stdout, cmd.Stderr = pw, pw // one pipe: output interleaved as written
	if spw != nil {
		cmd.Stdout = spw
	}
	if stdin != nil {
		cmd.Stdin = stdin
	}
	group := &group{}
	cmd.Cancel = func() error { return group.terminate(cmd.Process.Pid) }
	// If the leader ignores SIGTERM, exec kills it after the grace; then
	// cleanup below kills the rest of the group.
	cmd.WaitDelay = waitDelay

	if err := cmd.Start(); err != nil {
		pw.Close()
		if spw != nil {
			spw.Close()
		}
		for _, f := range readers {
			f.Close()
		}
		closeLog(log, &logErr)
		return finish(Errored, fmt.Sprintf("could not start: %v", err))
	}
	// The children hold their copies; EOF comes when the last one closes.
	pw.Close()
	if spw != nil {
		spw.Close()
	}
	group.started(cmd.Process.Pid)
	if opts.Started != nil {
		opts.Started(cmd.Process.Pid)
	}

	copied := make(chan struct{})
	var copiers sync.WaitGroup
	drain := func(f *os.File, extra io.Writer) {
		defer copiers.Done()
		buf := make([]byte, 64<<10)
		for {
			n, err := f.Read(buf)
			if extra != nil {
				extra.Write(buf[:n])
			}
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}
	copiers.Add(len(readers))
	go drain(pr, nil)
	if spr != nil {
		go drain(spr, sp.stdout)
	}
	go func() { copiers.Wait(); close(copied) }()

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
			for _, f := range readers {
				if f.SetReadDeadline(time.Now()) != nil {
					f.Close()
				}
			}
			<-copied
		}
		group.reaped()
	}
	waitErr := waitGroupLeader(cmd, cleanup)
	for _, f := range readers {
		f.Close()
	}
	c := out.w.(*capture)
	if logErr == nil {
		logErr = c.logErr
	}
	closeLog(log, &logErr)

	r.Output, r.OutputBytes, r.Omitted = c.String(), c.total, c.omitted()
	r.Digest, r.Marks = c.digest(), c.marks.lines
	r.Duration = opts.now().Sub(r.Started)
	state := cmd.ProcessState
	switch {
	case !group.terminatedAt().IsZero() && ctx.Err() != nil:
		r.Outcome, r.Err = Errored, "canceled: "+ctx.Err().Error()
	case !group.terminatedAt().IsZero():
		r.Outcome, r.Err = TimedOut, sp.timeoutMsg
		if r.Err == "" {
			r.Err = fmt.Sprintf("timed out after %s", sp.timeout)
		}
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
	return logErr
}

// lockedWriter serializes writes from the copiers of stdout and stderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func closeLog(l *logCap, errp *error) {
	if l == nil {
		return
	}
	if err := l.finish(); err != nil && *errp == nil {
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
