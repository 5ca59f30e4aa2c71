package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/rogpeppe/go-internal/testscript"
)

// The user's documentation: README.md and docs/*.md at the module's root.
const docsRoot = "../.."

// readDocs returns the text of README.md and of every file of docs/, by
// their paths from the module's root.
func readDocs(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(docsRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{}
	for _, name := range append([]string{filepath.Join(docsRoot, "README.md")}, names...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(docsRoot, name)
		docs[filepath.ToSlash(rel)] = string(b)
	}
	return docs
}

var codeSpan = regexp.MustCompile("`+([^`]+)`+")

// codeSpans returns the text of every code span of the documentation, a
// table's escaped \| as |.
func codeSpans(docs map[string]string) []string {
	var spans []string
	for _, text := range docs {
		for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
			spans = append(spans, strings.ReplaceAll(m[1], `\|`, "|"))
		}
	}
	return spans
}

// usageSubcommands returns the subcommands a command's usage shows: the word
// after "orchestrate NAME" in its Usage lines, or each of a|b|c.
func usageSubcommands(c *command) []string {
	var subs []string
	word := regexp.MustCompile(`^[a-z][a-z-]*(\|[a-z][a-z-]*)*$`)
	// The Usage block: its first line, to the first blank line.
	usage, _, _ := strings.Cut(c.usage, "\n\n")
	for _, line := range strings.Split(usage, "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "Usage:"))
		if len(fields) < 3 || fields[0] != "orchestrate" || fields[1] != c.name || !word.MatchString(fields[2]) {
			continue
		}
		for _, s := range strings.Split(fields[2], "|") {
			if !slices.Contains(subs, s) {
				subs = append(subs, s)
			}
		}
	}
	return subs
}

// TestDocsCommands: every command and subcommand is documented, in a code
// span that begins with it ("`run", "`orchestrate issue add", "`session
// start|show").
func TestDocsCommands(t *testing.T) {
	spans := codeSpans(readDocs(t))
	if len(commands) < 20 {
		t.Fatalf("%d commands", len(commands))
	}
	for _, c := range commands {
		name := regexp.QuoteMeta(c.name)
		if !slices.ContainsFunc(spans, regexp.MustCompile(`^(orchestrate )?`+name+`\b`).MatchString) {
			t.Errorf("orchestrate %s: not in README.md or docs/", c.name)
		}
		for _, sub := range usageSubcommands(c) {
			re := regexp.MustCompile(`^(orchestrate )?` + name + ` ([a-z-]+\|)*` + regexp.QuoteMeta(sub) + `\b`)
			if !slices.ContainsFunc(spans, re.MatchString) {
				t.Errorf("orchestrate %s %s: not in README.md or docs/", c.name, sub)
			}
		}
	}
}

func TestSubcommands(t *testing.T) {
	for name, want := range map[string][]string{
		"issue":   {"add", "show", "set", "retry", "skip", "resolve"},
		"session": {"start", "show"},
		"hook":    {"stop", "session-start"},
		"run":     nil,
	} {
		if got := usageSubcommands(lookup(name)); !slices.Equal(got, want) {
			t.Errorf("subcommands of %s = %q, want %q", name, got, want)
		}
	}
}

// TestDocsFiles runs the scenarios of testdata/docs, whose documented DIR
// checks that every file orchestrate wrote in DIR is documented.
func TestDocsFiles(t *testing.T) {
	spans := codeSpans(readDocs(t))
	testscript.Run(t, testscript.Params{
		Dir: "testdata/docs",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"documented": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: documented DIR")
				}
				if missing := undocumented(ts, ts.MkAbs(args[0]), spans); missing != nil {
					ts.Fatalf("not in README.md or docs/: %s", strings.Join(missing, ", "))
				}
			},
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("ORCHESTRATE_NOW", "2024-12-13T10:00:00Z")
			env.Setenv("ORCHESTRATE_NO_BACKGROUND", "1")
			return nil
		},
	})
}

// undocumented returns the files and directories in dir (a workspace) that
// no code span of the documentation names. A code span names a file as
// `name`, `dir/name`, or with placeholders: `<gate>.log` (any text for
// <…>), `prompt-N.md` (any number for a capital N); the files of a run's
// directory by their names in it.
func undocumented(ts *testscript.TestScript, dir string, spans []string) []string {
	var patterns []*regexp.Regexp
	for _, s := range spans {
		if p := filePattern(s); p != nil {
			patterns = append(patterns, p)
		}
	}
	var missing []string
	check := func(rel string) {
		if !slices.ContainsFunc(patterns, func(p *regexp.Regexp) bool { return p.MatchString(rel) }) {
			missing = append(missing, rel)
		}
	}
	entries, err := os.ReadDir(dir)
	ts.Check(err)
	for _, e := range entries {
		if e.IsDir() {
			check(e.Name() + "/")
		} else {
			check(e.Name())
		}
		if e.Name() != "runs" {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(dir, "runs"))
		ts.Check(err)
		for _, r := range runs {
			check("runs/" + r.Name() + "/")
			files, err := os.ReadDir(filepath.Join(dir, "runs", r.Name()))
			ts.Check(err)
			for _, f := range files {
				check(f.Name())
			}
		}
	}
	return missing
}

