package loop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/findings"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/suggest"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/results"
)

// GateRun is what one evaluation of the gates did.
type GateRun struct {
	Evaluation *gate.Evaluation
	Dir        string         // runs/<run-id>/: logs, gate-results.json, summary.md
	Attempts   []gate.Attempt // this one last
	// Issues maps each failed auto-retry gate to the issue its failure was
	// filed or recorded against: for a gate whose failing tests are filed
	// one by one, the first of them.
	Issues map[string]Added
	// Filed maps each failed auto-retry gate whose failing tests were filed
	// one by one to every issue they were filed or recorded against, in
	// order (see IssuesOf).
	Filed    map[string][]Added
	Resolved []string // the issues of gates that passed, resolved
	Feedback string   // for the agent, when a blocking gate failed
	// Output is the configuration's output settings the gates ran with,
	// for the reports made of them (JUnit, annotations).
	Output config.Output

	// AwaitingApproval names the human gates that wait for a person, in
	// config order, and Approvals the request of each (gate → issue ID).
	// A gate awaits approval only when every other blocking gate passed, so
	// when this is not empty and Evaluation.Failures() is, the change is
	// done but for a person's word: the agent has nothing to fix, and
	// Feedback is empty. See Workspace.WaitApprovals.
	AwaitingApproval []string
	Approvals        map[string]string

	// Waiting maps each failed auto-retry gate whose failure already
	// belongs to an issue that waits for a person (stuck, halted or
	// exhausted), by its signature, to that issue: such a failure is not
	// filed again, and that issue's evidence stays as it is. Every driver
	// (run, gate, the Stop hook) follows this one rule.
	Waiting map[string]IssueRef

	// ReviewerErrors says, for each review gate whose reviewer could not
	// be run or read (twice), why: not the agent's to fix, so no issue is
	// filed for it; a person is told.
	ReviewerErrors []string

	// Reports are the blocking gates' test-level results (see reportsOf).
	Reports []results.Report
	// Verdict, for an attempt at a claimed issue judged against a
	// baseline (GateOptions.Baseline), is what it comes to; nil when the
	// attempt was not judged by its issue.
	Verdict *results.Verdict
	// counted are the failures that count against the judged issue.
	counted []results.Failed
}

// OnlyReviewerErrors reports whether every blocking failure is a
// reviewer's error: the agent has nothing to fix.
func (gr *GateRun) OnlyReviewerErrors() bool {
	fs := gr.Evaluation.Failures()
	if len(gr.ReviewerErrors) == 0 || len(fs) == 0 {
		return false
	}
	for i := range fs {
		if !reviewerError(&fs[i]) {
			return false
		}
	}
	return true
}

// reviewerError reports whether a review gate's result is its reviewers'
// error (unreadable twice, a failed or killed reviewer, a synthesis that
// went wrong), not findings about the change.
func reviewerError(r *gate.Result) bool {
	return r.Gate.IsReview() && r.Outcome == gate.Errored
}

// Failed reports whether a blocking gate failed, or, for an attempt
// judged by its issue, whether the verdict is not a pass: the agent has
// work to do.
func (gr *GateRun) Failed() bool {
	if gr.Verdict != nil {
		return !gr.Verdict.Pass
	}
	return len(gr.Evaluation.Failures()) > 0
}

