// Package git runs git: every git process of the module starts here, with
// one policy. Each command runs in a directory it is given (git -C), in a
// fixed environment, bounded by a timeout, and fails with an *Error that
// holds its arguments, its directory, its exit code and what it printed on
// standard error.
package git

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds a command whose Runner sets no Timeout: a local
// command takes well under a second, and a hook that waits on one must
// answer the agent in time.
const DefaultTimeout = 30 * time.Second

// NetworkTimeout bounds a command that may talk to a remote: a fetch or a
// push takes seconds, unless the network hangs.
const NetworkTimeout = time.Minute

// NoTimeout, as a Runner's Timeout, leaves a command bounded by its context
// alone: for work whose length grows with the size of the tree.
const NoTimeout time.Duration = -1

// Runner runs git commands in one directory.
type Runner struct {
	// Dir is the directory git runs in (git -C Dir).
	Dir string
	// Env is added to the environment, after the fixed variables
	// (GIT_INDEX_FILE=…, the author of a commit).
	Env []string
	// Timeout bounds each command: DefaultTimeout when 0, none (the
	// context's alone) when NoTimeout.
	Timeout time.Duration
}

// In is a Runner in dir with the default policy.
func In(dir string) Runner { return Runner{Dir: dir} }

// Output runs git with args and returns its standard output, even when it
// fails (the caller may read a failed command's output).
func (g Runner) Output(ctx context.Context, args ...string) (string, error) {
	var out bytes.Buffer
	err := g.Run(ctx, nil, &out, args...)
	return out.String(), err
}

// Input is Output with stdin as git's standard input.
func (g Runner) Input(ctx context.Context, stdin string, args ...string) (string, error) {
	var out bytes.Buffer
	err := g.Run(ctx, strings.NewReader(stdin), &out, args...)
	return out.String(), err
}

// Run runs git with args, stdin as its standard input (none when nil) and
// its standard output written to stdout (discarded when nil). Its error is
// an *Error.
func (g Runner) Run(ctx context.Context, stdin io.Reader, stdout io.Writer, args ...string) error {
	ctx, cancel := g.context(ctx)
	defer cancel()
	cmd := g.command(ctx, args)
	cmd.Stdin, cmd.Stdout = stdin, stdout
	stderr := &limitedBuffer{max: maxStderr}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil && !exitedWell(cmd, err) {
		return g.fail(ctx, args, stderr, err)
	}
	return nil
}

// waitDelay is how long a command's pipes may stay open after git exits or
// is killed: a process git started that outlives it (an alias's shell,
// ssh, a hook's background job) holds them.
const waitDelay = 5 * time.Second

// exitedWell reports whether err only says that git, which succeeded, left
// a process holding its pipes after waitDelay: the command did its work.
func exitedWell(cmd *exec.Cmd, err error) bool {
	return errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success()
}

// context bounds ctx by the Runner's timeout.
func (g Runner) context(ctx context.Context) (context.Context, context.CancelFunc) {
	if t := g.timeout(); t > 0 {
		return context.WithTimeoutCause(ctx, t, errTimeout)
	}
	return context.WithCancel(ctx)
}

// errTimeout is the cause of a command's context that its timeout ended,
// not its caller.
var errTimeout = errors.New("git ran past its timeout")

func (g Runner) timeout() time.Duration {
	if g.Timeout == 0 {
		return DefaultTimeout
	}
	return g.Timeout
}

// command is git with args in the Runner's directory and environment.
func (g Runner) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", slices.Concat([]string{"-C", g.Dir}, safeConfig, args)...)
	cmd.Env = append(environ(os.Environ()), g.Env...)
	cmd.WaitDelay = waitDelay
	return cmd
}

// safeConfig turns off, on git's command line, where it overrides every
// configuration file, each setting that would have git run a program that
// a repository's configuration names: anyone who can write .git/config
// or .git/hooks chooses those programs, and an agent in a worktree can.
// The hooks go (a hooks directory that is /dev/null holds none), and with
// them the file system monitor, the editors (":" is git's editor that
// edits nothing), the pager, signing and the checks of signatures (which
// run gpg.program), the transport that runs a command (ext::), and the
// recursion into submodules. What stays on is what a repository needs to
// read and merge its own files, filters (Git LFS) and merge drivers, and
// to reach its remotes (core.sshCommand, credential helpers).
var safeConfig = []string{
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.fsmonitor=false",
	"-c", "core.editor=:", "-c", "sequence.editor=:",
	"-c", "core.pager=cat",
	"-c", "commit.gpgSign=false", "-c", "tag.gpgSign=false",
	"-c", "log.showSignature=false", "-c", "merge.verifySignatures=false",
	"-c", "protocol.ext.allow=never",
	"-c", "submodule.recurse=false",
}

// fail is the *Error of the command args, which failed with err.
func (g Runner) fail(ctx context.Context, args []string, stderr *limitedBuffer, err error) *Error {
	e := &Error{Args: args, Dir: g.Dir, ExitCode: -1, Stderr: strings.TrimSpace(string(stderr.buf)), Err: err}
	if x := (*exec.ExitError)(nil); errors.As(err, &x) {
		e.ExitCode = x.ExitCode()
	}
	if context.Cause(ctx) == errTimeout {
		e.Timeout = g.timeout()
	}
	return e
}

// maxStderr is how much of a command's standard error is kept: the start
// says what went wrong; a warning for each of a thousand files would
// only fill memory.
const maxStderr = 64 << 10

// Installed reports whether git is on the PATH.
func Installed() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

// fixed are the variables every command runs with. GIT_TERMINAL_PROMPT=0:
// no one is there to type a password, so git fails at once instead of
// waiting. LC_ALL=C: git's messages are in English, as orchestrate's are,
// whatever the user's locale. GIT_OPTIONAL_LOCKS=0: a git status of
// orchestrate's never takes the index lock that an agent's git add in the
// same tree needs.
var fixed = []string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0"}

// located are the variables that say where a repository, its index and its
// objects are. A git hook exports them for the repository it runs in; a
// command here runs in the directory it is given, so none is inherited
// (one that sets GIT_INDEX_FILE sets it in its Runner's Env).
var located = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX"}

// environ is the environment a git command runs in, made from env (the
// process's): env without the variables that locate a repository, with
// the fixed ones set.
func environ(env []string) []string {
	out := make([]string, 0, len(env)+len(fixed))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(located, name) && !isFixed(name) {
			out = append(out, kv)
		}
	}
	return append(out, fixed...)
}

func isFixed(name string) bool {
	for _, f := range fixed {
		if strings.HasPrefix(f, name+"=") {
			return true
		}
	}
	return false
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
