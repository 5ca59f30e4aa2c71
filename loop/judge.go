package loop

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/git"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// reportsOf returns the test-level results of an evaluation's blocking
// gates that ran: each gate's own report, or, for a gate whose output was
// not read as tests (or that failed with no test failing), the gate as
// one whole unit. A gate that timed out or could not run is whole too,
// as filing takes it: what its output listed before it was cut is not
// its results, as the tests it never reached were not seen.
func reportsOf(ev *gate.Evaluation) []results.Report {
	var out []results.Report
	for i := range ev.Results {
		r := &ev.Results[i]
		if r.Enforcement() != config.Blocking || !r.Failed() && !r.Passed() {
			continue
		}
		if rep := r.Tests; rep != nil && (r.Passed() || r.Outcome == gate.Fail && !rep.Passing()) {
			c := *rep
			c.Gate = r.Name()
			out = append(out, c)
			continue
		}
		rep := results.Report{Gate: r.Name(), Whole: true}
		if r.Failed() {
			f, _ := gateFailure(r)
			rep.Failed = []results.Failed{{Unit: results.Unit{Gate: r.Name()}, Block: string(f.Output)}}
		}
		out = append(out, rep)
	}
	return out
}

// ownUnits are the units issue is holds: its Tests, or, for an issue a
// gate filed with no Tests, that gate as a whole; none for a person's
// issue without Tests.
func ownUnits(is *queue.Issue) []results.Unit {
	if units := is.Tests(); len(units) > 0 {
		return units
	}
	// A failure recorded against a person's issue notes its gate too:
	// only a gate's own issue holds its gate.
	if src, _ := is.Get(queue.FieldSource); src != "gate" {
		return nil
	}
	if g, ok := is.Get(FieldGate); ok {
		return []results.Unit{{Gate: g}}
	}
	return nil
}

// Learns reports whether the issue id holds no unit of its own (see
// ownUnits): an attempt at it that passes learns its tests from what it
// turned green (see results.Verdict.Learned), so it is judged on its own
// work alone, not on others' with it. Only the pieces of the queue that
// hold id are read: a pool asks at each landing.
func (w Workspace) Learns(id string) (bool, error) {
	q, err := direct{w}.some(id)
	if err != nil {
		return false, err
	}
	is := q.Issue(id)
	if is == nil {
		return false, &NoIssueError{Path: w.Path(QueueFile), ID: id}
	}
	return len(ownUnits(is)) == 0, nil
}

// heldByOthers reports, for the issues of q other than id that are open,
// whether one holds a unit.
func heldByOthers(q *queue.Queue, id string) func(results.Unit) bool {
	var held []results.Unit
	for _, is := range q.Issues {
		if is.ID != id && open(is) && !isApproval(is) {
			held = append(held, ownUnits(is)...)
		}
	}
	return func(u results.Unit) bool {
		return slices.ContainsFunc(held, func(h results.Unit) bool { return h == u || h.ID == "" && h.Gate == u.Gate })
	}
}

// judgeClaimed judges gr, an attempt at the claimed issue id, against
// base, the results of the commit its work started from: gr.Verdict, and
// the failures that count against it (gr.counted). An attempt at an issue
// that holds no test, on a baseline with failures, that turned none of
// them green counts the baseline's failures that no other open issue
// holds (all of them when others hold each).
func (w Workspace) judgeClaimed(tx queueTx, gr *GateRun, id string, base []results.Report) error {
	q, err := tx.load()
	if err != nil {
		return err
	}
	is := q.Issue(id)
	if is == nil {
		return &NoIssueError{Path: w.Path(QueueFile), ID: id}
	}
	v := results.Judge(ownUnits(is), gr.Reports, base)
	gr.Verdict, gr.counted = &v, v.Counted()
	if v.NothingFixed {
		held := heldByOthers(q, id)
		unheld := slices.DeleteFunc(slices.Clone(v.Others), func(f results.Failed) bool { return held(f.Unit) })
		if len(unheld) == 0 {
			unheld = v.Others
		}
		gr.counted = append(gr.counted, unheld...)
	}
	return nil
}

