//go:build !linux

package fsx

import "os"

// commit puts the temporary file tmp at path with an atomic rename, once
// verify says path still holds what was read (errChanged if not); where
// path does not exist, only if it is still missing.
func commit(tmp, path string, exists bool, verify func() (bool, error)) (exchanged bool, err error) {
	if !exists {
		return false, os.Link(tmp, path)
	}
	return false, rename(tmp, path, verify)
}

// uncommit is never needed where commit displaces nothing.
func uncommit(tmp, path string) error { return nil }

// prefault is Linux's alone (see replace_linux.go).
func prefault(buf []byte) {}

// mappedEqual is Linux's alone (see replace_linux.go).
func mappedEqual(f *os.File, data []byte) (same, ok bool) { return false, false }

// readLease is Linux's alone (see replace_linux.go): elsewhere no file is
// leased, and the content compares are all there is.
func readLease(f *os.File) (leased, busy bool) { return false, false }

// letLeaseGo is Linux's alone (see replace_linux.go).
func letLeaseGo(f *os.File) {}

// leaseKept is Linux's alone (see replace_linux.go).
func leaseKept(f *os.File) bool { return true }
