// Package fsx writes files so that nothing is ever half-written or lost: an
// advisory lock for the tool's own writers, atomic replaces, and a
// re-apply when someone else changed the file in the meantime.
package fsx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// MaxRead is what ReadFile reads at most: a generous cap for the queue
// and the session state, whose every issue a person reads.
const MaxRead = 256 << 20

// ReadFile reads path, at most MaxRead bytes; a missing file reads as
// empty with exists false. A path that is not a regular file (a symbolic
// link, a FIFO, a device) is refused with a *NotRegularError, a larger one
// with a *TooLargeError.
func ReadFile(path string) (data []byte, exists bool, err error) {
	return ReadFileMax(path, MaxRead)
}

// TooLargeError is a file over the cap of what reads it.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most orchestrate reads of it", e.Path, byteSize(e.Max))
}

// byteSize writes n bytes as KiB, MiB or GiB when it is a whole number of
// them.
func byteSize(n int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.n && n%u.n == 0 {
			return fmt.Sprintf("%d %s", n/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFileMax is ReadFile with a cap of max bytes: opened without
// following a link or blocking, regular files only, read into a buffer
// sized from its fstat.
func ReadFileMax(path string, max int64) (data []byte, exists bool, err error) {
	return readFile(path, max, 0)
}

// ReadFileHeld is ReadSettled into a buffer with room for room bytes more
// after the content (its capacity), for a caller that appends to it, with
// the file's stamp as it was read and, where the system gives a read
// lease, the file held under it (see Leased), for TransformChunksFrom. The
// caller releases what it holds, or TransformChunksFrom does.
func ReadFileHeld(path string, room int) (data []byte, exists bool, st Stamp, held *Leased, err error) {
	return readSettled(path, MaxRead, room, true)
}

// ReadSettled is ReadFile for a file that a person's program may be saving
// in place (the queue): while another program has it open for writing,
// what is read may be the part of it written so far, so it is read once
// that program closed it, and read again if one opened it to write while
// it was read. It waits at most BusyWait, then gives up with a
// *BusyError. A read lease tells (see readLease); where the system gives
// none, it is ReadFile.
func ReadSettled(path string) (data []byte, exists bool, err error) {
	data, exists, _, _, err = readSettled(path, MaxRead, 0, false)
	return data, exists, err
}

// readSettled is ReadSettled; keep, the file read is held (see Leased)
// where the system gave a lease.
func readSettled(path string, max int64, room int, keep bool) (data []byte, exists bool, st Stamp, held *Leased, err error) {
	var waited time.Duration
	for {
		var busy bool
		data, exists, st, held, busy, err = readFileLeased(path, max, room, true, keep)
		if err != nil || !busy {
			return data, exists, st, held, err
		}
		if waited >= BusyWait {
			return nil, false, Stamp{}, nil, &BusyError{Path: path, Waited: waited}
		}
		d := min(busyPause<<min(waited/busyPause, 4), BusyWait-waited)
		time.Sleep(d)
		waited += d
	}
}

func readFile(path string, max int64, room int) (data []byte, exists bool, err error) {
	data, exists, _, err = readFileStamp(path, max, room)
	return data, exists, err
}

// Stamp is what fstat tells of a file as it was read: which file it is,
// its size, when its content and its inode last changed. A file that has
// the same stamp later was, almost always, not written since: the kernel
// keeps these times to a clock tick, so a write of the same size within
// the tick of the read goes unseen. The zero Stamp is no file's.
type Stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // in nanoseconds
}

func stampOf(st *unix.Stat_t) Stamp {
	return Stamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

func readFileStamp(path string, max int64, room int) (data []byte, exists bool, st Stamp, err error) {
	data, exists, st, _, _, err = readFileLeased(path, max, room, false, false)
	return data, exists, st, err
}

// readHeld is readFileStamp under a read lease, the file held (see Leased)
// where the system gave one; read without a lease when another program
// has it open for writing, for TransformChunks to wait for at its replace.
func readHeld(path string) (data []byte, exists bool, st Stamp, held *Leased, err error) {
	data, exists, st, held, busy, err := readFileLeased(path, MaxRead, 0, true, true)
	if busy && err == nil {
		data, exists, st, err = readFileStamp(path, MaxRead, 0)
	}
	return data, exists, st, held, err
}

// readFileLeased is readFileStamp under a read lease, when lease is true:
// busy, and nothing read, when another program had the file open for
// writing, or opened it to write while it was read. keep, the file read
// under its lease is held (see Leased), not closed.
func readFileLeased(path string, max int64, room int, lease, keep bool) (data []byte, exists bool, st Stamp, held *Leased, busy bool, err error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, Stamp{}, nil, false, nil
	}
	if err != nil {
		return nil, false, Stamp{}, nil, false, err
	}
	leased := false
	defer func() {
		if held == nil {
			f.Close()
		}
	}()
	if lease {
		if leased, busy = readLease(f); busy {
			return nil, true, Stamp{}, nil, true, nil
		}
	}
	var fi unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fi); err != nil {
		return nil, false, Stamp{}, nil, false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if fi.Size > max {
		return nil, false, Stamp{}, nil, false, &TooLargeError{Path: path, Max: max}
	}
	// Read into a buffer of its size and a little more, to see a file that
	// grew meanwhile; grown only if it did (a bytes.Buffer would double
	// it at its end, to keep 512 bytes free).
	buf := make([]byte, 0, fi.Size+512+int64(room))
	prefault(buf)
	r := io.LimitReader(f, max+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, Stamp{}, nil, false, err
		}
	}
	if int64(len(buf)) > max {
		return nil, false, Stamp{}, nil, false, &TooLargeError{Path: path, Max: max}
	}
	if leased && !leaseKept(f) {
		return nil, true, Stamp{}, nil, true, nil
	}
	if int64(len(buf)) == fi.Size {
		st = stampOf(&fi)
		if leased && keep {
			held = leaseOf(f, &fi)
		}
	}
	return buf, true, st, held, false, nil
}

// WriteFile replaces path atomically: a temporary file in the same
// directory, fsynced, renamed over path, and the directory fsynced.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFileFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileNoDirSync is WriteFile without the sync of the directory, for a
// caller that writes several files in one directory and syncs it once
// (SyncDir) for all.
func WriteFileNoDirSync(path string, data []byte, perm fs.FileMode) error {
	return writeFileFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, false)
}

