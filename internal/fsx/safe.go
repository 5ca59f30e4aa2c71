package fsx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is returned when a file orchestrate reads or writes is not
// a regular file: a symbolic link, a directory, a FIFO, a device.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says which file is not regular, and what it is instead.
type NotRegularError struct {
	Path string
	What string // "a symbolic link", "a directory", "a named pipe", …
	Dir  bool   // a directory was wanted
}

func (e *NotRegularError) Error() string {
	if e.Dir {
		return fmt.Sprintf("%s is %s, not a directory: orchestrate writes only into real directories here (remove it)", e.Path, e.What)
	}
	return fmt.Sprintf("%s is %s, not a regular file: orchestrate reads and writes only regular files here (remove it or replace it with a file)", e.Path, e.What)
}

func (e *NotRegularError) Unwrap() error { return ErrNotRegular }

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// checkTarget returns an error unless path is missing or a regular file
// (not followed if it is a symbolic link).
func checkTarget(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &NotRegularError{Path: path, What: kind(fi.Mode())}
	}
	return nil
}

// OpenFile opens path with flag as os.OpenFile does, except that a
// symbolic link in its last component is never followed, that opening
// never blocks (a FIFO), and that anything but a regular file is refused
// with a *NotRegularError.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		if err := injected(path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EISDIR) {
			if cerr := checkTarget(path); cerr != nil {
				return nil, cerr
			}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, What: kind(fi.Mode())}
	}
	// Back to blocking mode: O_NONBLOCK was only for the open.
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// MkdirBeneath makes the directory rel below root, each component of it
// that is missing, and returns its path. No component may be a symbolic
// link or anything but a directory: a directory reached through a link
// may lie outside root. root itself is taken as given.
func MkdirBeneath(root, rel string) (string, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not below %s", rel, root)
	}
	dir := root
	if rel == "." {
		return dir, nil
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		err := os.Mkdir(dir, 0o755)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", &NotRegularError{Path: dir, What: kind(fi.Mode()), Dir: true}
		}
	}
	return dir, nil
}

// CheckDir returns an error unless dir is a directory, not a symbolic link.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &NotRegularError{Path: dir, What: kind(fi.Mode()), Dir: true}
	}
	return nil
}

// tempPrefix is the name of path's temporary files, before their random part.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// RemoveStaleTemps removes the temporary files a crash left behind by the
// writers of the named files in dir. Only a caller that holds the lock
// every such writer takes may call it: then none of them is in progress.
func RemoveStaleTemps(dir string, names ...string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		for _, name := range names {
			if strings.HasPrefix(e.Name(), tempPrefix(name)) && e.Type().IsRegular() {
				if err := removeStale(filepath.Join(dir, e.Name())); err != nil && first == nil {
					first = err
				}
				break
			}
		}
	}
	return first
}

// RemoveAllStaleTemps removes from dir every temporary file of this
// package's writers (.NAME.tmp…) whose writer is gone: a live writer holds
// its file's lock, so that it is safe without the workspace's lock.
func RemoveAllStaleTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name()[1:], ".tmp") && e.Type().IsRegular() {
			if err := removeStale(filepath.Join(dir, e.Name())); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// removeStale removes a temporary file unless its writer, alive, holds
// its lock.
func removeStale(path string) error {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return nil // being written
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
