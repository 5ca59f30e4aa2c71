package fsx

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func appendLine(line string) func([]byte, bool) ([]byte, error) {
	return func(old []byte, _ bool) ([]byte, error) {
		return append(append([]byte{}, old...), line+"\n"...), nil
	}
}

func TestTransformNoOpWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	os.WriteFile(path, []byte("a\n"), 0o600)
	before, _ := os.Stat(path)
	if err := Transform(path, func(old []byte, _ bool) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Error("a no-op replaced the file")
	}
	// A missing file stays missing when fn makes nothing of it.
	missing := filepath.Join(t.TempDir(), "none.md")
	if err := Transform(missing, func(old []byte, _ bool) ([]byte, error) { return old, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Error("a no-op created the file")
	}
}

func TestTransformKeepsModeAndCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	if err := Transform(path, appendLine("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Errorf("created %q", b)
	}
	os.Chmod(path, 0o600)
	if err := Transform(path, appendLine("two")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v; want 0600 kept", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// A person's edit that lands between the read and the replace is kept: fn
// runs again on the new content.
func TestTransformReappliesOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	os.WriteFile(path, []byte("first\n"), 0o644)
	calls := 0
	err := Transform(path, func(old []byte, _ bool) ([]byte, error) {
		calls++
		if calls == 1 {
			// The person saves while we compute.
			os.WriteFile(path, append(append([]byte{}, old...), "by hand\n"...), 0o644)
		}
		return append(append([]byte{}, old...), "by the tool\n"...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "first\nby hand\nby the tool\n"; string(got) != want {
		t.Errorf("file = %q; want %q", got, want)
	}
	if calls != 2 {
		t.Errorf("fn ran %d times; want 2", calls)
	}
}

func TestTransformErrorWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	os.WriteFile(path, []byte("keep\n"), 0o644)
	boom := errors.New("boom")
	if err := Transform(path, func([]byte, bool) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v; want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep\n" {
		t.Errorf("file = %q", b)
	}
}

func TestTransformGivesUpOnAFileThatNeverSettles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.md")
	os.WriteFile(path, []byte("x"), 0o644)
	n := 0
	err := Transform(path, func(old []byte, _ bool) ([]byte, error) {
		n++
		os.WriteFile(path, []byte(strings.Repeat("y", n)), 0o644)
		return []byte("mine"), nil
	})
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("err = %v", err)
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("TryLock while locked: %v; want ErrLocked", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); err == nil {
		t.Error("Lock while locked succeeded")
	}
	unlock()
	// Taken again once let go (the wait given up above may hold it for an
	// instant as it ends: see waitFlock).
	u2, err := LockWith(context.Background(), path, LockOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	u2()
}

// TestTransformKeepsTheDisplacedFileFromTheCleaner runs a cleaner at the
// moment just after Transform's exchange, when the content displaced lies
// under the temporary file's name: its writer is alive and holds it, so
// the cleaner leaves it, and the write ends as it should. Without the
// lock, the cleaner removed it, and the check of what was displaced failed
// with ENOENT (or, had someone else's change been displaced, lost it).
func TestTransformKeepsTheDisplacedFileFromTheCleaner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "issue_queue.md")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cleaned := 0
	afterExchange = func(tmp string) {
		if b, err := os.ReadFile(tmp); err != nil || string(b) != "one\n" {
			t.Errorf("after the exchange %s holds %q (%v); want the content displaced", filepath.Base(tmp), b, err)
		}
		if err := RemoveStaleTemps(dir, "issue_queue.md"); err != nil {
			t.Error(err)
		}
		if err := RemoveAllStaleTemps(dir); err != nil {
			t.Error(err)
		}
		cleaned++
	}
	defer func() { afterExchange = func(string) {} }()
	if err := Transform(path, appendLine("two")); err != nil {
		t.Fatalf("Transform with a cleaner at work: %v", err)
	}
	if cleaned != 1 {
		t.Fatalf("the cleaner ran %d times; want once, after the exchange", cleaned)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Errorf("the file holds %q; want %q", b, "one\ntwo\n")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v; want only issue_queue.md", names)
	}
}

// TestTransformWaitsForTheWriterThatHoldsTheFile: a file at path whose
// writer still holds it (it has just put it there and is checking what
// it displaced) is not exchanged away until that writer lets go.
func TestTransformWaitsForTheWriterThatHoldsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.md")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := lockCurrent(path, []byte("one\n"), true, Stamp{}, nil)
	same, unlock := c.same, c.unlock
	if err != nil || !same {
		t.Fatalf("lockCurrent = %v, %v; want true, nil", same, err)
	}
	done := make(chan error)
	go func() { done <- Transform(path, appendLine("two")) }()
	// Transform cannot finish while the file is held; the check is that
	// the file is untouched while held, then changed once let go.
	for i := 0; i < 20; i++ {
		select {
		case err := <-done:
			t.Fatalf("Transform ended (%v) while another writer held the file", err)
		default:
		}
		if b, _ := os.ReadFile(path); string(b) != "one\n" {
			t.Fatalf("the file was replaced while held: %q", b)
		}
		time.Sleep(time.Millisecond)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Errorf("the file holds %q; want %q", b, "one\ntwo\n")
	}
}

