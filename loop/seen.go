package loop

import (
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
// failure: its line first set or replaced, the lines of signatures no
// longer among recent dropped.
func noteFailureSeen(is *queue.Issue, short, normalized string, recent []string) {
	seen := failuresSeen(is)
	seen[short] = signature.Headline(normalized)
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