// JudgeClaimed judges gr, an evaluation of the work on the claimed issue
// id, against base, the results of the commit the work is on (see
// results.Judge): gr.Passed then says whether the work may land, and
// RecordClaimed records what counts against the issue.
func (w Workspace) JudgeClaimed(gr *GateRun, id string, base []results.Report) error {
	return w.judgeClaimed(direct{w}, gr, id, base)
}

// Passed reports whether the work passed: by its issue's verdict when it
// was judged by one, else when every blocking gate passed.
func (gr *GateRun) Passed() bool {
	if gr.Verdict != nil {
		return gr.Verdict.Pass && len(gr.AwaitingApproval) == 0
	}
	return gr.Evaluation.Passed
}

// verdictFailure is the failure a verdict records against its issue:
// results.Text of what counts, signed as results.Sign signs it; or, when
// all that counts are whole gates (a runner not known, a build failure),
// those gates' failures as an evaluation of them records them, signed
// from their whole output as the gate filed them.
func verdictFailure(gr *GateRun, opt signature.Options) (Failure, []gate.Result) {
	var whole []gate.Result
	for _, f := range gr.counted {
		r := resultOf(gr.Evaluation, f.Gate)
		if f.ID != "" || r == nil {
			whole = nil
			break
		}
		if !slices.ContainsFunc(whole, func(x gate.Result) bool { return x.Name() == r.Name() }) {
			whole = append(whole, *r)
		}
	}
	if whole != nil {
		return Failure{}, whole
	}
	f := Failure{Output: []byte(results.Text(gr.counted))}
	f.signed[0], f.signed[1] = results.Sign(gr.counted, opt)
	if gates := countedGates(gr); len(gates) == 1 {
		f.Gate = gates[0]
	}
	return f, nil
}

// recordClaimedFailure records the blocking gates' failures of gr against
// issue id as one failure: their outputs in config order, so that the same
// gates failing the same way are the same signature, and one loop is one
// attempt. It notes the issue of each failed gate in gr.Issues (and its
// signature in sigs, when given).
func (w Workspace) recordClaimedFailure(ctx context.Context, now time.Time, id string, gr *GateRun, sigs map[string]string) error {
	return w.recordClaimed(ctx, direct{w}, now, id, gr, sigs)
}

