package results

import (
	"slices"
	"strings"
)

// Verdict is what an attempt at one issue comes to: its results judged
// against the baseline's.
type Verdict struct {
	// Pass is true when the attempt is done: no unit the issue holds
	// fails, nothing regressed, and, for an issue that holds no unit on a
	// baseline that had failures, some of them now pass.
	Pass bool
	// Own are the units the issue holds that fail now, or that cannot be
	// seen to pass (their gate did not run, or ran and did not list them).
	Own []Failed
	// Regressions fail now and did not fail on the baseline: a test, a
	// finding, or a gate that passed there and fails now as a whole.
	Regressions []Failed
	// Fixed failed on the baseline and pass now.
	Fixed []Unit
	// Others fail now as they failed on the baseline and are not the
	// issue's: they neither block the attempt nor reach its feedback.
	Others []Failed
	// Learned, for an issue that holds no unit, are the baseline's
	// failures the attempt turned green: they become the tests.
	Learned []Unit
	// NothingFixed is true when an issue that holds no unit was tried on
	// a baseline with failures, and none of them passes now: not a pass.
	NothingFixed bool
}

// Counted are the failures that count against the issue: its own, then
// the regressions. Their Text is the attempt's failure.
func (v *Verdict) Counted() []Failed {
	return append(slices.Clone(v.Own), v.Regressions...)
}

// Judge judges an attempt at an issue that holds the units own, whose
// gates reported now, against the baseline base (nil when there is none:
// then nothing failed there). The rules:
//
//   - A unit the issue holds fails when it is among the failures, when
//     it is a whole gate (ID "") and that gate has any failure, or when
//     its gate failed as a whole. It passes only when its gate ran and
//     either listed it as passed or lists only failures (Passed nil) and
//     did not fail as a whole; otherwise it counts as failing too.
//   - Any other failure is a regression unless it failed on the baseline
//     too, or its gate failed there as a whole (then the units behind
//     that failure could not be told apart): those are Others. A gate
//     absent from the baseline passed there.
//   - Fixed are the baseline's failures that pass now, by the same rule
//     as the issue's own units.
//   - Pass: no own unit fails and nothing regressed. When own is empty
//     and the baseline had failures, Fixed become Learned, and an attempt
//     that fixed none of them is not a pass (NothingFixed).
func Judge(own []Unit, now, base []Report) Verdict {
	var v Verdict
	nowBy, baseBy := byGate(now), byGate(base)
	baseFailed := map[Unit]bool{}
	for i := range base {
		for _, f := range base[i].Failed {
			baseFailed[f.Unit] = true
		}
	}
	for i := range now {
		r := &now[i]
		for _, f := range r.Failed {
			switch {
			case holds(own, r, f.Unit):
				v.Own = append(v.Own, f)
			case baseFailed[f.Unit] || wholeFailed(baseBy[f.Gate]):
				v.Others = append(v.Others, f)
			default:
				v.Regressions = append(v.Regressions, f)
			}
		}
	}
	for _, u := range own {
		if why := notSeenPassing(u, nowBy[u.Gate], baseBy[u.Gate]); why != "" && !slices.ContainsFunc(v.Own, func(f Failed) bool { return covers(u, f.Unit) }) {
			v.Own = append(v.Own, Failed{Unit: u, Block: why})
		}
	}
	for i := range base {
		for _, f := range base[i].Failed {
			if notSeenPassing(f.Unit, nowBy[f.Gate], baseBy[f.Gate]) == "" && !failing(now, f.Unit) {
				v.Fixed = append(v.Fixed, f.Unit)
			}
		}
	}
	v.Pass = len(v.Own) == 0 && len(v.Regressions) == 0
	if len(own) == 0 && len(baseFailed) > 0 {
		v.Learned = slices.Clone(v.Fixed)
		v.NothingFixed = len(v.Fixed) == 0
		v.Pass = v.Pass && !v.NothingFixed
	}
	return v
}

// byGate indexes reports by their gate.
func byGate(reports []Report) map[string]*Report {
	m := make(map[string]*Report, len(reports))
	for i := range reports {
		m[reports[i].Gate] = &reports[i]
	}
	return m
}

// wholeFailed reports whether r failed as one unit, the gate itself.
func wholeFailed(r *Report) bool { return r != nil && r.Whole && !r.Passing() }

// holds reports whether the issue that holds own holds u, a failure of
// r: u itself, its whole gate, or, when r failed as a whole, any unit of
// that gate.
func holds(own []Unit, r *Report, u Unit) bool {
	return slices.ContainsFunc(own, func(o Unit) bool {
		return covers(o, u) || o.Gate == u.Gate && u.ID == "" && r.Whole
	})
}

// covers reports whether the unit o, held by an issue, covers the failed
// unit u: the same, or o is u's whole gate.
func covers(o, u Unit) bool { return o == u || o.ID == "" && o.Gate == u.Gate }

// failing reports whether u fails in reports: itself, or its gate as a
// whole, or (for a whole gate) any unit of it.
func failing(reports []Report, u Unit) bool {
	for i := range reports {
		r := &reports[i]
		if r.Gate != u.Gate {
			continue
		}
		if wholeFailed(r) || u.ID == "" && !r.Passing() {
			return true
		}
		if slices.ContainsFunc(r.Failed, func(f Failed) bool { return f.Unit == u }) {
			return true
		}
	}
	return false
}

// notSeenPassing says why u cannot be seen to pass in its gate's report
// r, or "" when it can (or fails: failing tells that apart). b is the
// gate's report on the baseline, nil when there is none: a gate whose
// output was read as a test runner's there and is read as no runner's
// now (it printed nothing that runner prints) shows no test passing.
func notSeenPassing(u Unit, r, b *Report) string {
	listed := r != nil && slices.ContainsFunc(r.Failed, func(f Failed) bool { return f.Unit == u })
	switch {
	case r == nil:
		return u.Gate + " did not run, so " + u.String() + " was not seen to pass.\n"
	case u.ID == "" || !r.Passing() && r.Whole || listed:
		return ""
	case r.Passed != nil && !seenPassing(r, b, u.ID):
		return u.String() + " was not among the tests " + u.Gate + " ran: was it renamed, skipped or removed?\n"
	case r.Runner == "" && b != nil && b.Runner != "" && b.Runner != "lint":
		return u.Gate + "'s output was read as " + b.Runner + "'s on the baseline and as no runner's now (it printed none of its lines): " + u.String() + " was not seen to run.\n"
	}
	return ""
}

// seenPassing reports whether r lists id as passed, or a file that stands
// for all of its tests (vitest's "✓ file (N tests)": it lists the tests of
// a file only when one of them failed): id's part before a " › ". A file
// listed with tests skipped (skippedIn) stands for them only when b, the
// baseline's report, lists it the same way: as many skipped before.
func seenPassing(r, b *Report, id string) bool {
	if slices.Contains(r.Passed, id) {
		return true
	}
	for i := strings.Index(id, " › "); i >= 0; {
		file := id[:i]
		if slices.Contains(r.Passed, file) {
			return true
		}
		if b != nil && slices.ContainsFunc(r.Passed, func(p string) bool {
			return strings.HasPrefix(p, file+" (") && slices.Contains(b.Passed, p)
		}) {
			return true
		}
		j := strings.Index(id[i+len(" › "):], " › ")
		if j < 0 {
			break
		}
		i += len(" › ") + j
	}
	return false
}
