package pool

import (
	"context"
	"fmt"
	"slices"
)

// maxLostRaces is how many races for the branch a car may lose, each a
// fast-forward refused because commits not the train's (a person's) came
// onto the branch while its gates ran, before it lands without running
// them again, or leaves.
const maxLostRaces = 3

// BusyError is a car that left the train without landing: the branch got
// commits that touch its files faster than its gates run.
type BusyError struct {
	Issue  string
	Branch string   // the integration branch
	Work   string   // the branch its work stays on
	Lost   int      // the races it lost
	Files  []string // the files both its work and the branch's new commits change
	Reason string   // why it could not land unchecked, when not Files
}

func (e *BusyError) Error() string {
	why := e.Reason
	if len(e.Files) > 0 {
		why = "the last of them change its files too (" + listSome(e.Files, 5) + "), so its gates must run again"
	}
	return fmt.Sprintf("%s is not merged: %s got commits not the merge train's before each of its %d fast-forwards, and %s; its work stays on %s, and the issue is left for the next run, when %s is quieter",
		e.Issue, e.Branch, e.Lost, why, e.Work, e.Branch)
}

// lostRace is c's fast-forward refused because the branch moved to head,
// by commits not the train's; c is the front car, and t.mu is held. The
// first maxLostRaces-1 times the whole train goes onto head and is
// checked again, as for any move of the branch. From the maxLostRaces-th,
// c goes onto head without its gates running again when the commits it
// lost to touch none of the files it changes, and lands at once, a step
// of milliseconds where its gates lost the race each time: lostRace then
// reports true, and advance goes on with c. When they touch its files, or
// after 2*maxLostRaces races, c leaves with a BusyError.
func (t *train) lostRace(ctx context.Context, c *car, head string) bool {
	c.lost++
	issue, branch := c.tree.Issue, t.land.Rev()
	if c.lost < maxLostRaces {
		t.say(fmt.Errorf("%s got commits not the merge train's while the gates of %s ran (race %d lost; from race %d on, it is merged without its gates running again when the commits change none of its files): the train goes onto them, and its gates run again",
			branch, issue, c.lost, maxLostRaces))
		t.base = head
		t.rebuild(ctx, 0)
		return false
	}
	busy := &BusyError{Issue: issue, Branch: branch, Work: c.tree.Branch, Lost: c.lost}
	if c.lost >= 2*maxLostRaces {
		busy.Reason = "it lost even the fast-forwards made without running its gates again"
	} else if err := t.unchecked(ctx, c, head, busy); err != nil {
		busy.Reason = err.Error()
	}
	if busy.Reason == "" && len(busy.Files) == 0 {
		t.say(fmt.Errorf("%s got commits not the merge train's while the gates of %s ran (race %d lost): they change none of its files, so it is merged onto them without running its gates again",
			branch, issue, c.lost))
		return true
	}
	t.cars = t.cars[1:]
	t.gone()
	c.done <- carResult{err: busy}
	t.base = head
	t.rebuild(ctx, 0)
	return false
}

// unchecked puts c, the front car, onto head without a check when the
// commits between the train's base and head change none of its files;
// those it shares with them go into busy.Files. The cars behind it are
// put onto it, and checked again. t.mu is held.
func (t *train) unchecked(ctx context.Context, c *car, head string, busy *BusyError) error {
	theirs, err := t.repo.Touched(ctx, t.base, head, ".")
	if err != nil {
		return err
	}
	ours, err := t.repo.Touched(ctx, c.upstream, c.head, ".")
	if err != nil {
		return err
	}
	for _, f := range ours {
		if slices.Contains(theirs, f) {
			busy.Files = append(busy.Files, f)
		}
	}
	if len(busy.Files) > 0 {
		return nil
	}
	if err := c.tree.RebaseOnto(ctx, head, c.upstream); err != nil {
		return err
	}
	if c.head, err = t.repo.Head(ctx, c.tree.Branch); err != nil {
		return err
	}
	c.upstream, t.base = head, head
	c.gen++ // its check stands: the files it checked are as they were
	c.carried = true
	t.rebuild(ctx, 1)
	return nil
}

// say tells the person what the train waits for.
func (t *train) say(err error) {
	if t.warn != nil {
		t.warn(err)
	}
}
