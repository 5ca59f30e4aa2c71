//go:build !linux

package fsx

import "os"

// commit puts the temporary file tmp at path with an atomic rename; where
// path does not exist, only if it is still missing.
func commit(tmp, path string, exists bool) (exchanged bool, err error) {
	if !exists {
		return false, os.Link(tmp, path)
	}
	return false, os.Rename(tmp, path)
}

// uncommit is never needed where commit displaces nothing.
func uncommit(tmp, path string) error { return nil }

// prefault is Linux's alone (see replace_linux.go).
func prefault(buf []byte) {}