// GateOptions tunes RunGates.
type GateOptions struct {
	Names    []string         // the gates to run; all when empty
	Progress func(gate.Event) // live progress, or nil
	// Previous are the earlier attempts of this fix cycle, for the
	// artifacts; when nil, they are read back from the run's
	// gate-results.json, unless its last attempt passed (a new cycle).
	Previous []gate.Attempt
	// AgentFixes is what the agent said it changed before this attempt,
	// when known: agent_fixes in gate-results.json, "Agent Action" in
	// summary.md.
	AgentFixes string
	// NoRecord evaluates and reports without touching the queue or the
	// history: no issue filed, recorded or resolved, no approval request
	// made (orchestrate gate --no-record, for CI). The artifacts in
	// runs/<run-id>/ and the feedback are still written.
	NoRecord bool
	Tag      map[string]string // extra fields for issues filed (a Stop hook's session)
	// Issue, when set, is the issue an agent claimed (run --agents): the
	// blocking gates' failures are recorded against it, as one failure,
	// instead of filing issues of their own, and a passing gate resolves
	// nothing (the merge does). With NoRecord too, the gates' history rows
	// are written but the failure is not recorded: the merge train records
	// it once it knows the failure is the issue's own.
	Issue string
	// Dir names the artifacts' directory under runs/ (one path element);
	// "" is the run's, runs/<run-id>/.
	Dir string
	// Baseline, with Issue, gives the results of the commit the work
	// started from, once the gates have run (it may wait for them while
	// they are taken): the attempt is judged by its issue against them
	// (see results.Judge), and only the failures that count against the
	// issue are recorded and fed back.
	Baseline func(context.Context) (*BaseResults, error)
}

// RunGates runs the configured gates once. A failing gate with auto_retry
// files an issue, or records the failure against the open issue it filed
// before; a passing gate resolves the issue it filed. The artifacts go to
// runs/<run-id>/, a row per gate to history.csv, and on a blocking failure
// the feedback for the agent is rendered from prompts/feedback.md (or the
// user's .orchestrator/prompts/feedback.md) and kept in
// runs/<run-id>/feedback.md.
//
// A review gate's failure is filed with its findings at fail_on or worse
// as the failure's output (findings.SignatureText: no line numbers, no
// suggestions), so that the same findings twice are the same failure; the
// whole findings go to the issue's Review Findings section. A human gate
// that awaits approval files an approval request (see TypeApproval), or
// brings the open one up to date; a rejected one fails with the person's
// comment and its request is closed.
func (w Workspace) RunGates(ctx context.Context, now func() time.Time, opt GateOptions) (*GateRun, error) {
	s, err := w.evaluateGates(ctx, now, opt)
	if err != nil {
		return nil, err
	}
	return s.gr, s.finish(ctx, direct{w})
}

// evaluateGates runs the gates, the first half of RunGates: nothing is
// filed, recorded or resolved yet (see gateStep.finish).
func (w Workspace) evaluateGates(ctx context.Context, now func() time.Time, opt GateOptions) (*gateStep, error) {
	cfg, err := w.Config()
	if err != nil {
		return nil, err
	}
	gates, err := selectGates(cfg, opt.Names)
	if err != nil {
		return nil, err
	}
	run := w.runID()
	gr, err := w.newGateRun(run, opt.Dir)
	if err != nil {
		return nil, err
	}
	gr.Output = cfg.Output
	humans, err := w.evaluate(ctx, now, cfg, gates, gr, opt)
	if err != nil {
		return nil, err
	}
	gr.Reports = reportsOf(gr.Evaluation)
	if opt.Issue != "" && opt.Baseline != nil {
		base, err := opt.Baseline(ctx)
		if err != nil {
			return nil, fmt.Errorf("the baseline %s is judged against: %w", opt.Issue, err)
		}
		if err := w.judgeClaimed(direct{w}, gr, opt.Issue, base.Reports); err != nil {
			return nil, err
		}
	}
	return &gateStep{w: w, now: now, cfg: cfg, opt: opt, gr: gr, run: run, humans: humans, sigs: map[string]string{}}, nil
}

