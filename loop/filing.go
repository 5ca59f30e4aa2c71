package loop

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// MaxFiledPerGate is how many issues one gate's failing tests file in one
// evaluation: past it, the last one holds all the rest, and its Summary
// says how many more it holds.
const MaxFiledPerGate = 10

// splitByUnit reports whether a gate's failure is filed test by test: it
// failed (not timed out, not errored) and its results name the tests that
// failed. A gate whose runner is unknown, or that failed before its tests
// ran, is one failure, the gate's, as before tests were read.
func splitByUnit(r *gate.Result) bool {
	return r.Outcome == gate.Fail && r.Tests != nil && !r.Tests.Whole && len(r.Tests.Failed) > 0
}

// recordUnits files a gate's failing tests, one issue each (see
// fileUnits), and notes them in gr and in e, the gate's history row: the
// first issue is the gate's in gr.Issues, all of them in gr.Filed. When
// every failing test belongs to an issue that waits for a person, the
// gate is named in gr.Waiting instead.
func (s *gateStep) recordUnits(ctx context.Context, r *gate.Result, e *analytics.Event) error {
	filed, waiting, err := s.w.fileUnits(ctx, s.tx, s.now(), s.cfg, r, s.opt.Tag)
	if err != nil {
		return err
	}
	name := r.Name()
	ids, err := s.w.resolvePassingUnits(ctx, s.tx, s.now(), r, s.opt.Tag)
	if err != nil {
		return err
	}
	s.gr.Resolved = append(s.gr.Resolved, ids...)
	if len(filed) == 0 {
		if len(waiting) > 0 {
			s.gr.Waiting[name] = waiting[0].IssueRef
			e.IssueID, e.Signature = waiting[0].ID, waiting[0].signature
		}
		return nil
	}
	if s.gr.Filed == nil {
		s.gr.Filed = map[string][]Added{}
	}
	s.gr.Issues[name], s.gr.Filed[name] = filed[0], filed
	s.sigs[name] = filed[0].Signature
	e.IssueID, e.Signature = filed[0].ID, filed[0].Signature
	return nil
}

// waitingUnit is a failing test whose failure belongs to an issue that
// waits for a person, and that failure's signature.
type waitingUnit struct {
	IssueRef
	signature string
}

// fileUnits files a gate's failing tests as issues, one per test, each
// with the test in its Tests field and its own failure block as its
// failure, signed as results.Sign signs that one test; at most
// MaxFiledPerGate of them, the last holding the rest. A test that an open
// issue already holds (holderOf) is recorded against that issue, never
// filed again; the tests one issue holds are one failure, one attempt. A
// test whose failure is that of an issue waiting for a person is neither
// filed nor recorded: it is returned in waiting.
func (w Workspace) fileUnits(ctx context.Context, tx queueTx, now time.Time, cfg *config.Config, r *gate.Result, tag map[string]string) (filed []Added, waiting []waitingUnit, err error) {
	q, err := tx.load()
	if err != nil {
		return nil, nil, err
	}
	held := map[string][]results.Failed{}
	at := map[string]int{} // each holder's first test, in the output's order
	var holders []string
	var free []results.Failed
	var freeAt []int
	for i, f := range r.Tests.Failed {
		sig, _ := w.Signature(unitsFailure(r, []results.Failed{f}))
		if ref := waitingIn(q.All(), cfg, sig); ref.ID != "" {
			waiting = append(waiting, waitingUnit{ref, sig})
			continue
		}
		id := holderOf(q, f.Unit, tag)
		switch {
		case id == "":
			free, freeAt = append(free, f), append(freeAt, i)
		case held[id] == nil:
			holders, at[id] = append(holders, id), i
			fallthrough
		default:
			held[id] = append(held[id], f)
		}
	}
	var pos []int
	for _, id := range holders {
		rec, err := w.record(ctx, tx, now, id, unitsFailure(r, held[id]))
		if err != nil {
			return filed, waiting, err
		}
		filed, pos = append(filed, Added{ID: id, Deduplicated: true, Recorded: &rec, Signature: rec.Signature, Status: rec.Status}), append(pos, at[id])
	}
	n := 0
	for _, units := range capUnits(free) {
		ni := gateIssue(cfg, r, tag)
		f := unitsFailure(r, units)
		ni.Sections[queue.SectionSummary], ni.Failure = f.Summary, &f
		ni.Fields[queue.FieldTests] = queue.FormatTests(unitsOf(units))
		a, err := w.addIssue(ctx, tx, now, ni)
		if err != nil {
			return filed, waiting, err
		}
		filed, pos = append(filed, a), append(pos, freeAt[n])
		n += len(units)
	}
	return inOrder(filed, pos), waiting, nil
}

