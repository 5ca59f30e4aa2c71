package fsx

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stampNow returns the stamp path has now.
func stampNow(t *testing.T, path string) Stamp {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return stampOf(&st)
}

// TestStampSkipsTheCompare: a file whose stamp is the one read is taken
// for unchanged before the replace without being read (here it was
// written meanwhile, as a write within the clock tick of the read would
// be, and verify, the compare a plain rename makes, tells); without a
// stamp it is read and compared.
func TestStampSkipsTheCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	if err := os.WriteFile(path, []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := []byte("mine!!\n") // what the caller read: as long, other bytes
	c, err := lockCurrent(path, read, true, stampNow(t, path), nil)
	same, verify, unlock := c.same, c.verify, c.unlock
	if err != nil || !same {
		t.Fatalf("with the file's stamp: same %v, err %v; want taken for the same", same, err)
	}
	if same, err := verify(); err != nil || same {
		t.Errorf("verify with the file's stamp: %v, %v; want false (it reads the file)", same, err)
	}
	unlock()
	for _, st := range []Stamp{{}, {size: 7}} {
		c, err = lockCurrent(path, read, true, st, nil)
		same, verify, unlock = c.same, c.verify, c.unlock
		if err != nil || same {
			t.Errorf("with stamp %+v: same %v, err %v; want compared and found changed", st, same, err)
		}
		if same, _ := verify(); !same {
			t.Errorf("verify once compared: %v; want true", same)
		}
		unlock()
	}
}

// TestTransformUndoesWhatTheStampMissed: a file written after the read
// with the stamp of the read (a write within its clock tick) is replaced
// on the stamp's word, and the compare of what the exchange displaced
// puts it back and applies the change to it: theirs is kept. Where the
// file system cannot exchange, the plain rename compares first.
func TestTransformUndoesWhatTheStampMissed(t *testing.T) {
	real := exchange
	defer func() { exchange = real }()
	for _, canExchange := range []bool{true, false} {
		if !canExchange {
			exchange = func(a, b string) error { return unix.EINVAL }
		}
		path := filepath.Join(t.TempDir(), "f.md")
		if err := os.WriteFile(path, []byte("theirs\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := TransformChunksFrom(path, []byte("mine!!\n"), true, stampNow(t, path), nil, func(old []byte, _ bool) ([][]byte, error) {
			return [][]byte{old, []byte("added\n")}, nil
		})
		exchange = real
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "theirs\nadded\n" {
			t.Errorf("exchange %v: the file holds %q; want theirs with the change", canExchange, b)
		}
	}
}

// TestMappedEqual: a big file compared where the kernel keeps it: the
// same, one byte other, one byte shorter, and cut short while compared
// (the fault is caught, and the file reads as different).
func TestMappedEqual(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.md")
	data := bytes.Repeat([]byte("| Status | pending |\n"), prefaultMin/20)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	other := bytes.Clone(data)
	other[len(other)-2] = 'X'
	cut := func(f *os.File) {
		if err := os.Truncate(f.Name(), 4096); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		name       string
		data       []byte
		before     func(*os.File)
		same, done bool
	}{
		{"the same", data, nil, true, true},
		{"one byte other", other, nil, false, true},
		{"one byte shorter", data[:len(data)-1], nil, false, true},
		{"small", data[:100], nil, false, false},
		{"cut short while compared", data, cut, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				beforeMappedCompare = c.before
				defer func() { beforeMappedCompare = func(*os.File) {} }()
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if same, done := mappedEqual(f, c.data); same != c.same || done != c.done {
				t.Errorf("mappedEqual = %v, %v; want %v, %v", same, done, c.same, c.done)
			}
		})
	}
}

// TestOpenedForWritingDuringAReplace opens the file to write it in place
// just as a replace exchanges it: the open waits on the read lease, the
// replace hands the file back, and the in-place writer's bytes land in
// the file at path, where the change is then applied to them.
func TestOpenedForWritingDuringAReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	afterExchange = func(tmp string) {
		afterExchange = func(string) {}
		go func() {
			// Opened by path before the exchange: the displaced file.
			f, err := os.OpenFile(tmp, os.O_WRONLY, 0)
			if err == nil {
				time.Sleep(200 * time.Millisecond) // a slow save's pause
				_, err = f.WriteAt([]byte("one\nperson\n"), 0)
				f.Close()
			}
			done <- err
		}()
		time.Sleep(100 * time.Millisecond) // the open is waiting on the lease
	}
	defer func() { afterExchange = func(string) {} }()
	if err := Transform(path, appendLine("tool")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "one\nperson\ntool\n"; string(got) != want {
		t.Errorf("after an in-place write during the replace, the file holds %q; want %q", got, want)
	}
}
