package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// commit puts the temporary file tmp at path. Where path exists, the two
// are exchanged atomically (renameat2 RENAME_EXCHANGE), and the content
// displaced, left at tmp, is returned, so that a write by someone else just
// before the exchange goes unnoticed never. Where path does not exist, it
// is created only if still missing (an error matching fs.ErrExist if not).
func commit(tmp, path string, exists bool) ([]byte, error) {
	if !exists {
		return nil, os.Link(tmp, path)
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch err {
	case nil:
		return os.ReadFile(tmp)
	case unix.ENOENT:
		// Removed meanwhile: ours takes its place.
		return nil, os.Rename(tmp, path)
	case unix.EINVAL, unix.ENOSYS:
		// A file system without exchange: a plain atomic rename.
		return nil, os.Rename(tmp, path)
	}
	return nil, err
}

// uncommit swaps back what commit exchanged: the displaced content, at
// tmp, returns to path.
func uncommit(tmp, path string) error {
	return unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
}