// finish files, records or resolves each gate's issue through tx, and
// writes the artifacts, the second half of RunGates. The rows of the
// issues it files, records and resolves go to the history with the gates'
// own, through tx, in one append (one sync) at the end: also when ctx
// ended, since an interrupted step still says what it did. Each comes
// after the write of the queue it tells of, as before.
func (s *gateStep) finish(ctx context.Context, tx queueTx) (err error) {
	var held []analytics.Event
	s.tx = heldRows{queueTx: tx, rows: &held}
	defer func() {
		if herr := appendHeld(ctx, tx, held); err == nil {
			err = herr
		}
	}()
	s.feedbackBefore = s.w.lastFeedback()
	events, err := s.recordResults(ctx)
	if err != nil {
		return err
	}
	held = append(held, events...)
	return s.writeArtifacts()
}

// appendHeld gives tx the history rows a gateStep held.
func appendHeld(ctx context.Context, tx queueTx, held []analytics.Event) error {
	if len(held) == 0 {
		return nil
	}
	// In time order: the rows of the issues come as their writes did, the
	// gates' as each ended.
	slices.SortStableFunc(held, func(a, b analytics.Event) int { return a.Time.Compare(b.Time) })
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return tx.history(hctx, held...)
}

// newGateRun makes the GateRun of an evaluation and its artifacts'
// directory: runs/<run>/, or runs/<dir>/ when dir is given.
func (w Workspace) newGateRun(run, dir string) (*GateRun, error) {
	if dir == "" {
		dir = run
	} else if dir != filepath.Base(dir) || dir == "." || dir == ".." {
		return nil, fmt.Errorf("artifacts directory %q is not a name", dir)
	}
	gr := &GateRun{Issues: map[string]Added{}, Approvals: map[string]string{}, Waiting: map[string]IssueRef{}}
	var err error
	if gr.Dir, err = w.RunDir(dir); err != nil {
		return nil, err
	}
	w.noteSupervisor(gr.Dir)
	return gr, nil
}

// evaluate runs the gates into gr.Evaluation and returns what it learnt of
// each human gate it asked, by gate name.
func (w Workspace) evaluate(ctx context.Context, now func() time.Time, cfg *config.Config, gates []config.Gate, gr *GateRun, opt GateOptions) (map[string]*human, error) {
	humans := map[string]*human{}
	loop := logLoop(gr.Dir, gates)
	if filepath.Base(gr.Dir) == analytics.NoRun {
		pruneLoops(gr.Dir, loop, cfg.KeepRuns)
	}
	ev, err := gate.Evaluate(ctx, gates, gate.Options{
		RepoRoot: w.Root(), Roots: w.checkouts(), LogDir: gr.Dir, LogLoop: loop, Output: cfg.Output,
		Parallelism: cfg.Parallelism, Progress: opt.Progress, Now: now,
		DiffExclude: w.diffExclude(),
		Human: func(g config.Gate) gate.Approval {
			h := w.decideHuman(ctx, g, opt.Tag)
			humans[g.Name] = h
			return h.approval
		},
	})
	if err != nil {
		return nil, err
	}
	for _, h := range humans {
		if h.err != nil {
			return nil, h.err
		}
	}
	gr.Evaluation = ev
	return humans, nil
}

// gateStep is one RunGates after the evaluation: what filing, recording
// and resolving each gate's issues, and writing the artifacts, need.
type gateStep struct {
	w      Workspace
	tx     queueTx // its history rows held (heldRows)
	now    func() time.Time
	cfg    *config.Config
	opt    GateOptions
	gr     *GateRun
	run    string
	humans map[string]*human
	// feedbackBefore is the last feedback before this evaluation, for an
	// approval request.
	feedbackBefore string
	sigs           map[string]string // failed gate → its failure's signature
}

