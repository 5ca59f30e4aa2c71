package queue

// Bytes returns the file with every change applied, whole: what a writer
// writes in chunks (see result). Bytes the changes do not touch are the
// ones parsed.
func (q *Queue) Bytes() []byte {
	return q.src.Apply(q.edits())
}
