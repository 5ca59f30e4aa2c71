package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/findings"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// The environment of a review gate's commands, besides its env.
const (
	EnvReviewDimension = "ORCHESTRATE_REVIEW_DIMENSION" // the dimension; "synthesis" for the synthesis
	EnvReviewPrompt    = "ORCHESTRATE_REVIEW_PROMPT"    // the whole prompt: what to look for and how to answer
	EnvReviewDiff      = "ORCHESTRATE_REVIEW_DIFF"      // the file holding the diff (also on the reviewers' stdin)
	EnvReviewBase      = "ORCHESTRATE_REVIEW_BASE"      // diff_base
	EnvReviewFailOn    = "ORCHESTRATE_REVIEW_FAIL_ON"   // fail_on
)

// DimensionPlaceholder in a review gate's command is replaced by the
// dimension's name (a word of lower-case letters, digits, - and _).
const DimensionPlaceholder = "{{dimension}}"

// GeneralDimension names the one reviewer of a review gate without dimensions.
const GeneralDimension = "general"

// SynthesisDimension is ORCHESTRATE_REVIEW_DIMENSION for the synthesis command.
const SynthesisDimension = "synthesis"

// maxReviewerStdout bounds what is read of a reviewer's stdout: findings
// are short, and more than this is not a review.
const maxReviewerStdout = 8 << 20

// Review is what a review gate found.
type Review struct {
	FailOn    findings.Priority
	Base      string             // diff_base
	DiffBytes int64              // the size of the diff reviewed
	DiffPath  string             // where the diff is kept; "" when not kept
	Findings  []findings.Finding // the final set, sorted worst first
	Reviewers []Reviewer         // one per dimension, then the synthesis if it ran
}

// Blocking returns the findings at fail_on or worse: the ones that fail the gate.
func (r *Review) Blocking() []findings.Finding { return findings.AtOrAbove(r.Findings, r.FailOn) }

// Reviewer is the run of one review command.
type Reviewer struct {
	Name     string // the dimension, or "synthesis"
	Outcome  Outcome
	ExitCode int
	Err      string // why it did not give findings
	Findings int
	Duration time.Duration
	LogPath  string
	output   string // head and tail of its output, for the gate's
}

// failOnOf returns a review gate's fail_on as a Priority.
func failOnOf(g config.Gate) findings.Priority {
	if p, ok := findings.ParsePriority(g.FailOn); ok {
		return p
	}
	return findings.P1
}

var priorityGuide = `Priorities:
- P0 critical: must fix (security holes, data loss, crashes, wrong results on common input)
- P1 major: should fix (bugs on edge cases, missing error handling, races, leaks)
- P2 minor: nice to fix (unclear code, small inefficiencies, missing tests of edge cases)
- P3 nit: optional (naming, style, wording)`

// reviewOnly tells a reviewer (and the synthesis) what it may not do: it
// reviews, another agent fixes.
var reviewOnly = `This is a review only: do not edit, create or delete any file, and run nothing that changes the repository. Another agent fixes what you report.`

var answerFormat = `Print your findings on stdout as JSON lines, one object per finding and nothing else:
{"priority": "P1", "file": "path/to/file.go", "line": 42, "issue": "what is wrong", "suggestion": "how to fix it"}
If you find nothing, print exactly: no findings`

// ReviewerPrompt returns the prompt a reviewer of dimension d gets
// (ORCHESTRATE_REVIEW_PROMPT): what to look for, the gate's own prompt, the
// priorities, and the answer's format.
func ReviewerPrompt(g config.Gate, d config.Dimension) string {
	var b strings.Builder
	what := "for " + d.Name + " problems"
	if d.Name == GeneralDimension {
		what = "as a careful senior engineer would"
	}
	fmt.Fprintf(&b, "You are reviewing a change to this repository %s. The diff (git diff %s, new files included) is on your stdin, and in the file $%s.\n%s\n\n",
		what, g.DiffBase, EnvReviewDiff, reviewOnly)
	if d.Prompt != "" {
		b.WriteString(d.Prompt + "\n\n")
	}
	if g.Prompt != "" {
		b.WriteString(g.Prompt + "\n\n")
	}
	fmt.Fprintf(&b, "Report only real problems in the code the change adds or alters, each once, with the file and line in the new version.\n%s\nThe review fails on findings at %s or worse.\n\n%s\n", priorityGuide, failOnOf(g), answerFormat)
	return b.String()
}

