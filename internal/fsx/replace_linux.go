package fsx

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// replace puts data at path. Where the file exists, it is exchanged
// atomically with a temporary file (renameat2 RENAME_EXCHANGE), so that the
// content it displaced, returned, can be checked: nothing written by
// someone else just before the exchange goes unnoticed.
func replace(path string, data []byte, exists bool) ([]byte, error) {
	if !exists {
		return nil, create(path, data)
	}
	tmp, err := writeTemp(path, data, 0o644)
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
		if err == unix.ENOENT {
			// Removed meanwhile: a plain rename puts ours there.
			if err := os.Rename(tmp, path); err != nil {
				return nil, err
			}
			return nil, syncDir(filepath.Dir(path))
		}
		if err != unix.EINVAL && err != unix.ENOSYS {
			return nil, err
		}
		// A file system without exchange: a plain atomic rename.
		if err := os.Rename(tmp, path); err != nil {
			return nil, err
		}
		return nil, syncDir(filepath.Dir(path))
	}
	displaced, err := os.ReadFile(tmp)
	if err != nil {
		return nil, err
	}
	return displaced, syncDir(filepath.Dir(path))
}
