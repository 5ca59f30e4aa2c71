package fsx

import (
	"bytes"
	"os"
	"runtime/debug"
	"unsafe"

	"golang.org/x/sys/unix"
)

// commit puts the temporary file tmp at path. Where path exists, the two
// are exchanged atomically (renameat2 RENAME_EXCHANGE) and exchanged is
// true: tmp then holds the content displaced, so that a write by someone
// else just before the exchange cannot go unnoticed. Where path does not
// exist, it is created only if still missing (an error matching
// fs.ErrExist if not). A plain rename, where the file system cannot
// exchange, first asks verify whether path still holds what was read, and
// returns errChanged if not.
func commit(tmp, path string, exists bool, verify func() (bool, error)) (exchanged bool, err error) {
	if !exists {
		return false, os.Link(tmp, path)
	}
	err = exchange(tmp, path)
	switch err {
	case nil:
		return true, nil
	case unix.ENOENT, unix.EINVAL, unix.ENOSYS:
		// Removed meanwhile, or a file system without exchange: a plain
		// atomic rename.
		return false, rename(tmp, path, verify)
	}
	return false, &os.LinkError{Op: "exchange", Old: tmp, New: path, Err: err}
}

// exchange swaps the files at a and b atomically; the tests replace it
// with one that fails as a file system without exchange does.
var exchange = func(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
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

// mappedEqual reports whether f holds exactly data, compared where the
// kernel keeps the file (mapped, not copied), for a big file: ok is false
// when it is not compared so (small, or not mapped). A file cut short
// while it is compared reads as different.
func mappedEqual(f *os.File, data []byte) (same, ok bool) {
	if len(data) < prefaultMin {
		return false, false
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return false, false
	}
	if st.Size != int64(len(data)) {
		return false, true
	}
	m, err := unix.Mmap(int(f.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return false, false
	}
	defer unix.Munmap(m)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			same, ok = false, true // the file was cut short under the map
		}
	}()
	beforeMappedCompare(f)
	return bytes.Equal(m, data), true
}

// beforeMappedCompare is called with the file mappedEqual has mapped, just
// before it compares: the tests cut the file short there.
var beforeMappedCompare = func(f *os.File) {}

// readLease takes a read lease on f, opened for reading: busy when
// another program has the file open for writing. Where the system gives
// no lease (a file system without them, a file of another owner), leased
// is false: the content compares are then all there is.
func readLease(f *os.File) (leased, busy bool) {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	return err == nil, err == unix.EAGAIN
}

// letLeaseGo ends the read lease readLease took on f, keeping f open.
func letLeaseGo(f *os.File) {
	unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
}

// leaseKept reports whether the read lease readLease took on f is still
// whole: no program opened the file to write it since (its open waits
// until f is closed, and its writes would go to what f holds).
func leaseKept(f *os.File) bool {
	l, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err == nil && l == unix.F_RDLCK
}
