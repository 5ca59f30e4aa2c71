package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// commit puts the temporary file tmp at path. Where path exists, the two
// are exchanged atomically (renameat2 RENAME_EXCHANGE) and exchanged is
// true: tmp then holds the content displaced, so that a write by someone
// else just before the exchange cannot go unnoticed. Where path does not
// exist, it is created only if still missing (an error matching
// fs.ErrExist if not).
func commit(tmp, path string, exists bool) (exchanged bool, err error) {
	if !exists {
		return false, os.Link(tmp, path)
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
		return true, nil
	case unix.ENOENT, unix.EINVAL, unix.ENOSYS:
		// Removed meanwhile, or a file system without exchange: a plain
		// atomic rename.
		return false, os.Rename(tmp, path)
	}
	return false, &os.LinkError{Op: "exchange", Old: tmp, New: path, Err: err}
}

// uncommit swaps back what commit exchanged: the displaced content, at
// tmp, returns to path.
func uncommit(tmp, path string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange back", Old: tmp, New: path, Err: err}
	}
	return nil
}