// recordResults files, records or resolves each result's issue and returns
// a history row per gate (none with NoRecord, which touches no issue).
func (s *gateStep) recordResults(ctx context.Context) ([]analytics.Event, error) {
	var events []analytics.Event
	ev := s.gr.Evaluation
	for i := range ev.Results {
		r := &ev.Results[i]
		h := s.humans[r.Name()]
		e := gateEvent(s.now(), s.run, r, h)
		if s.opt.Issue != "" && h == nil {
			// A claimed issue's failure is recorded below; a human gate
			// asks as it does for one agent.
			if reviewerError(r) {
				s.gr.ReviewerErrors = append(s.gr.ReviewerErrors, r.Name()+": "+r.Reason())
			}
			e.IssueID = s.opt.Issue
			events = append(events, e)
			continue
		}
		if s.opt.NoRecord {
			if r.Outcome == gate.AwaitingApproval {
				s.gr.AwaitingApproval = append(s.gr.AwaitingApproval, r.Name())
				if h != nil {
					s.gr.Approvals[r.Name()] = h.approval.Ref
				}
			}
			continue
		}
		if err := s.record(ctx, r, h, &e); err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	if s.opt.Issue != "" && !s.opt.NoRecord {
		return events, s.recordClaimed(ctx)
	}
	return events, nil
}

// recordClaimed records the blocking gates' failures against the claimed
// issue (see GateOptions.Issue and Workspace.recordClaimedFailure).
func (s *gateStep) recordClaimed(ctx context.Context) error {
	return s.w.recordClaimed(ctx, s.tx, s.now(), s.opt.Issue, s.gr, s.sigs)
}

// gateEvent is the history row of a gate's result, before its issue.
func gateEvent(now time.Time, run string, r *gate.Result, h *human) analytics.Event {
	e := analytics.Event{Time: now, RunID: run, Event: analytics.EventGate, Gate: r.Name(),
		Outcome: string(r.Outcome), DurationMS: r.Duration.Milliseconds()}
	if r.Outcome != gate.Skipped && r.Outcome != gate.AwaitingApproval {
		code := exitCodeOf(r)
		e.ExitCode = &code
	}
	if h != nil && h.approval.Ref != "" {
		e.Detail = "approval " + h.approval.Ref
	}
	if en := r.Enforcement(); en != config.Blocking && e.Detail == "" {
		e.Detail = string(en) // its failure does not fail the run
	}
	return e
}

// record files, records or resolves the issue of one gate's result (h is
// the gate's, if human) and notes it in gr and in e, its history row.
func (s *gateStep) record(ctx context.Context, r *gate.Result, h *human, e *analytics.Event) error {
	w, tx, gr := s.w, s.tx, s.gr
	if h != nil && h.approval.State == gate.ApprovalRejected && r.Outcome == gate.Fail {
		if err := w.closeRejection(ctx, tx, h.approval.Ref); err != nil {
			return err
		}
	}
	switch {
	case r.Outcome == gate.AwaitingApproval && h != nil:
		id, err := w.requestApproval(ctx, tx, s.now(), s.cfg, h, s.feedbackBefore, s.opt.Tag)
		if err != nil {
			return err
		}
		gr.AwaitingApproval = append(gr.AwaitingApproval, r.Name())
		gr.Approvals[r.Name()] = id
		e.Detail = "approval " + id
	case reviewerError(r):
		gr.ReviewerErrors = append(gr.ReviewerErrors, r.Name()+": "+r.Reason())
	case r.Failed() && r.Gate.AutoRetry:
		return s.recordFailure(ctx, r, e)
	case r.Passed():
		if h != nil && h.approval.State == gate.ApprovalGiven && h.approval.Ref != "" {
			if err := w.settleApproval(ctx, tx, h.approval.Ref); err != nil {
				return err
			}
		}
		ids, err := w.resolveGateIssues(ctx, tx, s.now(), r.Name(), s.opt.Tag)
		if err != nil {
			return err
		}
		gr.Resolved = append(gr.Resolved, ids...)
		if len(ids) > 0 {
			e.IssueID = ids[0]
		}
	}
	return nil
}

// recordFailure files an auto-retry gate's failure, or records it against
// the gate's open issue; a failure whose signature belongs to an issue
// waiting for a person is only named in gr.Waiting, whatever the driver.
func (s *gateStep) recordFailure(ctx context.Context, r *gate.Result, e *analytics.Event) error {
	if ref, sig := s.w.waitingFor(s.tx, s.cfg, r); ref.ID != "" {
		s.gr.Waiting[r.Name()] = ref
		e.IssueID, e.Signature = ref.ID, sig
		return nil
	}
	if splitByUnit(r) {
		return s.recordUnits(ctx, r, e)
	}
	a, err := s.w.fileGateFailure(ctx, s.tx, s.now(), s.cfg, r, s.opt.Tag)
	if err != nil {
		return err
	}
	s.gr.Issues[r.Name()] = a
	s.sigs[r.Name()] = a.Signature
	e.IssueID, e.Signature = a.ID, a.Signature
	return nil
}

// writeArtifacts adds this evaluation to the fix cycle's attempts and
// writes gate-results.json, summary.md and, when a blocking gate failed,
// the feedback (also in gr.Feedback).
func (s *gateStep) writeArtifacts() error {
	w, gr, cfg, ev := s.w, s.gr, s.cfg, s.gr.Evaluation
	prev := s.opt.Previous
	if prev == nil {
		prev = previousAttempts(filepath.Join(gr.Dir, gate.ResultsFile))
	}
	attempt, maxRetries, exhausted := w.attemptOf(cfg, gr, prev)
	fixes := s.opt.AgentFixes
	if len(prev) == 0 {
		fixes = "" // the first attempt checks the work, not fixes
	}
	gr.Attempts = append(append([]gate.Attempt(nil), prev...), gate.Attempt{Number: len(prev) + 1, Timestamp: ev.Started, Evaluation: ev, AgentFixes: fixes})
	report := &gate.Report{ExecutionID: s.run, MaxRetries: maxRetries, Attempts: gr.Attempts, Output: cfg.Output}
	// The feedback of a failed evaluation is kept with the artifacts.
	var extra []gate.File
	if gr.Failed() {
		data := gate.NewFeedback(gr.told(), gate.FeedbackInput{
			Attempt: attempt, MaxAttempts: maxRetries, Exhausted: exhausted, Output: cfg.Output,
			Signatures: s.sigs, Tried: tried(s.tx, gr),
		})
		var err error
		if gr.Feedback, err = gate.RenderFeedback(w.Path(PromptsDir), data); err != nil {
			return err
		}
		extra = append(extra, gate.File{Name: FeedbackFile, Data: []byte(gr.Feedback)})
	}
	return gate.WriteArtifacts(gr.Dir, report, extra...)
}

// previousAttempts reads the attempts of the fix cycle in progress from
// a gate-results.json: none when there is none, when it cannot be read
// (the new attempt starts the files again), or when its last attempt
// passed, which ended that cycle.
func previousAttempts(path string) []gate.Attempt {
	prev, err := gate.ReadAttempts(path)
	if err != nil || len(prev) == 0 {
		return nil
	}
	if last := prev[len(prev)-1]; last.Evaluation == nil || last.Evaluation.Passed {
		return nil
	}
	return prev
}

// logLoop returns the number of this loop's gate logs in a run's
// directory, so that no loop overwrites an earlier one's: 1 (plain
// <name>.log) for the first, then one more than the highest
// <name>.loop<N>.log there.
func logLoop(dir string, gates []config.Gate) int {
	n := 1
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".log")
		if i := strings.LastIndex(name, ".loop"); i >= 0 && name != e.Name() {
			if k, err := strconv.Atoi(name[i+len(".loop"):]); err == nil {
				n = max(n, k)
			}
		}
	}
	if n > 1 {
		return n + 1
	}
	for _, name := range gate.LogNames(gates) {
		// An earlier loop's log is a regular file; anything else there is
		// not orchestrate's, and writing the log refuses it.
		if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return 2
		}
	}
	return 1
}

