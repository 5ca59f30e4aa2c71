package git

import (
	"context"
	"io"
	"os/exec"
)

// Stream is a git command that runs on while its caller writes to its
// standard input and reads its standard output, as git cat-file --batch
// does: one object asked, one read, for as long as the caller wants.
type Stream struct {
	Stdin  io.WriteCloser
	Stdout io.Reader

	g      Runner
	args   []string
	cmd    *exec.Cmd
	ctx    context.Context
	cancel context.CancelFunc
	stderr *limitedBuffer
}

// Start starts git with args, in the Runner's directory and environment
// and bounded by its timeout: the caller writes to Stdin and reads Stdout,
// then calls Wait.
func (g Runner) Start(ctx context.Context, args ...string) (*Stream, error) {
	ctx, cancel := g.context(ctx)
	s := &Stream{g: g, args: args, ctx: ctx, cancel: cancel, stderr: &limitedBuffer{max: maxStderr}}
	s.cmd = g.command(ctx, args)
	s.cmd.Stderr = s.stderr
	var err error
	if s.Stdin, err = s.cmd.StdinPipe(); err == nil {
		if s.Stdout, err = s.cmd.StdoutPipe(); err == nil {
			err = s.cmd.Start()
		}
	}
	if err != nil {
		cancel()
		return nil, g.fail(ctx, args, s.stderr, err)
	}
	return s, nil
}

// Wait closes git's standard input, which ends a command that reads it
// to its end, and waits for git to exit. Its error is an *Error.
func (s *Stream) Wait() error {
	defer s.cancel()
	s.Stdin.Close()
	if err := s.cmd.Wait(); err != nil && !exitedWell(s.cmd, err) {
		return s.g.fail(s.ctx, s.args, s.stderr, err)
	}
	return nil
}
