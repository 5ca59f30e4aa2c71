package queue

import "bytes"

// finder looks for one needle in texts. bytes.Index hops from one place of
// the needle's first byte to the next (bytes.IndexByte), and compares the
// needle there. A hex digit is found every few bytes of a queue full of
// signatures, dates and counts, and so are the first letters of many
// words; there it hops little and compares much, and past a point hashes
// every byte (9 ms for a signature on a 10,000-issue queue).
//
// So a short needle hops from one place of its rarest byte to the next,
// rare as a sample of the text counts it. A long one, such as a failure
// signature (64 hex digits), is looked for with a Horspool search on the
// pairs of bytes that end each window (0.3 ms where bytes.Index takes 9):
// a pair the needle does not hold moves the window on by the needle's
// whole length less one.
type finder struct {
	needle []byte
	rare   int     // the place in needle of its rarest byte; 0: bytes.Index
	shift  []uint8 // by the pair of bytes that ends the window; nil: none
	last   uint16  // the needle's last pair
}

// byteCounts is how often each byte comes in a sample of a text: its
// first 64 KiB, the queue's oldest issues, which are like its others.
type byteCounts [256]int

func countBytes(text []byte) *byteCounts {
	var c byteCounts
	for _, b := range text[:min(len(text), 64<<10)] {
		c[b]++
	}
	return &c
}

// longNeedle is the length from which a needle is looked for with the
// pairs: below it, bytes.Index's hops are the quicker.
const longNeedle = 40

// newFinder makes the finder of needle for texts whose bytes come as
// often as counts says.
func newFinder(needle []byte, counts *byteCounts) *finder {
	f := &finder{needle: needle}
	n := len(needle)
	if n < longNeedle {
		for i, b := range needle {
			if counts[b] < counts[needle[f.rare]] {
				f.rare = i
			}
		}
		return f
	}
	// How far the window moves when it ends with a pair: as far as brings
	// the pair's last place in the needle (the end excepted) under it, or
	// the whole needle less one when the needle does not hold it. A
	// window that moves by less than the needle never passes a place.
	f.shift = make([]uint8, 1<<16)
	most := uint8(min(n-1, 255))
	for i := range f.shift {
		f.shift[i] = most
	}
	for j := 1; j <= n-2; j++ {
		if s := n - 1 - j; s < int(most) {
			f.shift[pair(needle[j-1], needle[j])] = uint8(s)
		}
	}
	f.last = pair(needle[n-2], needle[n-1])
	return f
}

func pair(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

// index returns the first place of the needle in text, or -1: what
// bytes.Index returns.
func (f *finder) index(text []byte) int {
	if f.shift == nil {
		return f.hop(text)
	}
	n := len(f.needle)
	for end := n - 1; end < len(text); {
		p := pair(text[end-1], text[end])
		if p == f.last && bytes.Equal(text[end-n+1:end+1], f.needle) {
			return end - n + 1
		}
		end += int(f.shift[p])
	}
	return -1
}

// hop is index for a short needle: from one place of its rarest byte to
// the next, the needle compared around each.
func (f *finder) hop(text []byte) int {
	k, n := f.rare, len(f.needle)
	if k == 0 {
		return bytes.Index(text, f.needle)
	}
	// A place of the rare byte at i is the needle's at i-k, which must
	// lie in text whole: k <= i <= len(text)-n+k.
	for i := k; i <= len(text)-n+k; i++ {
		j := bytes.IndexByte(text[i:len(text)-n+k+1], f.needle[k])
		if j < 0 {
			return -1
		}
		i += j
		if bytes.Equal(text[i-k:i-k+n], f.needle) {
			return i - k
		}
	}
	return -1
}