// inOrder sorts issues by pos, the place of each one's first test in the
// output.
func inOrder(issues []Added, pos []int) []Added {
	idx := make([]int, len(issues))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return pos[a] - pos[b] })
	out := make([]Added, len(issues))
	for i, j := range idx {
		out[i] = issues[j]
	}
	return out
}

// capUnits groups failing tests into the issues they file: one each, but
// past MaxFiledPerGate the last issue holds all the rest.
func capUnits(free []results.Failed) [][]results.Failed {
	var groups [][]results.Failed
	for i := range free {
		if i == MaxFiledPerGate-1 && len(free) > MaxFiledPerGate {
			return append(groups, free[i:])
		}
		groups = append(groups, free[i:i+1])
	}
	return groups
}

// unitsFailure is the failure of some failing tests of a gate: their
// blocks as results.Text writes them, of the ordinary failure class, so
// that its signature is results.Sign's over the same tests. Its Summary
// names the first test and how many more there are.
func unitsFailure(r *gate.Result, units []results.Failed) Failure {
	f := Failure{Output: []byte(results.Text(units)), Gate: r.Name(), Summary: unitsSummary(r.Name(), units)}
	if code := exitCodeOf(r); signature.ClassOf(code) == signature.Fail {
		f.ExitCode = &code
	}
	return f
}

// unitsSummary is the Summary of an issue of some failing tests of a
// gate: "Quality gate G failed: ID", and " and N more" when it holds more.
func unitsSummary(name string, units []results.Failed) string {
	first := units[0].ID
	if first == "" {
		first = units[0].Unit.String()
	}
	s := gateSummaryPrefix(name) + first
	if len(units) > 1 {
		s += fmt.Sprintf(" and %d more", len(units)-1)
	}
	return s
}

// unitsOf returns the units of some failed tests.
func unitsOf(failed []results.Failed) []results.Unit {
	units := make([]results.Unit, len(failed))
	for i, f := range failed {
		units[i] = f.Unit
	}
	return units
}

// holderOf returns the open issue that holds unit u of a failing gate, or
// "": the first open issue (neither halted nor an approval request) whose
// Tests lists u, with the same tags (a session's, or none for orchestrate
// gate's), or a person's of no session; else the open issue the gate
// filed with the same tags that lists no tests (filed before issues held
// their tests), which holds the whole gate. A session's failure never
// goes to another session's issue, nor to one orchestrate gate filed. A halted issue holds nothing: its evidence
// is what a person is to look at, and the same failure again is
// waitingFor's.
func holderOf(q *queue.Queue, u results.Unit, tag map[string]string) string {
	whole := ""
	for _, is := range q.All() {
		if !open(is) || isApproval(is) || is.Bool(queue.FieldHalted, false) {
			continue
		}
		tests := is.Tests()
		if len(tests) == 0 {
			if g, _ := is.Get(FieldGate); g == u.Gate && whole == "" && tagged(is, tag) {
				whole = is.ID
			}
			continue
		}
		if slices.Contains(tests, u) && (tagged(is, tag) || sessionOf(is) == "" && !filedByGate(is)) {
			return is.ID
		}
	}
	return whole
}

// filedByGate reports whether a gate filed the issue (its Source).
func filedByGate(is *queue.Issue) bool {
	src, _ := is.Get(queue.FieldSource)
	return src == "gate"
}

// sessionOf is the agent session an issue belongs to, or "".
func sessionOf(is *queue.Issue) string {
	s, _ := is.Get(FieldSession)
	return s
}

// IssuesOf returns the IDs of the issues a failed gate's failure was
// filed or recorded against in this evaluation: one for a gate failing
// as a whole, one per failing test (or the issue holding it) otherwise.
func (gr *GateRun) IssuesOf(name string) []string {
	var ids []string
	for _, a := range gr.Filed[name] {
		ids = append(ids, a.ID)
	}
	if a, ok := gr.Issues[name]; ok && len(ids) == 0 {
		ids = append(ids, a.ID)
	}
	return ids
}

