package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// readInput reads a file, or stdin for "-", of at most limit bytes (see
// copyInput).
func readInput(e *env, name string, limit int64) ([]byte, error) {
	var b bytes.Buffer
	if err := copyInput(e, name, &b, limit); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// readFailure reads a failure's output from a file, or stdin for "-", in
// bounded memory: all of it is signed as it streams, and its head and tail
// are kept for the Failure Details.
func readFailure(e *env, name string) (loop.Failure, error) {
	sig := signature.NewWriter(e.ws().SignatureOptions())
	keep := gate.NewHeadTail(failureHead, failureTail)
	if err := copyInput(e, name, io.MultiWriter(sig, keep), maxOutputInput); err != nil {
		return loop.Failure{}, err
	}
	d := sig.Digest()
	return loop.Failure{Output: []byte(keep.String()), Digest: &d}, nil
}

// The head and tail of a failure's output kept for its Failure Details
// (which show the first 20 and the last 60 lines of them).
const (
	failureHead = 16 << 10
	failureTail = 48 << 10
)

// Input limits: what a command reads from a file or stdin. An output to
// sign is streamed (memory stays bounded whatever its size); text that goes
// into the queue is held whole.
const (
	maxOutputInput = 1 << 30 // signature, record, issue add --details
	maxTextInput   = 1 << 20 // a field or section's text
)

// copyInput copies a file, or stdin for "-", to w, and fails with a
// one-line error past limit bytes ("/dev/zero is larger than 1 GiB"). It
// returns as soon as the command is interrupted (SIGINT, SIGTERM), even
// while a read blocks: the read goes on in the background, and its data is
// not used.
func copyInput(e *env, name string, w io.Writer, limit int64) error {
	label := name
	if name == "-" {
		label = "stdin"
	}
	done := make(chan error, 1)
	stop := make(chan struct{})
	go func() {
		var r io.Reader = e.stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				done <- err
				return
			}
			defer f.Close()
			r = f
		}
		buf := make([]byte, 256<<10)
		var n int64
		for {
			k, err := r.Read(buf)
			if k > 0 {
				select {
				case <-stop:
					return
				default:
				}
				if n += int64(k); n > limit {
					done <- fmt.Errorf("%s is larger than %s: cut it first (head -c, tail -c)", label, sizeName(limit))
					return
				}
				w.Write(buf[:k])
			}
			if err == io.EOF {
				done <- nil
				return
			}
			if err != nil {
				done <- fmt.Errorf("reading %s: %w", label, err)
				return
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-e.ctx.Done():
		close(stop)
		return fmt.Errorf("reading %s: interrupted", label)
	}
}

// sizeName writes a power-of-two size for a person: 1 GiB, 1 MiB, 4096 bytes.
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
