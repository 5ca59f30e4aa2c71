// Package suggest finds the word a person most likely meant: a command, a
// flag, a field or a key within a small edit distance of what was typed.
package suggest

import (
	"math"
	"strings"
)

// Closest returns the candidate within a small edit distance of word, or
// "" when none is. The distance allowed is 1 for a candidate shorter than
// 5 bytes and 3 for a longer one; case is ignored. Of two candidates at
// the same distance, the first wins.
func Closest(word string, candidates []string) string {
	best, bestDist := "", math.MaxInt
	w := strings.ToLower(word)
	for _, c := range candidates {
		limit := 1
		if len(c) >= 5 {
			limit = 3
		}
		if d := Distance(w, strings.ToLower(c)); d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes: the
// fewest insertions, deletions and substitutions that make one the other.
// Words over 64 bytes are never close: their distance is math.MaxInt.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
