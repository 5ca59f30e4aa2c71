package loop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// budgetRunner is a run of one agent on a queue of one issue, whose
// warnings are kept in said.
func budgetRunner(t *testing.T, fields ...string) (r *runner, said *[]string) {
	t.Helper()
	w := ruleWorkspace(t, "", "# Queue\n\n"+issueText("ISSUE-20241213-001", append([]string{"Status", "in_progress"}, fields...)...))
	said = &[]string{}
	w.Notify = func(msg string) { *said = append(*said, msg) }
	r = &runner{w: w, cfg: config.Default(), res: &RunResult{}, opt: RunOptions{Now: func() time.Time { return ruleNow }}}
	r.scope = oneAgent{r}
	return r, said
}

// The run's own count of an issue is the floor of what the file may say:
// a launch counts from the larger of the two, for launches and retries
// each, and says a count that went down; at 1 + Max-Retries launches,
// whichever says it, there is none left. Once its agent exited, the run
// puts its counts back where the file says less, and says so.
func TestRunKeepsItsOwnCount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, said := budgetRunner(t, "Max-Retries", "4", "Launch-Count", "1", "Retry-Count", "0")
	r.note("ISSUE-20241213-001", counted{launches: 3})
	r.note("ISSUE-20241213-001", counted{retries: 2})
	r.note("ISSUE-20241213-001", counted{launches: 1, retries: 1}) // never lower
	if got := r.own["ISSUE-20241213-001"]; got != (counted{launches: 3, retries: 2}) {
		t.Fatalf("own = %+v; want the larger of each: {3 2}", got)
	}
	if res, err := r.spendLaunch(ctx); res != nil || err != nil {
		t.Fatalf("spendLaunch = %+v, %v; want a launch", res, err)
	}
	is := loadIssue(t, r.w, "ISSUE-20241213-001")
	if l, c := is.Int(queue.FieldLaunchCount, 0), is.Int(queue.FieldRetryCount, 0); l != 4 || c != 2 {
		t.Errorf("after a launch: Launch-Count %d, Retry-Count %d; want 4 (the run's 3, + 1) and 2 (the run's)", l, c)
	}
	if s := strings.Join(*said, "\n"); !strings.Contains(s, "Launch-Count went down from 3 to 1") || !strings.Contains(s, "Retry-Count went down from 2 to 0") {
		t.Errorf("said %q; want both counts that went down", s)
	}

	// The agent sets both back; the run puts them back, and says so.
	*said = nil
	setFields(t, r.w, "Launch-Count", "0", "Retry-Count", "0")
	if err := r.keepCounts(ctx); err != nil {
		t.Fatal(err)
	}
	is = loadIssue(t, r.w, "ISSUE-20241213-001")
	if l, c := is.Int(queue.FieldLaunchCount, 0), is.Int(queue.FieldRetryCount, 0); l != 4 || c != 2 {
		t.Errorf("once the agent exited: Launch-Count %d, Retry-Count %d; want 4 and 2", l, c)
	}
	if len(*said) != 2 {
		t.Errorf("said %q; want the two counts that went down", *said)
	}

	// The last launch, then none: 1 + Max-Retries is 5.
	if res, err := r.spendLaunch(ctx); res != nil || err != nil {
		t.Fatalf("the 5th launch: %+v, %v; want it", res, err)
	}
	setFields(t, r.w, "Launch-Count", "0")
	res, err := r.spendLaunch(ctx)
	if err != nil || res == nil || res.Outcome != RunHalted {
		t.Fatalf("a 6th launch: %+v, %v; want none, halted", res, err)
	}
	if is := loadIssue(t, r.w, "ISSUE-20241213-001"); is.Status() != queue.StatusStuck || is.Int(queue.FieldLaunchCount, 0) != 5 {
		t.Errorf("after the refused launch: %s at Launch-Count %d; want stuck at 5", is.Status(), is.Int(queue.FieldLaunchCount, 0))
	}
}

// The run's total of auto-retries is the larger of its own and a
// check's, and is put back in the state where the file says less.
func TestRunKeepsItsOwnTotal(t *testing.T) {
	t.Parallel()
	r, said := budgetRunner(t)
	r.countedCheck(CheckResult{TotalAutoRetries: 5})
	r.countedCheck(CheckResult{TotalAutoRetries: 1}) // the file set back
	if r.total != 5 {
		t.Fatalf("total = %d; want 5, the larger", r.total)
	}
	if err := r.keepCounts(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := session.Load(r.w.Path(StateFile))
	if err != nil || st.TotalAutoRetries() != 5 || len(*said) != 1 {
		t.Errorf("total_auto_retries = %d (%v), said %q; want 5, said once", st.TotalAutoRetries(), err, *said)
	}
}

// setFields sets fields of the one issue in the file, as an agent would.
func setFields(t *testing.T, w Workspace, kv ...string) {
	t.Helper()
	err := w.updateQueue(func(q *queue.Queue) error {
		for i := 0; i+1 < len(kv); i += 2 {
			q.Issues[0].Set(kv[i], kv[i+1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
