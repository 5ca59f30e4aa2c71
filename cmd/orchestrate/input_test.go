package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The input limit holds at its boundary: limit bytes are read, one more is
// an error that names the input and the limit.
func TestCopyInputLimit(t *testing.T) {
	for _, tt := range []struct {
		size    int
		wantErr bool
	}{{4096, false}, {4097, true}} {
		var out bytes.Buffer
		e := &env{ctx: context.Background(), stdin: bytes.NewReader(make([]byte, tt.size))}
		err := copyInput(e, "-", &out, 4096)
		if (err != nil) != tt.wantErr {
			t.Errorf("copyInput(%d bytes, limit 4096) = %v; want error %v", tt.size, err, tt.wantErr)
		}
		if err != nil && err.Error() != "stdin is larger than 4096 bytes: cut it first (head -c, tail -c)" {
			t.Errorf("error = %q", err)
		}
		if err == nil && out.Len() != tt.size {
			t.Errorf("copied %d bytes; want %d", out.Len(), tt.size)
		}
	}
	e := &env{ctx: context.Background()}
	if err := copyInput(e, filepath.Join(t.TempDir(), "missing"), &bytes.Buffer{}, 10); err == nil || !os.IsNotExist(err) {
		t.Errorf("copyInput(missing file) = %v; want a not-exist error", err)
	}
}

// A read that blocks (a pipe nobody writes to) ends when the command is
// interrupted.
func TestCopyInputInterrupted(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- copyInput(&env{ctx: ctx, stdin: r}, "-", &bytes.Buffer{}, 1<<20) }()
	w.Write([]byte("some output\n"))
	cancel()
	select {
	case err := <-done:
		if err == nil || err.Error() != "reading stdin: interrupted" {
			t.Errorf("copyInput after cancel = %v; want reading stdin: interrupted", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("copyInput blocked after its context was canceled")
	}
}
