package loop

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// counted is what a run counted of an issue itself: the launches and the
// retries it wrote. The queue's file is the record, but an agent can
// write it; the run's own count is the floor of what the file may say.
type counted struct{ launches, retries int }

// spendLaunch counts a loop's launch, before it starts, against each
// issue it works on (Launch-Count + 1), under the lock. A launch that no
// check gave an auto-retry issue (the first of a run after a kill, a cap
// or --max-loops) is a retry all the same: Retry-Count follows it. An
// issue whose launches would pass 1 + Max-Retries gets none: it is stuck,
// out of attempts, and waits for a person. A result ends the run: the
// issue of one of several agents is out of attempts, or, with no task,
// every open issue is.
func (r *runner) spendLaunch(ctx context.Context) (*RunResult, error) {
	var spent, refused []spentRef
	var lowered []string
	err := r.w.withLock(ctx, func() error {
		ledger, err := r.w.countedLaunches()
		if err != nil {
			return err
		}
		var saved *queue.Queue
		err = r.w.updateQueue(func(q *queue.Queue) error {
			spent, refused, lowered, saved = nil, nil, nil, q
			for _, is := range q.Issues {
				if !r.launchedOn(is) {
					continue
				}
				ref, ok, low := r.spend(is, ledger[is.ID])
				lowered = append(lowered, low...)
				if ok {
					spent = append(spent, ref)
				} else {
					refused = append(refused, ref)
				}
			}
			return nil
		})
		if err != nil || len(spent) == 0 {
			return err
		}
		// Counted apart from the queue before the launch starts: a kill
		// after it, and a count set back in the queue, leave it counted.
		for _, ref := range spent {
			ledger[ref.ID] = counted{launches: ref.launches, retries: ref.RetryCount}
		}
		return r.w.writeLaunches(ledger, saved)
	})
	if err != nil {
		return r.fail(ctx, err)
	}
	r.sayLowered(lowered)
	for _, ref := range spent {
		r.note(ref.ID, counted{launches: ref.launches, retries: ref.RetryCount})
	}
	if len(refused) == 0 || len(spent) > 0 || r.task != "" && r.scope.Issue() == "" {
		return nil, nil
	}
	for _, ref := range refused {
		r.res.Stuck = append(r.res.Stuck, ref.IssueRef)
	}
	return r.end(ctx, RunHalted, "no launch is left for "+ids(r.res.Stuck)+": each had 1 + Max-Retries; they wait for a person")
}

// launchedOn reports whether loop's launch works on is: the claimed issue
// of one of several agents, or each open issue of one agent's prompt.
func (r *runner) launchedOn(is *queue.Issue) bool {
	if st := is.Status(); st != queue.StatusPending && st != queue.StatusInProgress || isApproval(is) {
		return false
	}
	id := r.scope.Issue()
	return id == "" || is.ID == id
}

// spentRef is an issue's reference with its launches.
type spentRef struct {
	IssueRef
	launches int
}

// spend counts one launch on is, from the larger of the file's counts,
// the run's own and this machine's (LaunchesFile: past counted); a count
// that went down is said in lowered. False when none is left.
func (r *runner) spend(is *queue.Issue, past counted) (ref spentRef, ok bool, lowered []string) {
	ref.IssueRef = IssueRef{ID: is.ID, Summary: summaryOf(is),
		RetryCount: is.Int(queue.FieldRetryCount, 0), MaxRetries: is.Int(queue.FieldMaxRetries, r.cfg.Retry.MaxRetries)}
	ref.launches = is.Int(queue.FieldLaunchCount, 0)
	own := r.own[is.ID]
	own = counted{launches: max(own.launches, past.launches), retries: max(own.retries, past.retries)}
	if own.launches > ref.launches {
		lowered = append(lowered, r.lowered(is.ID, queue.FieldLaunchCount, own.launches, ref.launches))
		ref.launches = own.launches
	}
	if own.retries > ref.RetryCount {
		lowered = append(lowered, r.lowered(is.ID, queue.FieldRetryCount, own.retries, ref.RetryCount))
		ref.RetryCount = own.retries
	}
	is.SetInt(queue.FieldRetryCount, ref.RetryCount)
	if ref.launches >= 1+ref.MaxRetries {
		is.SetInt(queue.FieldLaunchCount, ref.launches)
		ref.Reason = ReasonExhausted
		is.Set(queue.FieldStatus, queue.StatusStuck)
		is.Set(FieldHaltReason, ReasonExhausted)
		return ref, false, lowered
	}
	ref.launches++
	if is.Bool(queue.FieldAutoRetry, false) && ref.launches > 1+ref.RetryCount {
		ref.RetryCount = ref.launches - 1
		is.SetInt(queue.FieldRetryCount, ref.RetryCount)
	}
	is.SetInt(queue.FieldLaunchCount, ref.launches)
	return ref, true, lowered
}

// lowered says that a count of the run went down in the file.
func (r *runner) lowered(id, field string, own, file int) string {
	return fmt.Sprintf("%s: %s went down from %d to %d in %s, not by this run; the run counts %d", id, field, own, file, r.w.Path(QueueFile), own)
}

// sayLowered warns of each count that went down.
func (r *runner) sayLowered(lowered []string) {
	for _, l := range lowered {
		_ = r.w.warn(errors.New(l))
	}
}

// keepCounts puts the run's own counts back where the file says less,
// once the agent has exited: the issues' launches and retries, and the
// run's total_auto_retries. Each count that went down is said.
func (r *runner) keepCounts(ctx context.Context) error {
	var lowered []string
	err := r.w.withLock(ctx, func() error {
		if len(r.own) > 0 {
			err := r.w.updateQueue(func(q *queue.Queue) error {
				lowered = nil
				for _, is := range q.Issues {
					own, ok := r.own[is.ID]
					if !ok {
						continue
					}
					for _, c := range []struct {
						field string
						n     int
					}{{queue.FieldLaunchCount, own.launches}, {queue.FieldRetryCount, own.retries}} {
						if file := is.Int(c.field, 0); file < c.n {
							lowered = append(lowered, r.lowered(is.ID, c.field, c.n, file))
							is.SetInt(c.field, c.n)
						}
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return r.keepTotal(&lowered)
	})
	r.sayLowered(lowered)
	return err
}

// keepTotal puts the run's total_auto_retries back in the state where
// the file says less.
func (r *runner) keepTotal(lowered *[]string) error {
	if r.total == 0 {
		return nil
	}
	return session.Update(r.w.Path(StateFile), func(s *session.State) error {
		if file := s.TotalAutoRetries(); file < r.total {
			*lowered = append(*lowered, fmt.Sprintf("%s went down from %d to %d in %s, not by this run; the run counts %d",
				session.TotalAutoRetries, r.total, file, r.w.Path(StateFile), r.total))
			s.Set(session.TotalAutoRetries, strconv.Itoa(r.total))
		}
		return nil
	})
}

// countedCheck notes what a check counted: the retries of the issues it
// retried, and the run's total.
func (r *runner) countedCheck(chk CheckResult) {
	r.total = max(r.total, chk.TotalAutoRetries)
	for _, ref := range chk.Retried {
		r.note(ref.ID, counted{retries: ref.RetryCount})
	}
}

// note raises the run's own counts of issue id to c's.
func (r *runner) note(id string, c counted) {
	if r.own == nil {
		r.own = map[string]counted{}
	}
	was := r.own[id]
	r.own[id] = counted{launches: max(was.launches, c.launches), retries: max(was.retries, c.retries)}
}
