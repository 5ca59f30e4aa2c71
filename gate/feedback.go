package gate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/prompts"
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
	Cut       bool     // Error is only the end of the output
	Fence     string   // a code fence longer than any run of backticks in Error
	Hints     []string // the gate's improvement hints
	LogPath   string   // where its whole output is
	Signature string   // its failure signature, when the caller gave one
	Seen      int      // how many times that signature came in earlier attempts

	// Findings are a review gate's findings by priority, worst first, in
	// place of Error; the groups at fail_on or worse are Blocking.
	Findings []FindingGroup
}

// Tried is a failure of earlier attempts.
type Tried struct {
	Gate      string
	Signature string
	Count     int // how many attempts it came back in
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
		excerpt, cut := Excerpt(r.Output, out.FeedbackLines, out.FeedbackBytes)
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
		if rev := r.Review; rev != nil && r.Outcome == Fail && len(rev.Findings) > 0 {
			f.Findings = GroupFindings(rev.Findings, rev.FailOn)
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

// Render executes a feedback template with d. Besides the standard
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
	return b.String(), nil
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

var ansiEscape = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])`)

// Excerpt returns the end of output for a person or an agent to read: at
// most maxLines lines and maxBytes bytes, cut at a line (or else a UTF-8)
// boundary, with terminal escapes and carriage-return progress removed. cut
// reports whether anything was left out.
func Excerpt(output string, maxLines, maxBytes int) (excerpt string, cut bool) {
	s := ansiEscape.ReplaceAllString(output, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if strings.Contains(s, "\r") {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			// What a terminal would show: the text after the last carriage return.
			if j := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); j >= 0 {
				lines[i] = l[j+1:]
			}
		}
		s = strings.Join(lines, "\n")
	}
	s = strings.TrimRight(s, "\n")
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
		s = s[len(s)-maxBytes:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		} else {
			for len(s) > 0 && !utf8.RuneStart(s[0]) {
				s = s[1:]
			}
		}
	}
	return s, len(s) < whole
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
