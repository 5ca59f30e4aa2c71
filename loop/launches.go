package loop

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// LaunchesFile keeps, apart from the queue, the launches and retries this
// machine's runs counted of each open issue: a line "ID LAUNCHES RETRIES".
// The queue's Launch-Count and Retry-Count are the record a person reads,
// but an agent is told where the queue is and can set them back; the runs
// of this machine take the larger of the two, so that a count set back,
// even after the run that counted it has ended or was killed, gives no
// launch past 1 + Max-Retries. Written under LockFile, by the launches
// and, on a remote, by each sync, with the counts it brought (see
// learnCounts); `issue retry` drops an issue's line, here or, through a
// sync, on any machine of a remote.
const LaunchesFile = ".launches"

// launchesMax is the most of LaunchesFile read: a line an issue.
const launchesMax = 64 << 20

// countedLaunches reads LaunchesFile. A line it cannot read is left out.
// The caller holds the lock.
func (w Workspace) countedLaunches() (map[string]counted, error) {
	data, _, err := fsx.ReadFileMax(w.Path(LaunchesFile), launchesMax)
	if err != nil {
		return nil, err
	}
	cs := map[string]counted{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		l, err1 := strconv.Atoi(f[1])
		n, err2 := strconv.Atoi(f[2])
		if err1 == nil && err2 == nil && l >= 0 && n >= 0 {
			was := cs[f[0]]
			cs[f[0]] = counted{launches: max(was.launches, l), retries: max(was.retries, n)}
		}
	}
	return cs, sc.Err()
}

// writeLaunches writes cs to LaunchesFile, keeping the open issues of q
// only (a resolved, skipped or deleted issue's counts are of no more use:
// reopened, it counts from the queue's). The caller holds the lock.
func (w Workspace) writeLaunches(cs map[string]counted, q *queue.Queue) error {
	var live map[string]bool
	if q != nil {
		live = map[string]bool{}
		for _, is := range q.Issues {
			live[is.ID] = open(is)
		}
	}
	ids := make([]string, 0, len(cs))
	for id := range cs {
		if q == nil || live[id] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var b bytes.Buffer
	for _, id := range ids {
		if !strings.ContainsAny(id, " \t\n") {
			fmt.Fprintf(&b, "%s %d %d\n", id, cs[id].launches, cs[id].retries)
		}
	}
	return fsx.WriteFile(w.Path(LaunchesFile), b.Bytes(), 0o644)
}

// forgetLaunches drops the lines of ids from LaunchesFile: a person gave
// them a fresh start. The caller holds the lock.
func (w Workspace) forgetLaunches(ids ...string) error {
	cs, err := w.countedLaunches()
	if err != nil || len(cs) == 0 {
		return err
	}
	n := len(cs)
	for _, id := range ids {
		delete(cs, id)
	}
	if len(cs) == n {
		return nil
	}
	return w.writeLaunches(cs, nil)
}

// learnCounts keeps in LaunchesFile the counts of the queue a sync left
// (synced), where they are above what it holds: launches made on other
// machines are counted here too, so that a save of what was read before
// the sync, which sets them back in this machine's file, gives this
// machine no launch past them either. The issues of retried, which
// another machine's `issue retry` gave a fresh start, take the queue's
// counts as they are. cs is LaunchesFile as read under the lock the
// caller holds; learnCounts changes it.
func (w Workspace) learnCounts(cs map[string]counted, retried []string, synced []byte) error {
	changed := false
	for _, id := range retried {
		if _, ok := cs[id]; ok {
			delete(cs, id)
			changed = true
		}
	}
	q := queue.Parse(synced)
	for _, is := range q.Issues {
		if !open(is) {
			continue
		}
		was := cs[is.ID]
		now := counted{launches: max(was.launches, is.Int(queue.FieldLaunchCount, 0)), retries: max(was.retries, is.Int(queue.FieldRetryCount, 0))}
		if now != was && (now.launches > 0 || now.retries > 0) {
			cs[is.ID], changed = now, true
		}
	}
	if !changed {
		return nil
	}
	return w.writeLaunches(cs, q)
}

// retriedOn returns the issues whose Launch-Count went down from base to
// theirs: another machine's `issue retry`, learnt at a sync.
func retriedOn(base, theirs []byte) []string {
	if bytes.Equal(base, theirs) {
		return nil // no other machine changed the queue: most syncs
	}
	was := map[string]int{}
	for _, is := range queue.Parse(base).Issues {
		was[is.ID] = is.Int(queue.FieldLaunchCount, 0)
	}
	var ids []string
	for _, is := range queue.Parse(theirs).Issues {
		if is.Int(queue.FieldLaunchCount, 0) < was[is.ID] {
			ids = append(ids, is.ID)
		}
	}
	return ids
}

// raiseCounts sets back up, in the queue's text ours, each count below
// what this machine counted (see LaunchesFile): a sync never shares a
// count set back here, by an agent or by a save of what was read before
// a launch, with the machine that takes the issue over next. ours as it
// is when nothing is below, or when it cannot be read whole.
func raiseCounts(ours []byte, cs map[string]counted) []byte {
	if len(cs) == 0 {
		return ours
	}
	q := queue.Parse(ours)
	if len(q.Problems) > 0 {
		return ours
	}
	for _, is := range q.Issues {
		c, ok := cs[is.ID]
		if !ok {
			continue
		}
		if is.Int(queue.FieldLaunchCount, 0) < c.launches {
			is.SetInt(queue.FieldLaunchCount, c.launches)
		}
		if is.Int(queue.FieldRetryCount, 0) < c.retries {
			is.SetInt(queue.FieldRetryCount, c.retries)
		}
	}
	if !q.Changed() {
		return ours
	}
	return q.Bytes()
}
