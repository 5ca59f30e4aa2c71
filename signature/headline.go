package signature

import "strings"

// failurePrefixes start the lines that name a failure or say what it was,
// after any indentation: a failing test's header or result line, an error
// message, an assertion, a panic. They come from the output of go test,
// pytest, unittest, node --test, cargo test, jest, gcc, tsc and make.
var failurePrefixes = []string{
	"--- FAIL:", "FAIL:", "ERROR:", "FAILED ", "FAIL ", "not ok ", "✖ ", "✕ ", "● ", "× ",
	"panic:", "fatal error:", "Error:", "error:", "error[", "E   ", "AssertionError", "assert ",
	"Traceback (most recent call last):", "thread '", "---- ", "make: *** ", "Exception",
}

// FailureLine reports whether a line of output names a failure or says
// what it was: "--- FAIL: TestX", "FAILED t.py::x - assert 3 == 4",
// "thread 'main' panicked at", "calc.c:7:29: error: …", "test x ... FAILED",
// pytest's "____ test_add ____".
func FailureLine(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if t == "" {
		return false
	}
	for _, p := range failurePrefixes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	if strings.HasSuffix(t, " ... FAILED") || strings.HasSuffix(t, " ... FAIL") || strings.HasSuffix(t, " ... ERROR") ||
		strings.HasSuffix(t, " --- FAILED") || strings.Contains(t, ": error:") || strings.Contains(t, ": error TS") ||
		strings.Contains(t, "  error  ") || strings.Contains(t, " panicked at ") || strings.Contains(t, ": fatal error:") {
		return true
	}
	return strings.HasPrefix(t, "___") && strings.HasSuffix(t, "___") && strings.Contains(t, " ")
}

// maxHeadline is the longest Headline, in bytes.
const maxHeadline = 240

// Headline says in one line what a normalized failure was: its first
// failing test and message ("--- FAIL: TestAdd (<dur>): calc_test.go:N:
// Add(1, 2) = 3; want 4"), so that a person or an agent told about an
// earlier failure recognizes it. It is pytest's first "FAILED x - message"
// line when there is one; else the first FailureLine and, after it, the
// first line that reads as a message (pytest's "E" lines, an error, an
// assertion, got and want), or else the next line. Without a failure line
// it is the first line (and "" for an empty text); never longer than 240
// bytes.
func Headline(normalized string) string {
	lines := strings.Split(normalized, "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "FAILED ") && strings.Contains(l, " - ") {
			return clip(l)
		}
	}
	for i, l := range lines {
		if !FailureLine(l) {
			continue
		}
		head := strings.TrimSpace(l)
		if strings.HasSuffix(head, " ... FAIL") || strings.HasSuffix(head, " ... ERROR") ||
			strings.HasSuffix(head, " ... FAILED") || strings.HasSuffix(head, " --- FAILED") {
			return clip(head) // a result line: the next line is another test's
		}
		if msg := message(lines[i+1 : min(len(lines), i+9)]); msg != "" && !strings.HasPrefix(head, "FAILED ") {
			head += ": " + msg
		}
		return clip(strings.TrimSpace(head))
	}
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			return clip(t)
		}
	}
	return ""
}

// message returns the line of lines that reads best as a failure's
// message: pytest's first "E" line, else the first with an error, an
// assertion, got and want, else the first that is not blank.
func message(lines []string) string {
	first, best := "", ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "E "):
			return strings.TrimSpace(t[1:])
		case best == "" && isMessage(t) && !strings.HasPrefix(t, ">"):
			best = t
		case first == "":
			first = t
		}
	}
	if best != "" {
		return best
	}
	return first
}

func isMessage(t string) bool {
	for _, w := range []string{"Error", "error", "assert", "want", "expected", "Expected", "panicked", "!=", "left:", "got"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

func clip(s string) string {
	if len(s) <= maxHeadline {
		return s
	}
	s = s[:maxHeadline]
	for len(s) > 0 && s[len(s)-1]&0xc0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xc0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}