// SynthesisPrompt returns the prompt of a review gate's synthesis command.
func SynthesisPrompt(g config.Gate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the last step of a code review. Your stdin holds the findings of several reviewers, one per dimension, as JSON lines; the diff they reviewed (git diff %s) is in the file $%s.\n\n", g.DiffBase, EnvReviewDiff)
	b.WriteString("Merge the findings that describe the same problem, drop the ones that are wrong or not about the change, and give each the priority it deserves.\n" + reviewOnly + "\n")
	if g.Prompt != "" {
		b.WriteString("\n" + g.Prompt + "\n")
	}
	fmt.Fprintf(&b, "\n%s\nThe review fails on findings at %s or worse.\n\n%s\n", priorityGuide, failOnOf(g), answerFormat)
	return b.String()
}

// runReview runs a review gate: the diff, the reviewers in parallel, the
// synthesis, and the verdict from the findings.
func runReview(ctx context.Context, g config.Gate, opts *Options, logPath string) (Result, error) {
	rr := &reviewRun{g: g, opts: opts, r: Result{Gate: g, ExitCode: -1, Started: opts.now(), LogPath: logPath}}
	rr.rev = &Review{FailOn: failOnOf(g), Base: g.DiffBase}
	if rr.rev.Base == "" {
		rr.rev.Base = config.DefaultDiffBase
	}
	rr.r.Review = rr.rev
	if ctx.Err() != nil {
		rr.r.LogPath = ""
		return rr.finish(Errored, "canceled before it started", "")
	}
	dir, err := gateDir(g, opts)
	if err != nil {
		rr.r.LogPath = ""
		return rr.finish(Errored, err.Error(), "")
	}
	rr.dir = dir
	// One deadline for the whole gate: the diff, the reviewers, the synthesis.
	rr.deadline = time.Now().Add(g.Timeout)
	rr.timeoutMsg = fmt.Sprintf("timed out after %s", g.Timeout)

	// Where the diff and the reviewers' logs go: beside the gate's log.
	rr.stem = strings.TrimSuffix(logPath, ".log")
	if logPath == "" {
		tmp, err := os.MkdirTemp("", "orchestrate-review-*")
		if err != nil {
			return rr.finish(Errored, fmt.Sprintf("making a directory for the diff: %v", err), "")
		}
		defer os.RemoveAll(tmp)
		rr.stem = filepath.Join(tmp, "review")
	} else {
		rr.rev.DiffPath = rr.stem + ".diff"
	}
	if res, done, err := rr.diff(ctx); done {
		return res, err
	}
	found := rr.runReviewers(ctx)
	if bad := firstBad(rr.rev.Reviewers); bad != nil {
		rr.r.ExitCode = bad.ExitCode
		return rr.finish(bad.Outcome, fmt.Sprintf("reviewer %q %s", bad.Name, bad.Err), reviewerOutput(rr.rev.Reviewers))
	}
	merged := findings.Merge(found...)
	if g.Synthesis != "" && len(merged) > 0 {
		var res Result
		var done bool
		if merged, res, done, err = rr.synthesize(ctx, merged); done {
			return res, err
		}
	}
	rr.rev.Findings = merged
	blocking := rr.rev.Blocking()
	if len(blocking) == 0 {
		rr.r.ExitCode = 0
		return rr.finish(Pass, "", findingsOutput(merged))
	}
	rr.r.ExitCode = 1
	return rr.finish(Fail, countFindings(blocking, rr.rev.FailOn), findingsOutput(merged))
}

// reviewRun is a review gate as it runs.
type reviewRun struct {
	g          config.Gate
	opts       *Options
	r          Result
	rev        *Review
	dir        string    // where the reviewers run
	deadline   time.Time // for the whole gate
	timeoutMsg string
	stem       string // of the diff's and the reviewers' files: stem.diff, stem.reviewer-NAME.log, …
	logErr     error  // the first error writing a reviewer's log
}

