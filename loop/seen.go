package loop

import (
	"slices"
	"strings"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// SectionFailuresSeen lists, for each distinct failure among an issue's
// Recent-Signatures, what it was in a line: "- `a1b2c3d4e5f6` --- FAIL:
// TestAdd (<dur>): calc_test.go:N: Add(1, 2) = 3; want 4". The feedback's
// "already tried" shows them to the agent, so that it sees it repeats
// itself.
const SectionFailuresSeen = "Failures Seen"

// noteFailureSeen brings an issue's Failures Seen up to date with a counted
// failure (heads say what it was, see headlines): its line first set or replaced, the lines of signatures no
// longer among recent dropped.
func noteFailureSeen(is *queue.Issue, short string, heads []string, recent []string) {
	seen := failuresSeen(is)
	seen[short] = distinctHeadline(seen, short, heads)
	var b strings.Builder
	done := map[string]bool{}
	for _, s := range recent {
		if done[s] {
			continue
		}
		done[s] = true
		b.WriteString("- `" + s + "`")
		if h := seen[s]; h != "" {
			b.WriteString(" " + strings.ReplaceAll(h, "`", "'"))
		}
		b.WriteString("\n")
	}
	is.SetSection(SectionFailuresSeen, b.String())
}

// maxHeadlineLines bounds the lines after a failure line that its
// headline's message is looked for in; maxHeadlines the failures of one
// output that headlines reads.
const (
	maxHeadlineLines = 8
	maxHeadlines     = 20
)

// headlines say in a line each what a failure's failing tests were: each
// failure block's first line and message, in the order of the output
// (normalization sorts independent failure blocks, so the normalized text's
// first is the alphabetically first), normalized as the signature is
// (durations, line numbers masked). Pytest's summary lines "FAILED x -
// message" are preferred, as signature.Headline prefers them. None when
// the output has no failure line: the caller falls back on the normalized
// text.
func (w Workspace) headlines(output []byte) []string {
	// The line naming each test of a test-level failure (results.Text's
	// "== GATE: ID ==") is not a failure of its own: its block is.
	all := strings.Split(string(output), "\n")
	lines := slices.DeleteFunc(slices.Clone(all), func(l string) bool {
		return strings.HasPrefix(l, "== ") && strings.HasSuffix(l, " ==")
	})
	var pytest, starts []int
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "FAILED ") && strings.Contains(t, " - ") {
			pytest = append(pytest, i)
		} else if signature.FailureLine(l) && (len(starts) == 0 || i > starts[len(starts)-1]+1) {
			// A failure line right after another is its message, not a
			// failure of its own.
			starts = append(starts, i)
		}
	}
	var out []string
	block := func(from, to int) {
		_, normalized := signature.Of([]byte(strings.Join(lines[from:to], "\n")), signature.Fail, w.SignatureOptions())
		if h := signature.Headline(normalized); h != "" && len(out) < maxHeadlines {
			out = append(out, h)
		}
	}
	if len(pytest) > 0 {
		for _, i := range pytest {
			block(i, i+1)
		}
		return out
	}
	for k, i := range starts {
		end := min(len(lines), i+1+maxHeadlineLines)
		if k+1 < len(starts) {
			end = min(end, starts[k+1])
		}
		block(i, end)
	}
	if len(out) == 0 && len(lines) < len(all) {
		block(0, len(lines)) // the tests' blocks without the lines naming them
	}
	return out
}

// distinctHeadline is the line of failure short among the others seen: its
// first failing test and message, and, when another failure seen has that
// same first line, the first of its other failing tests that the other's
// line does not hold, so that two different failures never read the same.
func distinctHeadline(seen map[string]string, short string, heads []string) string {
	if len(heads) == 0 {
		return ""
	}
	var same []string
	for s, h := range seen {
		if s != short && strings.HasPrefix(h, heads[0]) {
			same = append(same, h)
		}
	}
	if len(same) == 0 {
		return heads[0]
	}
	for _, h := range heads[1:] {
		if !slices.ContainsFunc(same, func(o string) bool { return strings.Contains(o, h) }) {
			return heads[0] + "; also " + h
		}
	}
	return heads[0]
}

// failuresSeen reads an issue's Failures Seen: short signature → headline.
func failuresSeen(is *queue.Issue) map[string]string {
	out := map[string]string{}
	sec := is.Section(SectionFailuresSeen)
	if sec == nil {
		return out
	}
	for _, l := range strings.Split(sec.Body(), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), "- `")
		if !ok {
			continue
		}
		sig, headline, ok := strings.Cut(rest, "`")
		if ok {
			out[sig] = strings.TrimSpace(headline)
		}
	}
	return out
}
