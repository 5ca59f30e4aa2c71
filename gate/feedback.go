package gate

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/findings"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/prompts"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// FeedbackTemplate is the name of the feedback template in prompts (and of
// the user's override in .orchestrator/prompts/).
const FeedbackTemplate = "feedback.md"

// FeedbackData is what the feedback template is executed with: seed 000's
// message, plus what earlier attempts tried.
type FeedbackData struct {
	Attempt     int  // this attempt, from 1
	MaxAttempts int  // attempts allowed
	LastAttempt bool // Attempt >= MaxAttempts: a person takes over after this one
	Exhausted   bool // no attempt is left: a person takes over now

	Failures []FailedGate // the blocking gates that failed, in config order
	Warnings []FailedGate // the advisory gates that failed: worth fixing, not blocking
	Skipped  []string     // the gates not run, since a fail_fast gate failed first

	// Tried lists the failures of earlier attempts, as the caller recorded
	// them, so that the agent does not try the same thing again.
	Tried []Tried
	// Repeated is true when a failure of this attempt came before (some
	// FailedGate.Seen > 0): the agent should change its approach.
	Repeated bool
	// MostSeen is the highest FailedGate.Seen.
	MostSeen int
}

// FailedGate is one gate in the feedback.
type FailedGate struct {
	Name      string
	Command   string
	Outcome   Outcome
	ExitCode  int
	Reason    string   // "exit code 1", "timed out after 5m0s", "command not found (exit 127)"
	Error     string   // the tail of its output, bounded by output.feedback_lines and feedback_bytes
	Cut       bool     // Error is an excerpt: failure lines and the end of the output
	Fence     string   // a code fence longer than any run of backticks in Error
	Hints     []string // the gate's improvement hints
	LogPath   string   // where its whole output is
	Signature string   // its failure signature, when the caller gave one
	// TimeLimit is the gate's timeout ("5m0s") when it timed out: the agent
	// is told the limit and that the end of the output is where it was.
	TimeLimit string
	Seen      int // how many times that signature came in earlier attempts

	// Findings are a review gate's findings by priority, worst first, in
	// place of Error; the groups at fail_on or worse are Blocking.
	Findings []findings.Group
}

// Tried is a failure of earlier attempts.
type Tried struct {
	Gate      string
	Signature string
	Count     int    // how many attempts it came back in
	Failure   string // what it was, in a line: its first failing test and message (signature.Headline); "" if unknown
}

// FeedbackInput is what the caller knows that an evaluation does not.
type FeedbackInput struct {
	Attempt     int
	MaxAttempts int
	Exhausted   bool              // no attempt is left
	Output      config.Output     // excerpt bounds; zero fields take the defaults
	Signatures  map[string]string // gate name → signature of its failure in this attempt
	Tried       []Tried           // earlier attempts' failures with their counts
}

// NewFeedback gathers the data of the feedback for an evaluation.
func NewFeedback(ev *Evaluation, in FeedbackInput) FeedbackData {
	opts := Options{Output: in.Output}
	out := opts.output()
	d := FeedbackData{
		Attempt:     in.Attempt,
		MaxAttempts: in.MaxAttempts,
		LastAttempt: in.MaxAttempts > 0 && in.Attempt >= in.MaxAttempts && !in.Exhausted,
		Exhausted:   in.Exhausted,
		Tried:       in.Tried,
	}
	failed := func(r Result) FailedGate {
		excerpt, cut := FailureExcerpt(r.Output, r.Marks, out.FeedbackLines, out.FeedbackBytes)
		f := FailedGate{
			Name:      r.Name(),
			Command:   r.Gate.Command,
			Outcome:   r.Outcome,
			ExitCode:  r.ExitCode,
			Reason:    r.Reason(),
			Error:     excerpt,
			Cut:       cut || r.Omitted > 0,
			Fence:     fence(excerpt),
			Hints:     r.Gate.Hints,
			LogPath:   r.LogPath,
			Signature: in.Signatures[r.Name()],
		}
		if r.Outcome == TimedOut {
			f.TimeLimit = "its time limit"
			if r.Gate.Timeout > 0 {
				f.TimeLimit = r.Gate.Timeout.String()
			}
		}
		if rev := r.Review; rev != nil && r.Outcome == Fail && len(rev.Findings) > 0 {
			f.Findings = findings.Groups(rev.Findings, rev.FailOn)
			f.Error, f.Cut, f.Fence = "", false, ""
		}
		for _, t := range in.Tried {
			if f.Signature != "" && t.Gate == f.Name && t.Signature == f.Signature {
				f.Seen += t.Count
			}
		}
		if f.Seen > 0 {
			d.Repeated = true
			d.MostSeen = max(d.MostSeen, f.Seen)
		}
		return f
	}
	for _, r := range ev.Failures() {
		d.Failures = append(d.Failures, failed(r))
	}
	for _, r := range ev.AdvisoryFailures() {
		d.Warnings = append(d.Warnings, failed(r))
	}
	for _, r := range ev.Skipped() {
		d.Skipped = append(d.Skipped, r.Name())
	}
	return d
}

// RenderFeedback renders the feedback with the template from prompts, or
// its override in overrideDir.
func RenderFeedback(overrideDir string, d FeedbackData) (string, error) {
	text, err := prompts.Load(overrideDir, FeedbackTemplate)
	if err != nil {
		return "", err
	}
	return d.Render(text)
}

// Render executes a feedback template with d, and returns clean text
// (textclean.Text). Besides the standard
// functions, templates may use short (the first 12 characters of a
// signature), plural (plural 2 "time" is "times") and join (strings.Join).
func (d FeedbackData) Render(text string) (string, error) {
	t, err := template.New(FeedbackTemplate).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("parsing feedback template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("rendering feedback: %w", err)
	}
	// Text, whatever a gate printed or a template holds: it goes to the
	// agent and into files.
	return textclean.Text(b.String()), nil
}

