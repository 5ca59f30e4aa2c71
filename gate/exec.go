package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/results"
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
	tests := results.NewReader(g.Name, opts.signatureOptions(dir))
	began := time.Now()
	logErr := execute(ctx, &r, spec{command: g.Command, dir: dir, env: g.Env, timeout: g.Timeout, tests: tests}, opts, logPath)
	r.Tests = testResults(g, &r, tests, dir, began, opts.signatureOptions(dir))
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
	// tests, when set, reads the whole output as test-level results.
	tests *results.Reader
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
	var log *logCap
	var logErr error
	// endLog closes the log; a log never made (the gate printed nothing,
	// or it could not be made) is none.
	endLog := func() {
		closeLog(log, &logErr)
		if log != nil && !log.made() {
			r.LogPath = ""
		}
	}
	// An error before the command runs is the gate's; its log's is dropped.
	early := func(msg string) error {
		endLog()
		r.Outcome, r.Err = Errored, msg
		r.Duration = opts.now().Sub(r.Started)
		return nil
	}
	if ctx.Err() != nil {
		return early("canceled before it started")
	}
	var logw io.Writer
	if logPath != "" {
		log = createLog(logPath, opts.Output)
		logw = log
	}
	c := newCapture(opts.output(), logw).signing(opts.signatureOptions(sp.dir))
	c.tests = sp.tests
	p, err := openPipes(sp)
	if err != nil {
		return early(err.Error())
	}
	defer p.closeStdin()
	var out io.Writer = c
	if opts.Watch != nil {
		out = io.MultiWriter(c, opts.Watch)
	}
	end, err := runCommand(ctx, sp, opts, p, &lockedWriter{w: out})
	if err != nil {
		return early(err.Error())
	}
	logErr = c.logErr
	endLog()

	r.Output, r.OutputBytes, r.Omitted = c.String(), c.total, c.omitted()
	r.Digest, r.Marks = c.digest(), c.marks.lines
	r.Duration = opts.now().Sub(r.Started)
	v := judge(end, ctx.Err(), sp.timeout, sp.timeoutMsg)
	r.Outcome, r.Err, r.Signal = v.outcome, v.err, v.signal
	if v.exitCode >= 0 {
		r.ExitCode = v.exitCode
	}
	return logErr
}

// pipes are a command's stdin, and the pipes of its output: one for stdout
// and stderr interleaved as written, and one for stdout alone when
// spec.stdout is set.
type pipes struct {
	stdin  *os.File // nil for none
	r, w   *os.File // the interleaved output
	sr, sw *os.File // stdout alone; nil unless spec.stdout is set
}

// openPipes opens sp's stdin and makes the output pipes.
func openPipes(sp spec) (*pipes, error) {
	p := &pipes{}
	if sp.stdin != "" {
		f, err := os.Open(sp.stdin)
		if err != nil {
			return nil, fmt.Errorf("opening its stdin: %v", err)
		}
		p.stdin = f
	}
	var err error
	if p.r, p.w, err = os.Pipe(); err != nil {
		p.closeStdin()
		return nil, fmt.Errorf("making the output pipe: %v", err)
	}
	if sp.stdout != nil {
		if p.sr, p.sw, err = os.Pipe(); err != nil {
			p.closeWriters()
			p.closeReaders()
			p.closeStdin()
			return nil, fmt.Errorf("making the output pipe: %v", err)
		}
	}
	return p, nil
}

func (p *pipes) closeStdin() {
	if p.stdin != nil {
		p.stdin.Close()
	}
}

// closeWriters closes this process's copies of the output pipes' write
// ends, so that EOF comes when the command's last process closes its own.
func (p *pipes) closeWriters() {
	p.w.Close()
	if p.sw != nil {
		p.sw.Close()
	}
}

// readers are the read ends of the output pipes.
func (p *pipes) readers() []*os.File {
	if p.sr != nil {
		return []*os.File{p.r, p.sr}
	}
	return []*os.File{p.r}
}

func (p *pipes) closeReaders() {
	for _, f := range p.readers() {
		f.Close()
	}
}