// fileGateFailure files a gate's failure as one issue, or records it
// against the open issue that holds the gate as a whole (openGateIssue).
// The issue lists the gate as its test when the gate's results were read
// (the gate failed before its tests ran, or its runner is unknown).
func (w Workspace) fileGateFailure(ctx context.Context, tx queueTx, now time.Time, cfg *config.Config, r *gate.Result, tag map[string]string) (Added, error) {
	f, findings := gateFailure(r)
	f.Summary = gateSummary(r)
	if id := openGateIssue(tx, r.Name(), tag); id != "" {
		rec, err := w.record(ctx, tx, now, id, f)
		if err != nil {
			return Added{}, err
		}
		if findings != "" {
			err = w.changeIssue(ctx, tx, id, func(is *queue.Issue) error {
				is.SetSection(SectionReviewFindings, findings)
				return nil
			}, nil)
		}
		return Added{ID: id, Deduplicated: true, Recorded: &rec, Signature: rec.Signature, Status: rec.Status}, err
	}
	ni := gateIssue(cfg, r, tag)
	if r.Tests != nil {
		ni.Fields[queue.FieldTests] = queue.FormatTests([]results.Unit{{Gate: r.Name()}})
	}
	if findings != "" {
		ni.Sections[SectionReviewFindings] = findings
	}
	ni.Failure = &f
	return w.addIssue(ctx, tx, now, ni)
}

// gateIssue is the issue a gate's failure files, but for its failure and
// its tests: its fields (the tags among them), its Summary, how to verify
// a fix and the gate's hints.
func gateIssue(cfg *config.Config, r *gate.Result, tag map[string]string) NewIssue {
	fields := map[string]string{
		queue.FieldType:       "bug",
		queue.FieldPriority:   config.PriorityFor(r.Gate.Priority, r.Enforcement()),
		queue.FieldSource:     "gate",
		queue.FieldCategory:   "quality-gate",
		queue.FieldAutoRetry:  "true",
		queue.FieldMaxRetries: strconv.Itoa(cfg.GateMaxRetries(r.Gate)),
		queue.FieldBlocking:   strconv.FormatBool(r.Enforcement() == config.Blocking),
	}
	for k, v := range tag {
		fields[k] = v
	}
	sections := map[string]string{
		queue.SectionSummary:      gateSummary(r),
		queue.SectionVerification: "`" + r.Gate.Command + "`",
	}
	switch {
	case r.Gate.IsHuman():
		sections[queue.SectionVerification] = "A person approves the change: orchestrate approve, once the gate asks again."
	case r.Gate.IsReview():
		sections[queue.SectionVerification] = "The review gate " + r.Name() + " finds nothing at " + r.Gate.FailOn + " or worse."
	}
	if fix := suggestedFix(r.Gate.Hints); fix != "" {
		sections[queue.SectionSuggestedFix] = fix
	}
	return NewIssue{Fields: fields, Sections: sections}
}

// openGateIssue returns the ID of the open issue that holds a gate as a
// whole (see holderOf): one that lists the gate in its Tests, or one the
// gate filed (with the same tags) that lists no tests; or "". A halted
// issue is not one: its evidence (signature, repeat count) is what a
// person is to look at, and a different failure of the gate is an issue
// of its own (the same one is waitingFor's).
func openGateIssue(tx queueTx, name string, tag map[string]string) string {
	q, err := tx.load()
	if err != nil {
		return ""
	}
	return holderOf(q, results.Unit{Gate: name}, tag)
}

// resolvePassingUnits resolves, while gate r fails for other tests, the
// open issues (with the same tags) whose tests are all r's and all pass
// now: fixing one of three bugs resolves its issue, while the others go
// on. Every test that fails now is held by an issue once r's failures are
// filed, so nothing else is to be judged. Stuck and halted issues are
// resolved too, as a passing gate resolves them: what a person was to
// look at is fixed.
func (w Workspace) resolvePassingUnits(ctx context.Context, tx queueTx, now time.Time, r *gate.Result, tag map[string]string) ([]string, error) {
	q, err := tx.load()
	if err != nil {
		return nil, err
	}
	rep := r.Tests
	var ids []string
	for _, is := range q.Issues {
		tests := is.Tests()
		if len(tests) == 0 || !open(is) || isApproval(is) || !tagged(is, tag) ||
			slices.ContainsFunc(tests, func(u results.Unit) bool { return u.Gate != r.Name() || u.ID == "" }) {
			continue
		}
		if v := results.Judge(tests, []results.Report{*rep}, nil); len(v.Own) > 0 {
			continue
		}
		if _, err := w.resolve(ctx, tx, now, is.ID, false); err != nil {
			return ids, err
		}
		ids = append(ids, is.ID)
	}
	return ids, nil
}