var templateFuncs = template.FuncMap{
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
	"join": strings.Join,
	"plural": func(n int, word string) string {
		if n == 1 {
			return word
		}
		return word + "s"
	},
}

// cleanText is output as text: escapes stripped, carriage-return progress
// resolved, control bytes made visible, valid UTF-8.
func cleanText(s string) string { return textclean.Text(s) }

// Excerpt returns the end of output for a person or an agent to read: at
// most maxLines lines and maxBytes bytes, cut at a line (or else a UTF-8)
// boundary, as clean text (textclean.Text: terminal escapes and
// carriage-return progress removed, control bytes made visible). cut
// reports whether anything was left out.
func Excerpt(output string, maxLines, maxBytes int) (excerpt string, cut bool) {
	s := strings.TrimRight(cleanText(output), "\n")
	whole := len(s)
	if maxLines > 0 {
		n := 0
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] == '\n' {
				if n++; n == maxLines {
					s = s[i+1:]
					break
				}
			}
		}
	}
	if maxBytes > 0 && len(s) > maxBytes {
		s = tailBytes(s, maxBytes)
	}
	return s, len(s) < whole
}

// tailBytes returns the last max bytes of s, from a line start when there is
// one in them, else from a UTF-8 boundary.
func tailBytes(s string, max int) string {
	s = s[len(s)-max:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// failureLine reports whether a line of output names a failure or says
// what it was (signature.FailureLine).
func failureLine(l string) bool { return signature.FailureLine(l) }

// FailureExcerpt returns what of a failing gate's output the agent reads:
// at most maxLines lines and maxBytes bytes, chosen so that the failures are
// always in it, where a tail would lose them above its top. It takes, in
// this order while room is left: every failure line (failureLine: the
// failing tests' names and messages, up to half the lines), the few lines
// after each (the message, the assertion values), then the last lines of
// the output. marks are failure lines from parts of the output that output
// no longer holds (the middle a capture dropped); the ones output lacks come
// first. Left-out runs of lines show as "…". cut reports whether anything
// was left out.
func FailureExcerpt(output string, marks []string, maxLines, maxBytes int) (excerpt string, cut bool) {
	lines, extra := excerptLines(output, marks)
	if maxLines <= 0 {
		maxLines = len(lines)
	}
	prio := excerptPriorities(lines, maxLines)
	if maxBytes > 0 {
		fitBytes(lines, prio, maxBytes)
	}
	s, cut := joinExcerpt(lines, prio)
	if s == "" && len(lines) > 0 && maxBytes > 0 {
		// One line longer than maxBytes: its end.
		return tailBytes(lines[len(lines)-1], maxBytes), true
	}
	return s, cut || extra
}

// excerptLines returns the lines of output, after the marks it lacks and a
// "…" line; extra reports whether there are such marks.
func excerptLines(output string, marks []string) (lines []string, extra bool) {
	text := strings.TrimRight(cleanText(output), "\n")
	if text != "" {
		lines = strings.Split(text, "\n")
	}
	var missing []string
	for _, m := range marks {
		m = cleanText(m)
		if m != "" && !strings.Contains(text, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		lines = append(append(missing, "…"), lines...)
	}
	return lines, len(missing) > 0
}

// What a line of an excerpt is kept for; 0 is left out.
const (
	prioFailure = iota + 1
	prioContext
	prioTail
)

// excerptPriorities chooses at most maxLines lines: the failure lines (up
// to half of them), the few lines after each (up to three quarters in
// all), then the last lines.
func excerptPriorities(lines []string, maxLines int) []int {
	prio := make([]int, len(lines))
	n := 0
	for i, l := range lines {
		if n < max(maxLines/2, 1) && failureLine(l) {
			prio[i] = prioFailure
			n++
		}
	}
	for i := 0; i < len(lines) && n < maxLines*3/4; i++ {
		if prio[i] != prioFailure {
			continue
		}
		for j := i + 1; j < len(lines) && j <= i+3 && n < maxLines*3/4; j++ {
			if prio[j] != 0 || strings.TrimSpace(lines[j]) == "" {
				break
			}
			prio[j] = prioContext
			n++
		}
	}
	for i := len(lines) - 1; i >= 0 && n < maxLines; i-- {
		if prio[i] == 0 {
			prio[i] = prioTail
			n++
		}
	}
	return prio
}

// fitBytes leaves out chosen lines until they hold at most maxBytes: the
// tail's lines from its top, then the context from the bottom, then the
// failure lines from the bottom.
func fitBytes(lines []string, prio []int, maxBytes int) {
	size := 0
	for i, l := range lines {
		if prio[i] != 0 {
			size += len(l) + 1
		}
	}
	for _, p := range []int{prioTail, prioContext, prioFailure} {
		for size > maxBytes {
			k := -1
			for i := range lines {
				if prio[i] == p {
					k = i
					if p == prioTail {
						break
					}
				}
			}
			if k < 0 {
				break
			}
			prio[k] = 0
			size -= len(lines[k]) + 1
		}
	}
}

// joinExcerpt joins the chosen lines, a "…" line for each run left out
// between them; cut reports whether any line was left out.
func joinExcerpt(lines []string, prio []int) (s string, cut bool) {
	var b strings.Builder
	gap := false
	for i, l := range lines {
		if prio[i] == 0 {
			gap, cut = true, true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteString("…\n")
		}
		gap = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n"), cut
}

// fence returns a markdown code fence that the text cannot close.
func fence(text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