// WriteFileFunc is WriteFile for content written as a stream by write,
// through a buffer. When write fails, path is left as it was.
// A path that exists and is not a regular file is refused.
func WriteFileFunc(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return writeFileFunc(path, perm, write, true)
}

func writeFileFunc(path string, perm fs.FileMode, write func(io.Writer) error, sync bool) error {
	if err := checkTarget(path); err != nil {
		return err
	}
	tmp, release, err := writeTempFunc(path, perm, write)
	if err != nil {
		return err
	}
	err = os.Rename(tmp, path)
	if err != nil {
		os.Remove(tmp)
	}
	release()
	if err != nil {
		return err
	}
	Step("renamed " + path)
	if !sync {
		return nil
	}
	return syncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, so that a file created or renamed in it
// survives a crash.
func SyncDir(dir string) error { return syncDir(dir) }

func writeTemp(path string, chunks [][]byte, perm fs.FileMode) (string, func(), error) {
	return writeTempFunc(path, perm, func(w io.Writer) error {
		for _, c := range chunks {
			if _, err := w.Write(c); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeTempFunc writes a temporary file beside path and returns its name
// and the function that releases it, to be called once it is renamed or
// removed. Until then it holds a lock on the file, which tells
// RemoveStaleTemps that its writer is alive.
func writeTempFunc(path string, perm fs.FileMode, write func(io.Writer) error) (string, func(), error) {
	if err := injected(path); err != nil {
		return "", nil, err
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		perm = fi.Mode().Perm()
	}
	var f *os.File
	for {
		var err error
		f, err = os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
		if err != nil {
			return "", nil, err
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			os.Remove(f.Name())
			return "", nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		// A cleaner that took it for a crash's leftover before the lock
		// was on it removed it: make another.
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) == nil && st.Nlink == 0 {
			f.Close()
			continue
		}
		break
	}
	name := f.Name()
	bw := bufio.NewWriterSize(f, 256<<10)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(name)
		return "", nil, err
	}
	Step("wrote " + name)
	return name, func() { f.Close() }, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}

// holds reports whether the file at path holds exactly data (or is missing,
// when exists is false), reading it in blocks rather than whole.
func holds(path string, data []byte, exists bool) (bool, error) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return !exists, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if !exists {
		return false, nil
	}
	if same, ok := mappedEqual(f, data); ok {
		return same, nil
	}
	return readsAs(f, data)
}

// readsAs reports whether f, read from where it is, holds exactly data,
// reading it in blocks rather than whole.
func readsAs(f *os.File, data []byte) (bool, error) {
	buf := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(f, buf)
		if n > len(data) || !bytes.Equal(buf[:n], data[:n]) {
			return false, nil
		}
		data = data[n:]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return len(data) == 0, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// afterExchange is called with the temporary file's name just after an
// exchange, when it holds the content displaced: the tests use it to run a
// cleaner at that very moment.
var afterExchange = func(tmp string) {}

// current is the file about to be replaced, as lockCurrent found
// it.
type current struct {
	same   bool                 // it holds what was read
	busy   bool                 // another program has it open for writing
	verify func() (bool, error) // see lockCurrent
	unlock func()
	// kept reports whether no other program opened the file to write it
	// since it was looked at; an in-place writer that did now writes into
	// the content a replace displaced, which is to be put back.
	kept func() bool
}

// lockCurrent is holds(path, old, exists) for a file about to be replaced
// by an exchange, which moves the content displaced to the temporary
// file's name: there, a cleaner (RemoveStaleTemps) would take it for a
// dead writer's leftover unless its writer holds its lock. So the file at
// path is locked before it is compared, and stays locked until unlock is
// called, after the temporary name is gone. Another writer of ours holds
// that lock only while it finishes its own replace. A file replaced
// between the open and the lock reads as changed.
//
// A file whose stamp is st's, when st is not the zero Stamp, is taken for
// the same without being read: the exchange is followed by a compare of
// all it displaced, which undoes it should the stamp have been wrong. A
// replace that cannot exchange compares first: verify does, when the
// content was not compared here.
//
// It takes a read lease on the file where the system gives one (Linux,
// to the file's owner): a file another program has open for writing (an
// in-place save under way, or paused between two of its writes) is busy,
// and what was read of it may be a torn part of what is being written.
// The lease also tells of a program that opens the file to write it after
// the look (see current.kept): its open waits until the lease is let go.
//
// A file held since it was read (see Leased), its lease whole, is the
// same, and is not read.
func lockCurrent(path string, old []byte, exists bool, st Stamp, held *Leased) (current, error) {
	nothing := func() {}
	sure := func() (bool, error) { return true, nil }
	always := func() bool { return true }
	none := current{verify: sure, unlock: nothing, kept: always}
	if !exists {
		same, err := holds(path, old, exists)
		none.same = same
		return none, err
	}
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return none, nil
	}
	if err != nil {
		return none, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return none, fmt.Errorf("locking %s: %w", path, err)
	}
	var locked, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &locked) != nil || unix.Lstat(path, &now) != nil || locked.Dev != now.Dev || locked.Ino != now.Ino {
		f.Close()
		return none, nil
	}
	if !held.kept() {
		held.Release() // a program that waits to write goes on
	}
	leased, busy := readLease(f)
	if busy {
		f.Close()
		none.busy = true
		return none, nil
	}
	c := current{same: true, verify: sure, unlock: func() { f.Close() }, kept: always}
	if leased {
		c.kept = func() bool { return leaseKept(f) }
	}
	if held.kept() && held.is(&locked) {
		return c, nil
	}
	if st != (Stamp{}) && stampOf(&locked) == st && int64(len(old)) == st.size {
		c.verify = func() (bool, error) { return readsAs(f, old) }
		return c, nil
	}
	if c.same, err = readsAs(f, old); err != nil {
		f.Close()
		return none, err
	}
	return c, nil
}

// Join returns chunks, one after another, in a new buffer, backed by
// memory at once (see prefault): the content a TransformChunks writer
// gives, for one that reads it again before it is written.
func Join(chunks [][]byte) []byte {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	buf := make([]byte, 0, n)
	prefault(buf)
	for _, c := range chunks {
		buf = append(buf, c...)
	}
	return buf
}

// ChunksEqual reports whether chunks, one after another, are data.
func ChunksEqual(chunks [][]byte, data []byte) bool { return chunksEqual(chunks, data) }

// chunksEqual reports whether chunks, one after another, are data.
func chunksEqual(chunks [][]byte, data []byte) bool {
	for _, c := range chunks {
		if len(c) > len(data) || !bytes.Equal(c, data[:len(c)]) {
			return false
		}
		data = data[len(c):]
	}
	return len(data) == 0
}

// maxRetries bounds the re-applies of a Transform to a file that keeps
// changing under it.
const maxRetries = 50

// Transform rewrites path with fn(old), where old is the file's content
// (nil and exists false when it is missing). When fn returns the content
// unchanged, nothing is written. The caller holds the lock against the
// tool's other writers; Transform guards against everyone else: if the file
// changed between the read and the replace, fn is applied again to the new
// content, so that no one's change is lost. fn may therefore run more than
// once, and must only compute.
//
// On Linux the replace is an atomic exchange: the content it displaced is
// compared with the content read, and if someone wrote in between, theirs
// is swapped straight back and fn applied to it.
func Transform(path string, fn func(old []byte, exists bool) ([]byte, error)) error {
	return TransformChunks(path, func(old []byte, exists bool) ([][]byte, error) {
		data, err := fn(old, exists)
		return [][]byte{data}, err
	})
}

// TransformChunks is Transform for an fn that gives the new content as
// chunks, written one after another: a writer that changes a few lines of
// a big file gives the slices of the old content around its changes, and
// the new content is never built whole.
//
// The file is read under a read lease where the system gives one, and
// held (see Leased) until it is replaced: while the lease lasts, what the
// replace displaces is what was read, and is not compared.
func TransformChunks(path string, fn func(old []byte, exists bool) ([][]byte, error)) error {
	old, exists, st, held, err := readHeld(path)
	if err != nil {
		return err
	}
	return TransformChunksFrom(path, old, exists, st, held, fn)
}

// TransformChunksFrom is TransformChunks for a caller that read the file
// already (ReadFileHeld), under the lock: old, exists, st and held are
// what it read, and fn is first applied to them. Should the file differ
// from old by the time it is replaced, fn is applied again to what is
// there, as in TransformChunks. It releases held.
func TransformChunksFrom(path string, old []byte, exists bool, st Stamp, held *Leased, fn func(old []byte, exists bool) ([][]byte, error)) error {
	defer func() { held.Release() }()
	var busy time.Duration // how long another program has held the file open for writing
	for tries := 0; tries < maxRetries; {
		data, err := fn(old, exists)
		var same, wait bool
		if err != nil || chunksEqual(data, old) && (exists || len(old) == 0) {
			// What was read is refused, or asks for no write: it must be
			// the whole file, not the part of a save in place written so
			// far (a row cut short, the issues not yet written). A lease
			// that held since the read says it was.
			kept, wasHeld := held.kept(), held != nil
			held.Release() // a program that waits to write goes on
			if !exists || kept {
				return err
			}
			leased, busy := leaseNow(path)
			// Read without a lease where one is given now: another
			// program was writing it then, and may have ended since.
			torn := leased && !wasHeld
			if !busy && !torn {
				return err
			}
			wait, err = true, nil
		} else {
			same, wait, err = replace(path, old, exists, st, held, data)
		}
		switch {
		case err != nil:
			return err
		case same:
			Step("renamed " + path)
			return syncDir(filepath.Dir(path))
		case wait:
			// Another program is writing the file in place: what was read
			// may be the part of it written so far. Wait for it to close
			// the file, then read it whole.
			if busy >= BusyWait {
				return &BusyError{Path: path, Waited: busy}
			}
			d := min(busyPause<<min(busy/busyPause, 4), BusyWait-busy)
			time.Sleep(d)
			busy += d
		default:
			tries++
		}
		// Changed under us: read it again and apply fn to what is there.
		if old, exists, st, held, err = readHeld(path); err != nil {
			return err
		}
	}
	return fmt.Errorf("writing %s: it kept changing while being written", path)
}

// leaseNow reports whether a read lease is given on the file at path now
// (let go at once), and whether another program has it open for writing
// (busy), as far as a read lease tells (see readLease): neither where the
// system gives no lease.
func leaseNow(path string) (leased, busy bool) {
	f, err := OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return false, false
	}
	defer f.Close()
	return readLease(f)
}

// BusyWait is how long a writer waits for another program that holds the
// file open for writing (an in-place save) to close it, before it gives
// up with a *BusyError.
var BusyWait = 30 * time.Second

// busyPause is the first pause of a writer that waits for a file to be
// closed by another program; each next pause is longer.
const busyPause = 20 * time.Millisecond

// BusyError is a write given up because another program kept the file
// open for writing (a save in place that never ended).
type BusyError struct {
	Path   string
	Waited time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is open for writing by another program (a save in place?): waited %s for it to be closed; nothing was written (close it, then run the command again)", e.Path, e.Waited.Round(time.Second))
}

// replace puts data at path, unless the file is no longer old (same is
// false) or another program has it open for writing (wait is true too).
// It releases held, the file as read.
func replace(path string, old []byte, exists bool, st Stamp, held *Leased, data [][]byte) (same, wait bool, err error) {
	defer held.Release()
	// The slow part, writing and syncing, comes before the last look
	// at the file, so that the window in which a write by someone
	// else could slip in is as short as a read.
	tmp, release, err := writeTemp(path, data, 0o644)
	if err != nil {
		return false, false, err
	}
	cur, err := lockCurrent(path, old, exists, st, held)
	same = cur.same
	if err == nil && same {
		var exchanged bool
		exchanged, err = commit(tmp, path, exists, cur.verify)
		if err == nil && exchanged {
			afterExchange(tmp)
			// tmp now holds what the exchange displaced. If someone
			// wrote between our last look and the exchange, or opened
			// the file to write into it, theirs goes back at once, and
			// fn applies to it. What was read, held under a lease
			// whole to now, is what was displaced, without a compare.
			if !held.displacedIs(tmp) {
				same, err = holds(tmp, old, true)
			}
			if err == nil && (!same || !cur.kept()) {
				cur.busy = cur.busy || same
				same, err = false, uncommit(tmp, path)
			}
		}
	}
	os.Remove(tmp)
	cur.unlock()
	held.Release()
	release()
	if errors.Is(err, fs.ErrExist) || err == errChanged {
		// Created, or written, by someone else meanwhile.
		return false, false, nil
	}
	return same, cur.busy, err
}

// errChanged is a replace refused because the file is no longer what was
// read: the caller reads it again.
var errChanged = errors.New("changed since it was read")

// rename puts tmp at path with a plain atomic rename, once verify says
// path still holds what was read.
func rename(tmp, path string, verify func() (bool, error)) error {
	same, err := verify()
	if err != nil {
		return err
	}
	if !same {
		return errChanged
	}
	return os.Rename(tmp, path)
}