// A big file is read whole and exactly (its buffer is backed at once, see
// prefault), and TransformChunks writes chunks one after another, and
// nothing when they add up to the file as it was.
func TestBigFileChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	data := make([]byte, 3<<20+123)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, exists, err := ReadFile(path)
	if err != nil || !exists || !bytes.Equal(got, data) {
		t.Fatalf("ReadFile of %d bytes: %d bytes, exists %v, err %v", len(data), len(got), exists, err)
	}
	before, _ := os.Stat(path)
	same := func(old []byte, _ bool) ([][]byte, error) {
		return [][]byte{old[:10], old[10 : 1<<20], old[1<<20:]}, nil
	}
	if err := TransformChunks(path, same); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Errorf("chunks that add up to the file as it was were written")
	}
	edit := func(old []byte, _ bool) ([][]byte, error) {
		return [][]byte{old[:100], []byte("NEW"), old[200:]}, nil
	}
	if err := TransformChunks(path, edit); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte{}, data[:100]...), "NEW"...), data[200:]...)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("TransformChunks wrote %d bytes; want the %d of the chunks", len(got), len(want))
	}
}

// TestTransformWaitsForASaveInPlace: what fn reads of a file another
// program has open for writing may be a torn part of a save in place: fn's
// refusal of it, and its answer that nothing is to be written, both wait
// for the save to end, and fn then sees the file whole (on Linux, where
// a read lease tells).
func TestTransformWaitsForASaveInPlace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a save in place is noticed by a read lease, which Linux gives")
	}
	for _, refuse := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "f.md")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("on")
		go func() {
			time.Sleep(200 * time.Millisecond)
			f.WriteString("e\n")
			f.Close()
		}()
		var seen []string
		err = Transform(path, func(old []byte, _ bool) ([]byte, error) {
			seen = append(seen, string(old))
			if string(old) != "one\n" && refuse {
				return nil, errors.New("torn")
			}
			return old, nil
		})
		if err != nil || seen[len(seen)-1] != "one\n" {
			t.Errorf("refuse %v: Transform = %v, fn saw %q; want it to see the save whole", refuse, err, seen)
		}
	}
}

// A save in place that ends between a read of its part written so far,
// which the writer refuses, and the look for a program writing the file:
// that read, made while another program wrote the file, is not the
// file's, and the file is read again, whole.
func TestTransformReadsAgainASaveEndedSinceItsRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("a save in place is noticed by a read lease, which Linux gives")
	}
	path := filepath.Join(t.TempDir(), "f.md")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("on")
	var seen []string
	err = Transform(path, func(old []byte, _ bool) ([]byte, error) {
		seen = append(seen, string(old))
		if string(old) != "one\n" {
			// The save ends now, before the writer looks again.
			f.WriteString("e\n")
			f.Close()
			return nil, errors.New("torn")
		}
		return old, nil
	})
	if err != nil || len(seen) != 2 || seen[1] != "one\n" {
		t.Errorf("Transform = %v, fn saw %q; want it to see the save whole, the second time", err, seen)
	}
}