// finish gives the gate its outcome and writes its log.
func (rr *reviewRun) finish(o Outcome, msg, output string) (Result, error) {
	r := &rr.r
	r.Outcome, r.Err, r.Output = o, msg, output
	r.OutputBytes = int64(len(output))
	r.Duration = rr.opts.now().Sub(r.Started)
	err := writeReviewLog(r)
	return *r, firstErr(rr.logErr, err)
}

// remaining is the time left to the gate's deadline, for a reviewer's
// timeout; 0 (none) when the gate has no timeout.
func (rr *reviewRun) remaining() time.Duration {
	if rr.g.Timeout <= 0 {
		return 0
	}
	return max(time.Until(rr.deadline), time.Millisecond)
}

func (rr *reviewRun) diffPath() string { return rr.stem + ".diff" }

// diff writes the diff under review; done when the gate ends with it: an
// error, or a pass when there is nothing to review.
func (rr *reviewRun) diff(ctx context.Context) (res Result, done bool, err error) {
	dctx, cancel := context.WithCancel(ctx)
	if rr.g.Timeout > 0 {
		dctx, cancel = context.WithDeadline(ctx, rr.deadline)
	}
	err = writeDiff(dctx, rr.opts, rr.rev.Base, rr.diffPath())
	diffTimedOut := errors.Is(dctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	switch {
	case err != nil && diffTimedOut:
		res, err = rr.finish(TimedOut, rr.timeoutMsg+" getting the diff", "")
		return res, true, err
	case err != nil:
		res, err = rr.finish(Errored, "could not get the change under review: "+err.Error(), "")
		return res, true, err
	}
	if info, err := os.Stat(rr.diffPath()); err == nil {
		rr.rev.DiffBytes = info.Size()
	}
	if rr.rev.DiffBytes == 0 {
		rr.r.ExitCode = 0
		res, err = rr.finish(Pass, "", fmt.Sprintf("nothing to review: no change against %s\n", rr.rev.Base))
		return res, true, err
	}
	return Result{}, false, nil
}

// env is a reviewer's environment: the gate's, and what it reviews.
func (rr *reviewRun) env(dimension, prompt string) map[string]string {
	e := map[string]string{}
	for k, v := range rr.g.Env {
		e[k] = v
	}
	e[EnvReviewDimension] = dimension
	e[EnvReviewPrompt] = prompt
	e[EnvReviewDiff] = rr.diffPath()
	e[EnvReviewBase] = rr.rev.Base
	e[EnvReviewFailOn] = rr.rev.FailOn.String()
	e[EnvChild] = "1"
	return e
}

// runReviewers runs a reviewer per dimension, in parallel, and returns
// what each found; their results go to the review.
func (rr *reviewRun) runReviewers(ctx context.Context) [][]findings.Finding {
	g := rr.g
	dims := g.Dimensions
	if len(dims) == 0 {
		dims = []config.Dimension{{Name: GeneralDimension}}
	}
	reviewers := make([]Reviewer, len(dims))
	found := make([][]findings.Finding, len(dims))
	var wg sync.WaitGroup
	var logMu sync.Mutex
	for i, d := range dims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sp := spec{
				command: strings.ReplaceAll(g.Command, DimensionPlaceholder, d.Name),
				dir:     rr.dir, env: rr.env(d.Name, ReviewerPrompt(g, d)),
				timeout: rr.remaining(), timeoutMsg: rr.timeoutMsg, stdin: rr.diffPath(),
			}
			var err error
			log := rr.stem + ".reviewer-" + safeName(d.Name) + ".log"
			reviewers[i], found[i], err = runReviewer(ctx, d.Name, sp, rr.opts, log)
			if unreadable(reviewers[i]) && ctx.Err() == nil {
				// An answer that cannot be read is asked for once more: a
				// reviewer's slip is not the change's failure.
				first := reviewers[i].Err
				sp.timeout = rr.remaining()
				reviewers[i], found[i], err = runReviewer(ctx, d.Name, sp, rr.opts, strings.TrimSuffix(log, ".log")+".again.log")
				if again := reviewers[i].Err; unreadable(reviewers[i]) {
					reviewers[i].Err = strings.Replace(again, "printed no findings", "printed no findings twice", 1)
					if again != first {
						reviewers[i].Err += " (the first time: " + strings.TrimPrefix(first, "printed no findings: ") + ")"
					}
				}
			}
			if err != nil {
				logMu.Lock()
				rr.logErr = err
				logMu.Unlock()
			}
		}()
	}
	wg.Wait()
	rr.rev.Reviewers = reviewers
	return found
}

