package queue

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

// safeBody returns a section's body as text that creates no structure in
// the queue: clean text (textclean.Text: no control bytes, valid UTF-8),
// where no line can be read as a heading of level 1 to 3 ("#", "##" or
// "###" and a space, a setext underline),
// an HTML block or a code fence left open that would hide what follows.
// Such lines outside fenced code get a backslash in front, markdown's
// escape; a fence left open is closed. If the result still parses with a
// heading of its own (a fence the simple scan misread), every such line is
// escaped, fences too.
func safeBody(body string) string {
	body = textclean.Text(body)
	if b := escapeLines(body, false); structureFree(b) {
		return b
	}
	return escapeLines(body, true)
}

// escapeLines escapes the lines that could start a heading or an HTML
// block; outside fenced code only, unless all.
func escapeLines(body string, all bool) string {
	lines := strings.Split(body, "\n")
	var fence byte
	fenceLen := 0
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		indent := len(l) - len(trimmed)
		if indent > 3 || trimmed == "" {
			continue
		}
		if fence != 0 && !all {
			if n := leadRun(trimmed, fence); n >= fenceLen && strings.TrimSpace(trimmed[n:]) == "" {
				fence = 0
			}
			continue
		}
		if c, n := opensFence(trimmed); !all && n > 0 {
			fence, fenceLen = c, n
			continue
		}
		if startsStructure(trimmed, all) {
			lines[i] = l[:indent] + `\` + trimmed
		}
	}
	if fence != 0 {
		lines = append(lines, strings.Repeat(string(fence), fenceLen))
	}
	return strings.Join(lines, "\n")
}

// leadRun returns how many times c repeats at the start of s.
func leadRun(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// opensFence returns the character and length of the code fence that the
// line trimmed (not empty, its indent cut) opens; n is 0 when it opens none.
func opensFence(trimmed string) (c byte, n int) {
	c = trimmed[0]
	if (c == '`' || c == '~') && leadRun(trimmed, c) >= 3 && (c == '~' || !strings.Contains(trimmed[leadRun(trimmed, c):], "`")) {
		return c, leadRun(trimmed, c)
	}
	return 0, 0
}

// startsStructure reports whether the line trimmed (not empty, its indent
// cut) needs escaping: it could start a heading of level 1 to 3 or an HTML
// block, or underline a heading; with all, any fence or heading does.
func startsStructure(trimmed string, all bool) bool {
	c := trimmed[0]
	bare := strings.TrimRight(trimmed, " \t")
	underline := (c == '=' || c == '-') && bare == strings.Repeat(string(c), len(bare))
	// A heading of level 1 to 3 ends or starts an issue or a section;
	// "####" and deeper are a section's own.
	hashes := leadRun(trimmed, '#')
	heading := c == '#' && hashes <= 3 && (len(trimmed) == hashes || trimmed[hashes] == ' ' || trimmed[hashes] == '\t')
	return heading || c == '<' || underline || all && (c == '`' || c == '~' || c == '#')
}

// structureFree reports whether body, as a section's body, holds no heading
// of level 3 or less and hides no heading after it.
func structureFree(body string) bool {
	const end = "### end"
	doc := "### s\n\n" + body + "\n\n" + end + "\n"
	n := 0
	ok := true
	mdpatch.NewSource([]byte(doc)).Walk(func(b mdpatch.Block) {
		if b.Kind == mdpatch.Heading && b.Level <= 3 {
			n++
			if n == 2 && b.Title != "end" {
				ok = false
			}
		}
	})
	return ok && n == 2
}
