package fsx

import (
	"os"
	"os/signal"
	"sync"

	"golang.org/x/sys/unix"
)

// Leased is a file as it was read under a read lease (see readLease),
// kept open so that the lease lasts. While it lasts, no other program has
// opened the file to write it, or cut it short, since the read. A replace
// of the file so held needs no compare of what it displaces with what was
// read (see replace); a held file whose lease ended is compared as any
// other.
//
// A program that opens the file to write it ends the lease, and the
// kernel makes it wait until the holder lets the lease go: this process
// lets it go at once, when the kernel tells it (SIGIO), so that the
// program waits no longer than that. A nil *Leased holds nothing.
type Leased struct {
	f        *os.File
	dev, ino uint64
}

// leases are the files this process holds under a read lease, for the
// watcher that lets go of each one broken (watchLeases).
var leases struct {
	sync.Mutex
	held  map[*Leased]bool
	watch sync.Once
}

// leaseOf holds f, read under its read lease, with fi its fstat at the
// read.
func leaseOf(f *os.File, fi *unix.Stat_t) *Leased {
	leases.watch.Do(watchLeases)
	h := &Leased{f: f, dev: uint64(fi.Dev), ino: uint64(fi.Ino)}
	leases.Lock()
	leases.held[h] = true
	leases.Unlock()
	return h
}

// watchLeases lets go of each lease held that another program's open for
// writing broke, as soon as the kernel tells of it: the open then goes
// on, and the holder, whose lease is gone, compares what it replaces.
func watchLeases() {
	leases.held = map[*Leased]bool{}
	broken := make(chan os.Signal, 1)
	signal.Notify(broken, unix.SIGIO)
	go func() {
		for range broken {
			leases.Lock()
			for h := range leases.held {
				if !leaseKept(h.f) {
					letLeaseGo(h.f)
				}
			}
			leases.Unlock()
		}
	}()
}

// Release closes the held file, which lets its lease go. Releasing
// twice, or nil, does nothing.
func (h *Leased) Release() {
	if h == nil {
		return
	}
	leases.Lock()
	defer leases.Unlock()
	if h.f != nil {
		delete(leases.held, h)
		h.f.Close()
		h.f = nil
	}
}

// kept reports whether the lease still holds: nothing opened the file to
// write it since it was read.
func (h *Leased) kept() bool {
	if h == nil {
		return false
	}
	leases.Lock()
	defer leases.Unlock()
	return h.f != nil && leaseKept(h.f)
}

// is reports whether st is the held file's.
func (h *Leased) is(st *unix.Stat_t) bool {
	return h != nil && uint64(st.Dev) == h.dev && uint64(st.Ino) == h.ino
}

// displacedIs reports whether the file at path, where an exchange moved
// what it displaced, is the held one, its lease whole: what was displaced
// is then what was read.
func (h *Leased) displacedIs(path string) bool {
	var st unix.Stat_t
	return h.kept() && unix.Lstat(path, &st) == nil && h.is(&st)
}
