//go:build !linux

package fsx

import (
	"os"
	"path/filepath"
)

// replace puts data at path with an atomic rename.
func replace(path string, data []byte, exists bool) ([]byte, error) {
	if !exists {
		return nil, create(path, data)
	}
	tmp, err := writeTemp(path, data, 0o644)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return nil, syncDir(filepath.Dir(path))
}
