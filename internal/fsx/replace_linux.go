package fsx

import (
	"os"
	"unsafe"

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

// prefault asks the kernel to back buf with memory now, in one call, rather
// than a page fault at a time as a read fills it, and in huge pages where
// the system gives them on request (transparent_hugepage=madvise, the
// common default): on a virtual machine each fault of a big buffer costs
// more than the copy. Only whole pages inside buf are touched, and their
// content is left as it is; an old kernel's refusal changes nothing.
func prefault(buf []byte) {
	if cap(buf) < prefaultMin {
		return
	}
	buf = buf[:cap(buf)]
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	skip := int((page - start%page) % page)
	if skip >= len(buf) {
		return
	}
	n := (len(buf) - skip) / int(page) * int(page)
	unix.Madvise(buf[skip:skip+n], unix.MADV_HUGEPAGE)
	unix.Madvise(buf[skip:skip+n], unix.MADV_POPULATE_WRITE)
}

// prefaultMin is the smallest buffer prefault asks for: below it, the
// faults cost less than the call.
const prefaultMin = 1 << 20
