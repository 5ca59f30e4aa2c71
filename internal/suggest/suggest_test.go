package suggest

import (
	"math"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"status", "status", 0},
		{"stauts", "status", 2},
		{"agent", "agents", 1},
		{"Priorty", "Priority", 1},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	long := string(make([]byte, 65))
	if got := Distance(long, "a"); got != math.MaxInt {
		t.Errorf("Distance of a 65-byte word = %d, want MaxInt", got)
	}
}

// TestClosest pins each limit at its boundary: 1 under 5 bytes, 3 from 5.
func TestClosest(t *testing.T) {
	cands := []string{"run", "status", "claim", "agents", "lease"}
	for _, c := range []struct{ word, want string }{
		{"stauts", "status"},  // 2 of 6 bytes
		{"sTATUS", "status"},  // case ignored
		{"rn", "run"},         // 1 of 3
		{"xn", ""},            // 2 of 3: too far
		{"agent", "agents"},   // 1
		{"clxxx", "claim"},    // 3 of 5 bytes: at the limit
		{"cxxxx", ""},         // 4: too far
		{"leasexyz", "lease"}, // 3 of 5 bytes
		{"leasewxyz", ""},     // 4: too far
		{"nothing-like", ""},  // far from all
	} {
		if got := Closest(c.word, cands); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if got := Closest("ab", []string{"ax", "ay"}); got != "ax" {
		t.Errorf("a tie goes to the first candidate, got %q", got)
	}
}