// recordClaimed is recordClaimedFailure through tx.
func (w Workspace) recordClaimed(ctx context.Context, tx queueTx, now time.Time, id string, gr *GateRun, sigs map[string]string) error {
	failed := slices.DeleteFunc(gr.Evaluation.Failures(), func(r gate.Result) bool { return reviewerError(&r) })
	var f Failure
	if gr.Verdict != nil {
		if gr.Verdict.Pass {
			return w.learn(ctx, tx, id, gr.Verdict)
		}
		// A failed attempt goes back to its agent: its judging is
		// done (a pass is counted where it lands, see JudgedEvent).
		if err := tx.history(ctx, JudgedEvent(now, w.runID(), id, gr.Verdict)); err != nil {
			return err
		}
		if f, failed = verdictFailure(gr, w.SignatureOptions()); failed == nil {
			return w.recordVerdict(ctx, tx, now, id, gr, f, sigs)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	f, _ = gateFailure(&failed[0])
	f.Summary = ""
	if len(failed) > 1 {
		var out bytes.Buffer
		var code *int
		for i := range failed {
			g, _ := gateFailure(&failed[i])
			fmt.Fprintf(&out, "== gate %s ==\n%s\n", failed[i].Name(), g.Output)
			if code == nil && g.Class() != signature.Infra {
				code = g.ExitCode
			}
		}
		if code == nil {
			code = f.ExitCode
		}
		f = Failure{Output: out.Bytes(), ExitCode: code}
	}
	rec, err := w.record(ctx, tx, now, id, f)
	if err != nil {
		return err
	}
	for i := range failed {
		gr.Issues[failed[i].Name()] = Added{ID: rec.ID, Deduplicated: true, Recorded: &rec, Signature: rec.Signature, Status: rec.Status}
		if sigs != nil {
			sigs[failed[i].Name()] = rec.Signature
		}
	}
	return nil
}

// recordVerdict records f, the failure of a judged attempt, against the
// claimed issue id, and notes the issue of each gate it counts.
func (w Workspace) recordVerdict(ctx context.Context, tx queueTx, now time.Time, id string, gr *GateRun, f Failure, sigs map[string]string) error {
	rec, err := w.record(ctx, tx, now, id, f)
	if err != nil {
		return err
	}
	for _, name := range countedGates(gr) {
		gr.Issues[name] = Added{ID: rec.ID, Deduplicated: true, Recorded: &rec, Signature: rec.Signature, Status: rec.Status}
		if sigs != nil {
			sigs[name] = rec.Signature
		}
	}
	return nil
}

// countedGates are the gates of the failures that count, in config order.
func countedGates(gr *GateRun) []string {
	var out []string
	for i := range gr.Evaluation.Results {
		name := gr.Evaluation.Results[i].Name()
		if slices.ContainsFunc(gr.counted, func(f results.Failed) bool { return f.Gate == name }) {
			out = append(out, name)
		}
	}
	return out
}

func resultOf(ev *gate.Evaluation, name string) *gate.Result {
	for i := range ev.Results {
		if ev.Results[i].Name() == name {
			return &ev.Results[i]
		}
	}
	return nil
}

// learn writes the tests a verdict learned into the Tests field of the
// issue id, which held none.
func (w Workspace) learn(ctx context.Context, tx queueTx, id string, v *results.Verdict) error {
	if v == nil || !v.Pass || len(v.Learned) == 0 {
		return nil
	}
	return w.changeIssue(ctx, tx, id, func(is *queue.Issue) error {
		if len(is.Tests()) == 0 {
			is.SetTests(v.Learned)
		}
		return nil
	}, nil)
}

// told is the evaluation as the agent is told it: a judged attempt's
// (see judgedEvaluation), else the whole of it.
func (gr *GateRun) told() *gate.Evaluation {
	if gr.Verdict != nil {
		return judgedEvaluation(gr)
	}
	return gr.Evaluation
}

// judgedEvaluation is the evaluation as the feedback of a judged attempt
// tells it: the gates with a failure that counts, each with those
// failures alone (a regression named as one); the others as passed.
func judgedEvaluation(gr *GateRun) *gate.Evaluation {
	ev := *gr.Evaluation
	ev.Results = slices.Clone(ev.Results)
	ev.Passed = gr.Verdict.Pass
	for i := range ev.Results {
		r := &ev.Results[i]
		if r.Enforcement() != config.Blocking || !r.Failed() {
			continue
		}
		var b strings.Builder
		n, whole := 0, false
		for _, f := range gr.counted {
			if f.Gate != r.Name() {
				continue
			}
			n++
			if slices.ContainsFunc(gr.Verdict.Regressions, func(x results.Failed) bool { return x.Unit == f.Unit }) {
				b.WriteString(f.Unit.String() + " passed before your change and fails now.\n")
			}
			if whole = whole || f.ID == ""; f.ID != "" {
				b.WriteString(strings.TrimRight(f.Block, "\n") + "\n")
			}
		}
		if n == 0 {
			r.Outcome, r.Output = gate.Pass, ""
			continue
		}
		body := b.String()
		if whole {
			body += r.Output // the gate's own output, its excerpt as for any gate
		} else {
			r.Marks, r.Omitted = nil, 0
		}
		if gr.Verdict.NothingFixed && len(gr.Verdict.Own) == 0 && len(gr.Verdict.Regressions) == 0 {
			body = "None of the failures there were before your change passes now, and this issue names no test of its own: fix the failure it is about.\n" + body
		}
		r.Output = body
	}
	return &ev
}

// judgedFeedback renders the feedback of a judged attempt recorded
// against its issue outside an evaluation of the loop (the merge train's).
func (w Workspace) judgedFeedback(cfg *config.Config, gr *GateRun) (string, error) {
	attempt, maxRetries, exhausted := w.attemptOf(cfg, gr, nil)
	data := gate.NewFeedback(judgedEvaluation(gr), gate.FeedbackInput{
		Attempt: attempt, MaxAttempts: maxRetries, Exhausted: exhausted, Output: cfg.Output,
	})
	return gate.RenderFeedback(w.Path(PromptsDir), data)
}

// resolveHeld resolves, after an evaluation of a run's work on the open
// issues, each open issue that holds tests, none of which fails now, with
// nothing regressed against base: the others go on. It returns the
// issues it resolved. A failure that another open issue holds is that
// issue's, not a regression: without a baseline (base nil), every other
// failure is one.
func (w Workspace) resolveHeld(ctx context.Context, now time.Time, gr *GateRun, base []results.Report) ([]string, error) {
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, is := range q.Issues {
		if !open(is) || isApproval(is) || len(is.Tests()) == 0 || is.Bool(queue.FieldHalted, false) {
			continue
		}
		v := results.Judge(is.Tests(), gr.Reports, base)
		held := heldByOthers(q, is.ID)
		if len(v.Own) > 0 || slices.ContainsFunc(v.Regressions, func(f results.Failed) bool { return !held(f.Unit) }) {
			continue
		}
		if _, ok, err := w.resolveOpen(ctx, now, is.ID); err != nil {
			return ids, err
		} else if ok {
			ids = append(ids, is.ID)
		}
	}
	return ids, nil
}

// resolveHeld resolves, for a run on the open issues, each open issue
// that holds tests whose tests pass now with nothing regressed (see
// Workspace.resolveHeld), the others going on. The baseline is the one
// kept for the clean tree the run started on, or the first evaluation
// when it ran before any agent; with none, every failure no open issue
// holds is a regression. (A run on a claimed issue is judged by its
// issue against RunOptions.Baseline instead, see GateOptions.Baseline.)
func (r *runner) resolveHeld(ctx context.Context, n int, gr *GateRun) error {
	if r.scope.Issue() != "" {
		return nil
	}
	if r.base == nil && n == 1 && r.gatesFirst {
		r.base = &BaseResults{Reports: gr.Reports}
		if err := r.w.keepBaseline(r.tree, gr.Evaluation, gr.Reports); err != nil {
			r.w.warn(fmt.Errorf("keeping the baseline: %w", err))
		}
	}
	var base []results.Report
	if r.base != nil {
		base = r.base.Reports
	}
	ids, err := r.w.resolveHeld(ctx, r.opt.Now(), gr, base)
	gr.Resolved = append(gr.Resolved, ids...)
	return err
}

// startBaseline notes the tree the run starts on, when clean and
// committed, and the baseline kept for it, if any: for a run on the open
// issues (resolveHeld), not one given its baseline.
func (r *runner) startBaseline(ctx context.Context) {
	if r.opt.Baseline != nil || r.start.head == "" || r.start.notClean != "" {
		return
	}
	tree, err := git.In(r.w.Root()).Output(ctx, "rev-parse", "--verify", "-q", "HEAD^{tree}")
	if err != nil {
		return
	}
	r.tree = strings.TrimSpace(tree)
	if b, ok := r.w.KeptBaseline(r.tree); ok {
		r.base = b
	}
}

// JudgedEvent is the history row of an attempt at issue id judged by its
// verdict v (analytics.EventJudge): pass or fail, and what it fixed and
// regressed. An attempt has one: a failure where it was judged, a pass
// where it landed (a pass that the merge train then refuses is that
// failure).
func JudgedEvent(now time.Time, run, id string, v *results.Verdict) analytics.Event {
	outcome := analytics.OutcomeFail
	if v.Pass {
		outcome = analytics.OutcomePass
	}
	return analytics.Event{Time: now, RunID: run, Event: analytics.EventJudge, IssueID: id, Outcome: outcome,
		Detail: fmt.Sprintf("fixed=%d regressions=%d", len(v.Fixed), len(v.Regressions))}
}
