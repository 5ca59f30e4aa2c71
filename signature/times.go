package signature

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
)

// maskFracDurations replaces with tokDur the durations with a fraction:
// 1.5s, 0.25 ms, 2m3.5s, 1h2m0.5sec, each starting at a word boundary and
// ending at one. It scans for "digit.digit" and reads around it; the
// regexp that says the same (fracDurSpec, in the tests) tries every
// position of every line.
func maskFracDurations(l string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(l); i++ {
		if !isDigit(l[i]) || i > 0 && isWordByte(l[i-1]) {
			continue
		}
		end := fracDurationAt(l, i)
		if end < 0 {
			for i+1 < len(l) && isWordByte(l[i+1]) {
				i++ // no boundary before the next start in this word
			}
			continue
		}
		b.WriteString(l[last:i])
		b.WriteString(tokDur)
		last = end
		i = end - 1
	}
	return spliced(&b, l, last)
}

// fracDurationAt returns the end of the duration with a fraction that
// starts at l[i] (a digit), or -1: an optional "<digits>h", an optional
// "<digits>m", "<digits>.<digits>", an optional space and a unit that ends
// at a word boundary.
func fracDurationAt(l string, i int) int {
	digits := func(j int) int {
		for j < len(l) && isDigit(l[j]) {
			j++
		}
		return j
	}
	if j := digits(i); j < len(l) && l[j] == 'h' {
		i = j + 1
	}
	if j := digits(i); j > i && j < len(l) && l[j] == 'm' {
		i = j + 1
	}
	j := digits(i)
	if j == i || j+1 >= len(l) || l[j] != '.' || !isDigit(l[j+1]) {
		return -1
	}
	j = digits(j + 1)
	if j < len(l) && l[j] == ' ' {
		if end := unitAt(l, j+1); end >= 0 {
			return end
		}
	}
	return unitAt(l, j)
}

// durationUnits are the units of fracDurationAt, in the order they are tried.
var durationUnits = []string{"ns", "µs", "μs", "us", "ms", "s", "sec", "secs", "seconds"}

// unitAt returns the end of the first of durationUnits at l[j:] that ends
// at a word boundary, or -1.
func unitAt(l string, j int) int {
	for _, u := range durationUnits {
		if end := j + len(u); strings.HasPrefix(l[j:], u) && (end == len(l) || !isWordByte(l[end])) {
			return end
		}
	}
	return -1
}

// vitestMarks start the lines of vitest's (and similar runners') report
// that end in the time a test or a file took: "✓ mul 5ms", "× add 28ms",
// "❯ calc.test.mjs (3 tests | 1 failed) 113ms".
var vitestMarks = []string{"✓ ", "× ", "❯ ", "↓ ", "✕ "}

// isVitestTimed reports whether l is such a line, or vitest's "Duration"
// summary, whose every figure is a time.
func isVitestTimed(l string) bool {
	t := strings.TrimLeft(l, " ")
	if strings.HasPrefix(t, "Duration ") {
		return true
	}
	if !strings.HasSuffix(l, "ms") && !strings.HasSuffix(l, "s") {
		return false
	}
	for _, m := range vitestMarks {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

// maskVitestTimes masks the time at the end of a test's or a file's line,
// and every time of the Duration line ("Duration 2.66s (transform 352ms,
// setup 0ms, …)").
func maskVitestTimes(l string) string {
	if strings.HasPrefix(strings.TrimLeft(l, " "), "Duration ") {
		return reVitestTime.ReplaceAllString(l, tokDur)
	}
	if loc := reVitestTail.FindStringIndex(l); loc != nil {
		return l[:loc[0]] + " " + tokDur
	}
	return l
}

var (
	reVitestTime = lazyre.New(`\b\d+(?:\.\d+)?(?:ms|s)\b`)
	reVitestTail = lazyre.New(` \d+(?:\.\d+)?(?:ms|s)$`)
)