// synthesize runs the synthesis command on the reviewers' findings and
// returns its findings; done when the gate ends with it, in an error.
func (rr *reviewRun) synthesize(ctx context.Context, merged []findings.Finding) (_ []findings.Finding, res Result, done bool, err error) {
	in := rr.stem + ".findings.jsonl"
	if err := os.WriteFile(in, findings.JSONLines(merged), 0o644); err != nil {
		res, err = rr.finish(Errored, fmt.Sprintf("writing the findings for the synthesis: %v", err), "")
		return nil, res, true, err
	}
	sp := spec{
		command: strings.ReplaceAll(rr.g.Synthesis, DimensionPlaceholder, SynthesisDimension),
		dir:     rr.dir, env: rr.env(SynthesisDimension, SynthesisPrompt(rr.g)),
		timeout: rr.remaining(), timeoutMsg: rr.timeoutMsg, stdin: in,
	}
	syn, fs, err := runReviewer(ctx, SynthesisDimension, sp, rr.opts, rr.stem+".synthesis.log")
	rr.logErr = firstErr(rr.logErr, err)
	rr.rev.Reviewers = append(rr.rev.Reviewers, syn)
	if syn.Outcome != Pass {
		rr.r.ExitCode = syn.ExitCode
		res, err = rr.finish(syn.Outcome, "synthesis "+syn.Err, reviewerOutput(rr.rev.Reviewers))
		return nil, res, true, err
	}
	return findings.Merge(fs), Result{}, false, nil
}