// filePattern turns a code span that may name a file into a pattern that
// matches the names it stands for, or returns nil.
func filePattern(span string) *regexp.Regexp {
	span = strings.TrimPrefix(span, ".orchestrator/")
	if span == "" || strings.ContainsFunc(span, unicode.IsSpace) {
		return nil
	}
	var re strings.Builder
	for i := 0; i < len(span); i++ {
		switch c := span[i]; {
		case c == '<':
			end := strings.IndexByte(span[i:], '>')
			if end < 0 {
				return nil
			}
			re.WriteString(`[^/]+`)
			i += end
		case c == 'N' && (i == 0 || !isUpper(span[i-1])) && (i+1 == len(span) || !isLetter(span[i+1])):
			re.WriteString(`[0-9]+`)
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return regexp.MustCompile("^" + re.String() + "$")
}

func isUpper(c byte) bool  { return 'A' <= c && c <= 'Z' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || isUpper(c) }

func TestFilePattern(t *testing.T) {
	for _, tc := range []struct {
		span, name string
		match      bool
	}{
		{"history.csv", "history.csv", true},
		{"history.csv", "historyxcsv", false},
		{".orchestrator/history.csv", "history.csv", true},
		{"<gate>.log", "unit.log", true},
		{"<gate>.loopN.log", "unit.loop12.log", true},
		{"<gate>.loopN.log", "unit.loop.log", false},
		{"prompt-N.md", "prompt-3.md", true},
		{"runs/<run-id>/", "runs/20241213-100000-82e04f/", true},
		{"runs/hook-<session>/", "runs/hook-s1/", true},
		{"runs/hook-<session>/", "runs/s1/", false},
		{"NAME.md", "x.md", false},
		{"ISSUE-N", "ISSUE-3", true},
		{"runs/", "runs/", true},
	} {
		p := filePattern(tc.span)
		if got := p != nil && p.MatchString(tc.name); got != tc.match {
			t.Errorf("filePattern(%q) matches %q: %v, want %v", tc.span, tc.name, got, tc.match)
		}
	}
	if p := filePattern("orchestrate run"); p != nil {
		t.Errorf("a span with a space: %v", p)
	}
}

// TestDocsLinks: every relative link of README.md and docs/ leads to a
// file of the repository and, with a #fragment, to a heading in it.
func TestDocsLinks(t *testing.T) {
	docs := readDocs(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for name, text := range docs {
		for _, m := range link.FindAllStringSubmatch(stripCode(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(name), file))
			}
			if _, err := os.Stat(filepath.Join(docsRoot, path)); err != nil {
				t.Errorf("%s: link %s: no file %s", name, target, path)
				continue
			}
			if frag == "" {
				continue
			}
			targetText, ok := docs[path]
			if !ok {
				t.Errorf("%s: link %s: a #fragment into %s, not a page of the documentation", name, target, path)
				continue
			}
			if !slices.Contains(anchors(targetText), frag) {
				t.Errorf("%s: link %s: no heading %q in %s", name, target, frag, path)
			}
		}
	}
}

// stripCode removes fenced code blocks, where a ](…) is not a link.
func stripCode(text string) string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// anchors returns the anchors GitHub gives the headings of a markdown text:
// lower case, without punctuation, spaces as hyphens; a repeated one gets
// -1, -2….
func anchors(text string) []string {
	var list []string
	seen := map[string]int{}
	for _, line := range strings.Split(stripCode(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var a strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				a.WriteRune(r)
			case r == ' ':
				a.WriteByte('-')
			}
		}
		anchor := a.String()
		if n := seen[a.String()]; n > 0 {
			anchor += "-" + strconv.Itoa(n)
		}
		seen[a.String()]++
		list = append(list, anchor)
	}
	return list
}

func TestAnchors(t *testing.T) {
	text := "# orchestrate\n## The report: `analytics.html`\n```sh\n# a comment\n```\n### Turning auto-retry off: `no_auto_retry`\n## Commands\n## Commands\n"
	want := []string{"orchestrate", "the-report-analyticshtml", "turning-auto-retry-off-no_auto_retry", "commands", "commands-1"}
	if got := anchors(text); !slices.Equal(got, want) {
		t.Errorf("anchors = %q, want %q", got, want)
	}
}