func selectGates(cfg *config.Config, names []string) ([]config.Gate, error) {
	if len(names) == 0 {
		if len(cfg.Gates) == 0 {
			return nil, fmt.Errorf("no gates in config.yaml: add a gates: list (see orchestrate help gate)")
		}
		return cfg.Gates, nil
	}
	var out []config.Gate
	for _, n := range names {
		g, ok := cfg.Gate(n)
		if !ok {
			return nil, &UnknownGateError{Name: n, Known: gateNames(cfg.Gates)}
		}
		out = append(out, g)
	}
	return out, nil
}

// UnknownGateError is a gate asked for by a name that config.yaml does not
// give a gate: a mistake of the command line.
type UnknownGateError struct {
	Name  string   // the name asked for
	Known []string // the gates' names, in config.yaml's order
}

func (e *UnknownGateError) Error() string {
	msg := fmt.Sprintf("no gate named %q in config.yaml", e.Name)
	if s := suggest.Closest(e.Name, e.Known); s != "" {
		msg += fmt.Sprintf("; did you mean %s?", s)
	}
	return msg + " (its gates: " + strings.Join(e.Known, ", ") + ")"
}

// gateNames returns the names of gates, in their order.
func gateNames(gates []config.Gate) []string {
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.Name
	}
	return names
}