// writeDiff writes the diff under review to path.
func writeDiff(ctx context.Context, opts *Options, base, path string) error {
	f, err := fsx.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = Diff(ctx, opts.RepoRoot, base, opts.DiffExclude, false, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runReviewer runs one review command and reads its findings. The error is
// one writing its log.
func runReviewer(ctx context.Context, name string, sp spec, opts *Options, logPath string) (Reviewer, []findings.Finding, error) {
	stdout := &limitedBuffer{max: maxReviewerStdout}
	sp.stdout = stdout
	res := Result{ExitCode: -1, Started: opts.now(), LogPath: logPath}
	logErr := execute(ctx, &res, sp, opts, logPath)
	rv := Reviewer{Name: name, Outcome: res.Outcome, ExitCode: res.ExitCode, Err: res.Err, Duration: res.Duration, LogPath: res.LogPath, output: res.Output}
	switch {
	case res.Outcome == Fail && res.Signal != "":
		rv.Outcome, rv.Err = Errored, "was killed by signal "+res.Signal
		return rv, nil, logErr
	case res.Outcome == Fail:
		rv.Outcome, rv.Err = Errored, fmt.Sprintf("failed: exit code %d", res.ExitCode)
		return rv, nil, logErr
	case res.Outcome == TimedOut:
		return rv, nil, logErr
	case res.Outcome != Pass:
		rv.Err = "failed: " + res.Err
		return rv, nil, logErr
	case stdout.dropped > 0:
		rv.Outcome, rv.Err = Errored, fmt.Sprintf("printed more than %d MiB on stdout: that is not a review", maxReviewerStdout>>20)
		return rv, nil, logErr
	}
	fs, err := findings.Parse(stdout.buf)
	if err != nil {
		rv.Outcome, rv.Err = Errored, "printed no findings: "+err.Error()
		return rv, nil, logErr
	}
	for i := range fs {
		fs[i].Dimensions = []string{name}
	}
	rv.Findings = len(fs)
	return rv, fs, logErr
}

// unreadable reports whether a reviewer ran and answered, but with neither
// findings nor "no findings".
func unreadable(rv Reviewer) bool {
	return rv.Outcome == Errored && strings.HasPrefix(rv.Err, "printed no findings")
}

// firstBad returns the reviewer that decides a review's failure: the first
// that timed out, else the first that failed.
func firstBad(rs []Reviewer) *Reviewer {
	for i := range rs {
		if rs[i].Outcome == TimedOut {
			return &rs[i]
		}
	}
	for i := range rs {
		if rs[i].Outcome != Pass {
			return &rs[i]
		}
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// reviewerOutput is a failed review's output: each reviewer's, the ones
// that went wrong last, so that the end of it (what the feedback shows)
// says what went wrong.
func reviewerOutput(rs []Reviewer) string {
	var good, bad bytes.Buffer
	for _, rv := range rs {
		b := &good
		status := fmt.Sprintf("%d %s", rv.Findings, plural(rv.Findings, "finding"))
		if rv.Outcome != Pass {
			b, status = &bad, rv.Err
		}
		fmt.Fprintf(b, "── reviewer %s: %s\n", rv.Name, status)
		if rv.output != "" {
			b.WriteString(rv.output)
			if !strings.HasSuffix(rv.output, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return good.String() + bad.String()
}

func findingsOutput(fs []findings.Finding) string {
	if len(fs) == 0 {
		return "no findings\n"
	}
	return findings.Markdown(fs)
}

// countFindings says how many findings fail a review: "2 findings at P1 or
// worse (1 P0, 1 P1)".
func countFindings(fs []findings.Finding, failOn findings.Priority) string {
	n := map[findings.Priority]int{}
	for _, f := range fs {
		n[f.Priority]++
	}
	var parts []string
	for p := findings.P0; p <= failOn; p++ {
		if n[p] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[p], p))
		}
	}
	at := fmt.Sprintf("at %s or worse", failOn)
	if failOn == findings.P0 {
		at = "at P0"
	}
	return fmt.Sprintf("%d %s %s (%s)", len(fs), plural(len(fs), "finding"), at, strings.Join(parts, ", "))
}

// writeReviewLog writes the gate's log: the reviewers, each with its log,
// and the verdict with the findings.
func writeReviewLog(r *Result) error {
	if r.LogPath == "" {
		return nil
	}
	rev := r.Review
	var b strings.Builder
	fmt.Fprintf(&b, "review gate %q: the diff against %s", r.Name(), rev.Base)
	if rev.DiffPath != "" {
		fmt.Fprintf(&b, " (%d bytes, in %s)", rev.DiffBytes, filepath.Base(rev.DiffPath))
	}
	b.WriteString("\n")
	for _, rv := range rev.Reviewers {
		status := fmt.Sprintf("%d %s", rv.Findings, plural(rv.Findings, "finding"))
		if rv.Outcome != Pass {
			status = rv.Err
		}
		fmt.Fprintf(&b, "reviewer %s: %s, %.1fs", rv.Name, status, rv.Duration.Seconds())
		if rv.LogPath != "" {
			fmt.Fprintf(&b, " (its output: %s)", filepath.Base(rv.LogPath))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "outcome: %s", r.Outcome)
	if r.Err != "" {
		b.WriteString(": " + r.Err)
	}
	b.WriteString("\n")
	if r.Output != "" {
		b.WriteString("\n" + r.Output)
	}
	if err := fsx.WriteFile(r.LogPath, []byte(b.String()), 0o644); err != nil {
		r.LogPath = ""
		return err
	}
	return nil
}

// EnvChild is set ("1") for every process orchestrate launches as an agent
// under orchestrate run, a reviewer or a synthesis: orchestrate's own hooks in
// it (orchestrate hook stop) let it stop at once, so that no gate runs, and no
// reviewer is launched, from inside one that orchestrate launched.
const EnvChild = "ORCHESTRATE_CHILD"