// runCommand starts sp's command in a process group of its own, copies its
// output to out (and its stdout alone to sp.stdout), waits for it, and
// cleans up what it left behind. The error is one starting it.
func runCommand(ctx context.Context, sp spec, opts *Options, p *pipes, out io.Writer) (procEnd, error) {
	runCtx, cancel := context.WithCancel(ctx)
	if sp.timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, sp.timeout)
	}
	defer cancel()

	base := opts.Env
	if base == nil {
		base = os.Environ()
	}
	grace := opts.killGrace()
	cg := newCgroup()
	cmd, group, err := startCommand(runCtx, sp, base, grace, p, cg)
	if err != nil && cg != nil && refusedIntoCgroup(err) && !startsInCgroups() {
		// A machine whose policy refuses starting a process into a
		// cgroup (clone3, refused by seccomp), as a process that does
		// nothing shows: this command starts without one, and so do all
		// from now on.
		refuseCgroups()
		cg = nil
		cmd, group, err = startCommand(runCtx, sp, base, grace, p, nil)
	}
	if err != nil {
		p.closeWriters()
		p.closeReaders()
		return procEnd{}, fmt.Errorf("could not start: %v", err)
	}
	// The children hold their copies; EOF comes when the last one closes.
	p.closeWriters()
	group.started(cmd.Process.Pid)
	if opts.Started != nil {
		opts.Started(cmd.Process.Pid)
	}
	copied := copyOutput(p, sp.stdout, out)
	waitErr := waitGroupLeader(cmd, func() { group.cleanup(copied, p.readers(), grace) })
	if cg != nil {
		cg.kill()
	}
	p.closeReaders()
	return endOf(cmd.ProcessState, waitErr, !group.terminatedAt().IsZero()), nil
}

// startCommand starts sp's command, in the cgroup cg unless it is nil:
// without a supervisor of its own where the cgroup and the watchdog hold
// what it starts, else under one.
func startCommand(ctx context.Context, sp spec, base []string, grace time.Duration, p *pipes, cg *cgroup) (*exec.Cmd, *group, error) {
	watched := cg.watched(grace)
	cmd, waitDelay := command(ctx, sp.command, sortedEnv(base, sp.env), grace, watched)
	cmd.Dir = sp.dir
	cmd.Stdout, cmd.Stderr = p.w, p.w // one pipe: output interleaved as written
	if p.sw != nil {
		cmd.Stdout = p.sw
	}
	if p.stdin != nil {
		cmd.Stdin = p.stdin
	}
	group := &group{}
	if watched {
		// No supervisor signals what left the group: the cgroup holds it.
		group.cg = cg
	}
	cmd.Cancel = func() error { return group.terminate(cmd.Process.Pid) }
	// If the leader ignores SIGTERM, exec kills it after the grace; then
	// the cleanup kills the rest of the group.
	cmd.WaitDelay = waitDelay
	return cmd, group, start(cmd, cg)
}

// start starts cmd, in the cgroup cg unless it is nil: on the starter's
// thread when cmd has a parent-death signal (see starter), else on this
// goroutine's.
func start(cmd *exec.Cmd, cg *cgroup) error {
	if cg != nil {
		cg.place(cmd)
	}
	startOn := startProcess
	if parentDeathSignal(cmd) {
		startOn = startOnThread
	}
	if err := startOn(cmd); err != nil {
		if cg != nil {
			cg.remove()
		}
		return err
	}
	return nil
}

// startProcess starts cmd; the tests replace it with one that refuses as
// a machine's policy may.
var startProcess = (*exec.Cmd).Start

// starter is the goroutine that starts every command of this process
// that has a parent-death signal (a supervisor), locked to a thread that
// ends only with the process: a command's parent-death signal (Pdeathsig)
// fires when the thread that started it ends, not the process. The Go
// runtime ends a thread only when a goroutine locked to it ends locked;
// this one never ends. (A gate's own goroutine locked to its thread for
// as long as its command ran cost a hand-over of the processor between
// threads at each of its waits.) Each start through it costs two
// hand-overs between threads; a watched command, which has no
// parent-death signal (see command), is started without them.
var starter struct {
	once sync.Once
	reqs chan startReq
}

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startOnThread starts cmd (startProcess) on the starter's thread.
func startOnThread(cmd *exec.Cmd) error {
	starter.once.Do(func() {
		starter.reqs = make(chan startReq)
		go func() {
			runtime.LockOSThread() // never let go: see starter
			for r := range starter.reqs {
				r.done <- startProcess(r.cmd)
			}
		}()
	})
	done := make(chan error, 1)
	starter.reqs <- startReq{cmd, done}
	return <-done
}

