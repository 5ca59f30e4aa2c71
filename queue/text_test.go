package queue

import (
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/textclean"
)

// FuzzSectionText files an issue with arbitrary text in a field and in its
// sections, and parses the file again: the text never creates an issue, a
// section or a problem, and the file holds only clean text.
func FuzzSectionText(f *testing.F) {
	for _, s := range []string{
		"plain", "first\n## ISSUE-20241213-099\nx", "### Failure Details\nboom", "```\nnever closed",
		"~~~~\n## ISSUE-20241213-098", "title\n=====", "text\n---", "<!--\n## ISSUE-20241213-097",
		"<script>\n## ISSUE-20241213-096", "a\x00b\x1b]0;x\x07\xff", "  ## ISSUE-1", "```a`b\n## ISSUE-2",
		"- item\n  ```\n## ISSUE-20241213-095", "> quote\n## ISSUE-20241213-094",
	} {
		f.Add(s, s)
	}
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, summary, value string) {
		q := Parse([]byte("# Issue Queue\n\n## ISSUE-20241213-001\n\n| Field | Value |\n|---|---|\n| Status | pending |\n\n### Summary\n\nold\n"))
		is := q.Add(now, map[string]string{FieldStatus: "pending", "Note": value}, map[string]string{SectionSummary: summary, "Extra": summary})
		q.Issue("ISSUE-20241213-001").SetSection(SectionSuggestedFix, summary)
		data := q.Bytes()
		if what, at, bad := textclean.Problem(string(data)); bad {
			t.Fatalf("the file holds a %s at %d:\n%q", what, at, data)
		}
		again := Parse(data)
		if len(again.Issues) != 2 || again.Issues[1].ID != is.ID || len(again.Problems) > 0 {
			t.Fatalf("summary %q, value %q: %d issues, problems %v:\n%s", summary, value, len(again.Issues), again.Problems, data)
		}
		if n := len(again.Issues[1].Sections()); n != 2 {
			t.Fatalf("summary %q: the new issue has %d sections; want 2:\n%s", summary, n, data)
		}
		if n := len(again.Issues[0].Sections()); n != 2 {
			t.Fatalf("summary %q: the first issue has %d sections; want 2:\n%s", summary, n, data)
		}
		if v, _ := again.Issues[1].Get("Note"); strings.Contains(v, "\n") {
			t.Fatalf("a field holds a newline: %q", v)
		}
	})
}
