package fsx

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bigFile writes a file big enough for a compare of what a replace
// displaces to be made mapped (mappedEqual), and returns its path.
func bigFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(path, bytes.Repeat([]byte("| Status | pending |\n"), prefaultMin/10), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// countCompares counts the compares of what a replace displaced, made
// mapped, until the test ends.
func countCompares(t *testing.T) *int {
	n := new(int)
	beforeMappedCompare = func(*os.File) { *n++ }
	t.Cleanup(func() { beforeMappedCompare = func(*os.File) {} })
	return n
}

// TestLeaseSkipsTheCompare: a file read under a read lease that lasts to
// its replace is not compared with what was read after the exchange; one
// opened to write meanwhile is (its lease ended), and its writer's change
// is kept.
func TestLeaseSkipsTheCompare(t *testing.T) {
	path := bigFile(t)
	compares := countCompares(t)
	if err := Transform(path, appendLine("tool")); err != nil {
		t.Fatal(err)
	}
	if *compares != 0 {
		t.Errorf("a replace of a file held since its read compared what it displaced %d times; want none", *compares)
	}
	calls := 0
	err := Transform(path, func(old []byte, _ bool) ([]byte, error) {
		if calls++; calls == 1 {
			// Saved in place while the tool computes: the save ends the
			// lease.
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil, err
			}
			f.WriteString("person\n")
			f.Close()
		}
		return append(bytes.Clone(old), "tool again\n"...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.HasSuffix(got, []byte("tool\nperson\ntool again\n")) || calls != 2 {
		t.Errorf("after a save in place while held, fn ran %d times and the file ends %q; want the save kept, fn run again", calls, got[max(0, len(got)-40):])
	}
}

// TestLeaseLetGoAtOnce: a program that opens a held file to write it
// waits for its holder to let the lease go; the holder lets it go when the
// kernel tells it, not once the system's lease-break time is spent.
func TestLeaseLetGoAtOnce(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/fs/lease-break-time")
	if n, _ := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || n < 20 {
		t.Skip("the system's lease-break time is short (or unknown): a lease held to it would not be seen")
	}
	path := filepath.Join(t.TempDir(), "f.md")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var waited time.Duration
	err = Transform(path, func(old []byte, _ bool) ([]byte, error) {
		if waited == 0 {
			start := time.Now()
			os.WriteFile(path, []byte("one\nperson\n"), 0o644) // waits for the lease
			waited = time.Since(start)
		}
		return append(bytes.Clone(old), "tool\n"...), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if waited > 10*time.Second {
		t.Errorf("a save in place waited %v for the lease; want it let go at once", waited.Round(time.Second))
	}
	if got, _ := os.ReadFile(path); string(got) != "one\nperson\ntool\n" {
		t.Errorf("the file holds %q; want the save, then the tool's line", got)
	}
}

// TestLeaseSeesAFileRenamedOver: a save that renames a new file over the
// one held opens nothing for writing, and leaves the lease whole; it is
// found all the same, before the replace (the file at the path is
// another) and at the exchange (what it displaced is not the file held),
// and its content is kept.
func TestLeaseSeesAFileRenamedOver(t *testing.T) {
	real := exchange
	defer func() { exchange = real }()
	renameOver := func(path, content string) {
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	for _, atExchange := range []bool{false, true} {
		path := bigFile(t)
		// Theirs is as long as what was read, one byte other: it is
		// compared whole.
		mine, _ := os.ReadFile(path)
		theirs := bytes.Clone(mine)
		theirs[0] = '!'
		compares := countCompares(t)
		calls := 0
		exchange = func(a, b string) error {
			if atExchange && calls == 1 {
				renameOver(path, string(theirs))
			}
			return real(a, b)
		}
		err := Transform(path, func(old []byte, _ bool) ([]byte, error) {
			if calls++; calls == 1 && !atExchange {
				renameOver(path, string(theirs))
			}
			return append(bytes.Clone(old), "tool\n"...), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != string(theirs)+"tool\n" || calls != 2 {
			t.Errorf("renamed over at the exchange %v: fn ran %d times, the file holds %.40q; want theirs with the tool's line", atExchange, calls, got)
		}
		if atExchange && *compares != 1 {
			t.Errorf("renamed over at the exchange: %d compares of what it displaced; want 1", *compares)
		}
	}
}
