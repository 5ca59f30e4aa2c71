package queue

import (
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
)

// Batch is a series of updates of the queue at path made in memory and
// written with one write: for a writer that changes the queue several times
// in one command, and reads the big file once and writes it once. Each
// update is what UpdateSome (Update, with no needles) would make of the
// file as the updates before it left it, byte for byte: it sees their
// changes as if each had been written and read back, and is refused as that
// write would have been. The caller holds the directory's lock from
// ReadBatch to Write, and Releases a batch it does not write.
type Batch struct {
	path    string
	needles []string // none: the whole queue (Update)
	old     []byte   // the file as read
	exists  bool
	stamp   fsx.Stamp   // of the file as read
	held    *fsx.Leased // the file as read, held under its lease (see fsx.Leased)

	text    []byte          // the queue as the updates so far leave it
	src     *mdpatch.Source // of text: its cuts are found once
	found   *found          // where the needles lie in text, once looked for
	pending [][]byte        // the last update's result, not yet joined into text
	read    *Queue          // text parsed for the readers (Queue)
	updates []func(*Queue) error
}

// ReadBatch reads the queue at path for a batch of updates, each of which
// reads and changes only the issues whose text holds one of needles (see
// UpdateSome); with no needles, each reads the whole queue (see Update).
func ReadBatch(path string, needles ...string) (*Batch, error) {
	data, exists, st, held, err := fsx.ReadFileHeld(path, batchRoom)
	if err != nil {
		return nil, err
	}
	if len(needles) == 0 {
		needles = nil
	}
	b := &Batch{path: path, needles: needles, old: data[:len(data):len(data)], exists: exists, stamp: st, held: held, text: data}
	b.src = mdpatch.NewSource(data)
	return b, nil
}

// batchRoom is the room a batch's text has after it, for the issues its
// updates file: added in place, the big text is not copied.
const batchRoom = 256 << 10

// join makes the last update's result the text: in place when it only
// adds after the text (new issues) and the room there holds it, or else in
// a new buffer. The text grows in place only past its end, which no text
// before it and no queue read from one holds.
func (b *Batch) join() {
	if b.pending == nil {
		return
	}
	if tail, ok := appended(b.pending, b.text); ok && cap(b.text)-len(b.text) >= size(tail) {
		// What was read of the text before holds for it: only the
		// addition is looked at.
		for _, c := range tail {
			b.text = append(b.text, c...)
		}
		old, bom := len(b.src.Text), len(b.src.Raw)-len(b.src.Text)
		b.src = b.src.Appended(b.text)
		if b.found != nil && len(b.src.Raw)-len(b.src.Text) == bom {
			b.found = b.found.appended(b.src.Text, old)
		} else {
			b.found = nil
		}
	} else {
		b.text = fsx.Join(b.pending)
		b.src, b.found = mdpatch.NewSource(b.text), nil
	}
	b.pending, b.read = nil, nil
}

// appended returns what chunks add after text, when they are text as it
// is (its own bytes, in order) and then more.
func appended(chunks [][]byte, text []byte) (tail [][]byte, ok bool) {
	at := 0
	for i, c := range chunks {
		if at == len(text) {
			return chunks[i:], true
		}
		if len(c) == 0 {
			continue
		}
		if at+len(c) > len(text) || &c[0] != &text[at] {
			return nil, false
		}
		at += len(c)
	}
	return nil, at == len(text)
}

func size(chunks [][]byte) int {
	n := 0
	for _, c := range chunks {
		n += len(c)
	}
	return n
}

// parse parses the text as an update reads it.
func (b *Batch) parse() *Queue {
	if b.needles == nil {
		return parseSource(b.src, nil)
	}
	if b.found == nil {
		b.found = findNeedles(b.src.Text, b.needles)
	}
	return parseFound(b.src, b.found)
}

// Queue returns the queue as the updates so far leave it, as an update
// would read it, for reading only.
func (b *Batch) Queue() *Queue {
	b.join()
	if b.read == nil {
		b.read = b.parse()
	}
	return b.read
}

// Some returns the issues of the queue as the updates so far leave it
// whose text holds one of needles (see LoadSome), for reading only.
func (b *Batch) Some(needles ...string) *Queue {
	b.join()
	return parseSome(b.src, needles)
}

// Update applies fn to the queue as the updates so far leave it, as
// UpdateSome (or Update) applies it to the file: fn sees the issues that
// hold the needles, and a queue whose issues read have problems is refused
// with a *ValidationError before fn runs. An update that fails changes
// nothing. fn runs again should the file change under Write, so it must
// only change the queue and capture what it reports.
func (b *Batch) Update(fn func(*Queue) error) error {
	b.join()
	chunks, err := b.apply(b.text, b.parse(), fn)
	if err != nil {
		return err
	}
	b.updates = append(b.updates, fn)
	if !fsx.ChunksEqual(chunks, b.text) {
		b.pending, b.read = chunks, nil
	}
	return nil
}

// apply runs fn on q, parsed from text, and returns what it writes.
func (b *Batch) apply(text []byte, q *Queue, fn func(*Queue) error) ([][]byte, error) {
	if b.needles == nil {
		if err := apply(b.path, q, fn); err != nil {
			return nil, err
		}
		return q.result(text), nil
	}
	return applySome(b.path, text, q, fn)
}

// Release lets go of the file as read, for a batch that is not written:
// a program waiting to write it goes on (see fsx.Leased). Write releases
// it too; releasing again does nothing.
func (b *Batch) Release() { b.held.Release() }

// Write writes the queue as the updates left it, once; nothing when they
// changed nothing. Should the file have changed since ReadBatch (a person's
// edit), the updates are made again, one after another, on what is there,
// so that nothing of theirs or of the person's is lost.
func (b *Batch) Write() error {
	final := b.pending
	if final == nil {
		final = [][]byte{b.text}
	}
	first := true
	held := b.held
	b.held = nil
	return fsx.TransformChunksFrom(b.path, b.old, b.exists, b.stamp, held, func(cur []byte, _ bool) ([][]byte, error) {
		if first {
			first = false
			return final, nil
		}
		text := cur
		for _, fn := range b.updates {
			var q *Queue
			if b.needles == nil {
				q = Parse(text)
			} else {
				q = ParseSome(text, b.needles...)
			}
			chunks, err := b.apply(text, q, fn)
			if err != nil {
				return nil, err
			}
			text = fsx.Join(chunks)
		}
		return [][]byte{text}, nil
	})
}