// exitCodeOf is the exit code a result stands for: a timeout is 124, as
// timeout(1) reports it, so that its class is infrastructure.
func exitCodeOf(r *gate.Result) int {
	if r.Outcome == gate.TimedOut {
		return 124
	}
	return r.ExitCode
}

// gateSummary is the Summary of a gate's issue: the gate and the cause of
// its failure.
func gateSummary(r *gate.Result) string { return gateSummaryPrefix(r.Name()) + r.Reason() }

func gateSummaryPrefix(name string) string { return "Quality gate " + name + " failed: " }

// suggestedFix is the Suggested Fix section of a gate's issue: its hints,
// one a line; "" for none.
func suggestedFix(hints []string) string {
	var b strings.Builder
	for _, h := range hints {
		if h = strings.TrimSpace(h); h != "" {
			if len(hints) > 1 {
				b.WriteString("- ")
			}
			b.WriteString(h + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// gateFailure is the failure a gate's result files, and a review gate's
// findings for its issue.
func gateFailure(r *gate.Result) (f Failure, md string) {
	code := exitCodeOf(r)
	// The whole output was signed as it streamed (r.Digest); r.Output is
	// its head and tail.
	f = Failure{Output: []byte(r.Output), ExitCode: &code, Gate: r.Name(), Digest: r.Digest}
	if rev := r.Review; rev != nil && r.Outcome == gate.Fail {
		f.Output, f.Digest = []byte(findings.SignatureText(rev.Blocking())), nil
		// One level down: a level-3 heading would end the section.
		md = strings.ReplaceAll("\n"+findings.Markdown(rev.Findings), "\n### ", "\n#### ")[1:]
	}
	return f, md
}

// SectionReviewFindings holds a review gate's findings in the issue its
// failure filed: all of them, with their lines and suggestions.
const SectionReviewFindings = "Review Findings"

func open(is *queue.Issue) bool {
	st := is.Status()
	return st != queue.StatusResolved && st != queue.StatusSkipped
}

// resolveGateIssues resolves the open issues a gate filed (with the same
// tags), now that it passed: stuck ones too, since what a person was to
// look at is fixed.
func (w Workspace) resolveGateIssues(ctx context.Context, tx queueTx, now time.Time, name string, tag map[string]string) ([]string, error) {
	q, err := tx.load()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, is := range q.Issues {
		if g, _ := is.Get(FieldGate); g == name && open(is) && !isApproval(is) && tagged(is, tag) {
			if _, err := w.resolve(ctx, tx, now, is.ID, false); err != nil {
				return ids, err
			}
			ids = append(ids, is.ID)
		}
	}
	return ids, nil
}

// resolutionsIn describes the issues the gates resolved, read through tx,
// for the SUCCEEDED messages.
func resolutionsIn(tx queueTx, resolved []string) []Resolution {
	if len(resolved) == 0 {
		return nil
	}
	q, err := tx.load()
	if err != nil {
		return nil
	}
	var out []Resolution
	for _, id := range resolved {
		if is := q.Issue(id); is != nil {
			out = append(out, Resolution{ID: id, Retries: is.Int(queue.FieldRetryCount, 0), Summary: summaryOf(is)})
		}
	}
	return out
}

// attemptOf returns, for the feedback, the fix attempt that comes next,
// the fix attempts allowed (Max-Retries), and whether none is left: from
// the issues of the failing blocking gates that have one (a gate with
// auto_retry: false files none, and its failure counts toward no halt), the
// open one with the fewest attempts left, so that an issue halted beside
// it does not tell the agent that no attempt is left; none is left only
// when every one of them is stuck or out of attempts. When no failing gate
// has an issue, the evaluation's own count n against the first failing
// gate's limit. When none fails, the limit is that of the gate that failed
// last in the cycle's earlier attempts.
func (w Workspace) attemptOf(cfg *config.Config, gr *GateRun, prev []gate.Attempt) (attempt, retries int, exhausted bool) {
	n := len(prev) + 1
	if failures := gr.Evaluation.Failures(); len(failures) > 0 {
		found := false
		for _, f := range failures {
			a, ok := gr.Issues[f.Name()]
			if !ok {
				continue
			}
			at, rt := 1, cfg.GateMaxRetries(f.Gate)
			if a.Recorded != nil {
				at, rt = a.Recorded.RetryCount+1, a.Recorded.MaxRetries
			}
			ex := a.Status == queue.StatusStuck || at > rt
			if better := !found || exhausted && !ex || exhausted == ex && rt-at < retries-attempt; better {
				attempt, retries, exhausted, found = at, rt, ex, true
			}
		}
		if !found {
			attempt, retries = n, cfg.GateMaxRetries(failures[0].Gate)
			exhausted = attempt > retries
		}
		return min(attempt, max(retries, 1)), retries, exhausted
	}
	for i := len(prev) - 1; i >= 0; i-- {
		if ev := prev[i].Evaluation; ev != nil {
			for _, r := range ev.Failures() {
				if g, ok := cfg.Gate(r.Name()); ok {
					return n, cfg.GateMaxRetries(g), false
				}
			}
		}
	}
	return n, cfg.Retry.MaxRetries, false
}

// tried lists, for the failing gates' issues, the signatures of their
// earlier attempts and how often each came back. This attempt's failure,
// already recorded in its issue's recent signatures, is not one of them:
// a failure seen once, now, was not tried before.
func tried(tx queueTx, gr *GateRun) []gate.Tried {
	q, err := tx.load()
	if err != nil {
		return nil
	}
	var out []gate.Tried
	for name, a := range gr.Issues {
		is := q.Issue(a.ID)
		if is == nil {
			continue
		}
		counts := map[string]int{}
		var order []string
		for _, s := range is.List(FieldRecentSignatures) {
			if counts[s] == 0 {
				order = append(order, s)
			}
			counts[s]++
		}
		for _, s := range order {
			// This attempt's own, kept whole or shortened.
			if s != "" && a.Signature != "" && (strings.HasPrefix(a.Signature, s) || strings.HasPrefix(s, a.Signature)) {
				counts[s]--
				break
			}
		}
		seen := failuresSeen(is)
		for _, s := range order {
			if counts[s] > 0 {
				out = append(out, gate.Tried{Gate: name, Signature: s, Count: counts[s], Failure: seen[s]})
			}
		}
	}
	return out
}

// withLock runs fn under the workspace's lock.
func (w Workspace) withLock(ctx context.Context, fn func() error) error {
	unlock, err := w.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}