// copyBuffers are copyOutput's buffers, kept from one command to the next
// (a run's gates, each a 64 KiB buffer the collector would otherwise free).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// copyOutput copies the output pipes to out, and the stdout pipe to
// stdout too; the channel closes when they are all at EOF (or closed).
func copyOutput(p *pipes, stdout io.Writer, out io.Writer) <-chan struct{} {
	copied := make(chan struct{})
	var copiers sync.WaitGroup
	drain := func(f *os.File, extra io.Writer) {
		defer copiers.Done()
		pooled := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(pooled)
		buf := *pooled
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
	copiers.Add(len(p.readers()))
	go drain(p.r, nil)
	if p.sr != nil {
		go drain(p.sr, stdout)
	}
	go func() { copiers.Wait(); close(copied) }()
	return copied
}

// cleanup runs once the leader has exited: it ends what the leader left
// behind in its group, SIGTERM then after the grace SIGKILL, and waits for
// the output to be copied, giving up on pipes that a process outside the
// group still holds. On Linux the leader is not reaped yet, so its process
// group ID cannot have been reused by anyone else.
func (g *group) cleanup(copied <-chan struct{}, readers []*os.File, grace time.Duration) {
	g.leaderExited()
	g.signal(syscall.SIGTERM) // what the leader left behind
	deadline := time.Now().Add(grace)
	if t := g.terminatedAt(); !t.IsZero() {
		deadline = t.Add(grace)
	}
	wait(copied, time.Until(deadline))
	if g.cg != nil {
		// What left the group may have let go of the output: it has the
		// grace too, as it has under a supervisor.
		g.cg.drain(deadline)
	}
	g.signal(syscall.SIGKILL)
	if !wait(copied, drainTimeout) {
		for _, f := range readers {
			if f.SetReadDeadline(time.Now()) != nil {
				f.Close()
			}
		}
		<-copied
	}
	g.reaped()
}

// procEnd is how a command's process ended.
type procEnd struct {
	terminated bool  // the timeout or a cancellation sent its group SIGTERM
	noState    bool  // Wait gave no process state
	waitErr    error // Wait's error
	exited     bool  // it exited, with code
	code       int
	signal     syscall.Signal // what killed it; 0 if none did
}

func endOf(state *os.ProcessState, waitErr error, terminated bool) procEnd {
	e := procEnd{terminated: terminated, waitErr: waitErr}
	switch {
	case state == nil:
		e.noState = true
	case state.Exited():
		e.exited, e.code = true, state.ExitCode()
	default:
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.signal = ws.Signal()
		}
	}
	return e
}

// verdict is a command's outcome.
type verdict struct {
	outcome  Outcome
	err      string
	exitCode int // -1 unless it exited
	signal   string
}

// judge gives the outcome of a command that ended as e; canceled is the
// caller's context's error, timeout and timeoutMsg the spec's.
func judge(e procEnd, canceled error, timeout time.Duration, timeoutMsg string) verdict {
	v := verdict{exitCode: -1}
	switch {
	case e.terminated && canceled != nil:
		v.outcome, v.err = Errored, "canceled: "+canceled.Error()
	case e.terminated:
		v.outcome, v.err = TimedOut, timeoutMsg
		if v.err == "" {
			v.err = fmt.Sprintf("timed out after %s", timeout)
		}
	case e.noState:
		v.outcome, v.err = Errored, fmt.Sprintf("waiting for it: %v", e.waitErr)
	case e.exited:
		v.exitCode = e.code
		switch e.code {
		case 0:
			v.outcome = Pass
		case 126:
			v.outcome, v.err = Errored, "command not executable (exit 126)"
		case 127:
			v.outcome, v.err = Errored, "command not found (exit 127)"
		default:
			v.outcome = Fail
		}
	default:
		v.outcome = Fail
		if e.signal != 0 {
			v.signal = signalName(e.signal)
		}
	}
	return v
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
	// cg, when set, is the command's cgroup, whose processes are signaled
	// with the group's: those that left the group included.
	cg *cgroup
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
	if g.cg != nil {
		g.cg.signal(sig)
	}
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
