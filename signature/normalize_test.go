package signature

import "strings"

// Normalize and Compute are Of's two halves, each a Writer of its own: the
// tests check the rules on one of them, and that Of gives what they give.

// Normalize returns the output with everything that varies between runs
// masked, the lines of passing tests dropped and independent failure blocks
// sorted: the text that is hashed, and what "signature --explain" prints.
// Lines end in "\n" (never "\r\n") and blank lines go: where a tool's
// progress output ends moves them from run to run. The result is "" when
// nothing is left (see Empty).
func Normalize(output []byte, opt Options) string {
	var b strings.Builder
	w := NewWriter(opt)
	w.Explain(&b)
	w.Write(output)
	w.Digest()
	return b.String()
}

// Compute returns the signature of output (see Digest.Signature). An empty
// class counts as Fail.
func Compute(output []byte, class Class, opt Options) string {
	w := NewWriter(opt)
	w.Write(output)
	return w.Digest().Signature(class)
}
