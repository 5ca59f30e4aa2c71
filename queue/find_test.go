package queue

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFinderFindsWhatIndexFinds checks the search against bytes.Index on
// texts of few letters, where the needle's bytes and pairs come back often
// and a window moved one byte too far would pass a place: short needles,
// needles of the least length the pairs take, of 256 bytes and more (whose
// moves are capped), and needles that repeat themselves.
func TestFinderFindsWhatIndexFinds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func(n int, letters string) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		return b
	}
	for range 3000 {
		letters := "ab"[:1+r.IntN(2)] + "cdef"[:r.IntN(4)]
		n := longNeedle + r.IntN(3)
		switch r.IntN(4) {
		case 0:
			n = 250 + r.IntN(20)
		case 1:
			n = 1 + r.IntN(longNeedle-1)
		}
		needle := word(n, letters)
		text := word(r.IntN(2000), letters)
		// Plant the needle, or most of it, here and there.
		for range r.IntN(4) {
			at := r.IntN(len(text) + 1)
			text = append(text[:at:at], append(needle[:r.IntN(n+1)], text[at:]...)...)
		}
		f := newFinder(needle, countBytes(text))
		if (f.shift != nil) != (n >= longNeedle) {
			t.Fatalf("a needle of %d bytes is looked for by its pairs: %v", n, f.shift != nil)
		}
		for from := 0; from <= len(text); from += 1 + r.IntN(50) {
			if got, want := f.index(text[from:]), bytes.Index(text[from:], needle); got != want {
				t.Fatalf("index of %q in %q = %d; bytes.Index says %d", needle, text[from:], got, want)
			}
		}
	}
}

// TestFinderShortNeedles checks that a needle shorter than longNeedle is
// looked for by its rarest byte in the text, and one of longNeedle bytes
// by its pairs.
func TestFinderShortNeedles(t *testing.T) {
	counts := countBytes([]byte("| Type | bug |\n| Status | pending |\n"))
	for _, c := range []struct {
		needle string
		rare   int
	}{{"bench", 3}, {"bug", 0}, {"|", 0}, {"Status", 0}, {"pending", 3}} {
		if f := newFinder([]byte(c.needle), counts); f.rare != c.rare || f.shift != nil {
			t.Errorf("%q: hops on byte %d, by pairs %v; want byte %d", c.needle, f.rare, f.shift != nil, c.rare)
		}
	}
	if f := newFinder(bytes.Repeat([]byte("a"), longNeedle-1), counts); f.shift != nil {
		t.Error("a needle shorter than longNeedle is looked for by its pairs")
	}
	if f := newFinder(bytes.Repeat([]byte("a"), longNeedle), counts); f.shift == nil {
		t.Error("a needle of longNeedle bytes is not looked for by its pairs")
	}
}

// TestLoadSomeFindsASignature checks the places of a signature in a queue
// full of others: each issue that holds it, and no other.
func TestLoadSomeFindsASignature(t *testing.T) {
	sig := strings.Repeat("e91b07c44d2a8f3e", 4)
	var b strings.Builder
	b.WriteString("# Issue Queue\n\n")
	for i := 1; i <= 40; i++ {
		// The others differ from it in one digit, 'e' in none.
		s := strings.Repeat("e91b07c44d2a8f3"+string("0123456789abcdf"[i%15]), 4)
		if i%7 == 0 {
			s = sig
		}
		fmt.Fprintf(&b, "## ISSUE-20241213-%03d\n\n| Field | Value |\n|-------|-------|\n| Status | stuck |\n| Failure-Signature | %s |\n\n", i, s)
	}
	q := ParseSome([]byte(b.String()), sig)
	var got []string
	for _, is := range q.Issues {
		got = append(got, is.ID)
	}
	want := "ISSUE-20241213-007 ISSUE-20241213-014 ISSUE-20241213-021 ISSUE-20241213-028 ISSUE-20241213-035"
	if strings.Join(got, " ") != want {
		t.Errorf("issues holding the signature: %v; want %s", got, want)
	}
}

// FuzzFinder checks the search against bytes.Index; long tells a needle
// made long enough for the pairs.
func FuzzFinder(f *testing.F) {
	f.Add([]byte(strings.Repeat("ab", 30)), []byte(strings.Repeat("ab", 200)+"a"), true)
	f.Add([]byte(strings.Repeat("3f2a9c0e", 8)), []byte("| Failure-Signature | "+strings.Repeat("3f2a9c0e", 9)+" |"), true)
	f.Add([]byte("bench"), []byte("| Type | bug |\nbenc bench"), false)
	f.Fuzz(func(t *testing.T, needle, text []byte, long bool) {
		if long && len(needle) < longNeedle {
			needle = append(bytes.Repeat([]byte{'a'}, longNeedle-len(needle)), needle...)
		}
		if len(needle) == 0 {
			return
		}
		if got, want := newFinder(needle, countBytes(text)).index(text), bytes.Index(text, needle); got != want {
			t.Fatalf("index = %d; bytes.Index says %d", got, want)
		}
	})
}
