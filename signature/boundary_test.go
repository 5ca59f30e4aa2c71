package signature

import (
	"strings"
	"testing"
)

// TestHexMaskBoundary: a run of 16 hex digits or more (a hash, an address)
// with letters and digits is masked; 15 are kept.
func TestHexMaskBoundary(t *testing.T) {
	for _, tc := range []struct {
		n      int
		masked bool
	}{
		{15, false},
		{16, true},
		{40, true},
	} {
		tok := strings.Repeat("a1", tc.n)[:tc.n] // digits and letters: not a number, not a word
		got := Normalize([]byte("object "+tok+" is missing\n"), Options{})
		if masked := !strings.Contains(got, tok); masked != tc.masked {
			t.Errorf("hex mask: %d hex digits give %q; masked %v, want %v", tc.n, got, masked, tc.masked)
		}
	}
}
