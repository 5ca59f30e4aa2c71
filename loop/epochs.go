package loop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// EpochsFile keeps the highest epoch given to each issue's claims, and
// to whom, apart from the queue: a person's hand edit, or an editor's save of what it
// read before a claim, can set an issue's Lease-Epoch back, and an epoch
// is never to be given twice, nor an old holder's writes let in again.
// Written under LockFile, by the claims alone.
const EpochsFile = ".epochs"

// epochsMax is the most of EpochsFile read: a line an issue.
const epochsMax = 64 << 20

// given is an epoch given to an issue's claim, and its holder.
type given struct {
	epoch  int
	holder string
}

// givenEpochs reads EpochsFile: the highest epoch given to each issue's
// claims. A line it cannot read is left out. The caller holds the lock.
func (w Workspace) givenEpochs() (map[string]given, error) {
	data, _, err := fsx.ReadFileMax(w.Path(EpochsFile), epochsMax)
	if err != nil {
		return nil, err
	}
	gs := map[string]given{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		e, err := strconv.Atoi(f[1])
		if err == nil && e > 0 && e <= claim.MaxEpoch && e > gs[f[0]].epoch {
			g := given{epoch: e}
			if len(f) > 2 {
				g.holder = f[2]
			}
			gs[f[0]] = g
		}
	}
	return gs, sc.Err()
}

// noteEpoch records in EpochsFile that lease l was given to issue id's
// claim, when its epoch is above what gs, as read, says. The caller holds
// the lock.
func (w Workspace) noteEpoch(gs map[string]given, id string, l claim.Lease) error {
	if l.Epoch <= gs[id].epoch || strings.ContainsAny(id+l.Holder, " \t\n") {
		return nil
	}
	gs[id] = given{epoch: l.Epoch, holder: l.Holder}
	ids := make([]string, 0, len(gs))
	for id := range gs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b bytes.Buffer
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %d %s\n", id, gs[id].epoch, gs[id].holder)
	}
	return fsx.WriteFile(w.Path(EpochsFile), b.Bytes(), 0o644)
}

// raiseEpochs sets back up the Lease-Epoch of each of q's issues that is
// below the epoch given to its claims (see EpochsFile): the next claim
// then gets an epoch never given, and a holder's fence is checked against
// the epoch it really is at. A claim of such an issue by another than the
// holder the epoch was given to is an old one, put back by a save of what
// was read before a later claim: it is ended, lest its holder be taken
// for the later epoch's.
func raiseEpochs(q *queue.Queue, gs map[string]given) {
	for _, is := range q.Issues {
		g, l := gs[is.ID], claim.Of(is)
		switch {
		case l.Epoch >= g.epoch:
		case l.Holder != "" && l.Holder == g.holder:
			is.SetInt(queue.FieldLeaseEpoch, g.epoch)
		default:
			claim.Put(is, claim.Lease{Epoch: g.epoch})
		}
	}
}

// learnEpoch notes in EpochsFile the lease l of issue id, as the remote
// holds it, under the lock: a claim taken over elsewhere, which fences
// its old holder here from then on.
func (w Workspace) learnEpoch(ctx context.Context, id string, l claim.Lease) error {
	return w.withLock(ctx, func() error {
		gs, err := w.givenEpochs()
		if err != nil {
			return err
		}
		return w.noteEpoch(gs, id, l)
	})
}

// staleHere returns the issues of ours whose claim this machine knows was
// taken over elsewhere: EpochsFile holds a greater epoch than the queue's,
// given to another holder. What the queue's holder changed of them since
// the last sync was written fenced, and is not to be shared (see
// queue.Revert).
func staleHere(ours []byte, gs map[string]given) []string {
	var ids []string
	for _, is := range queue.Parse(ours).Issues {
		if l, g := claim.Of(is), gs[is.ID]; l.Holder != "" && l.Epoch < g.epoch && l.Holder != g.holder {
			ids = append(ids, is.ID)
		}
	}
	return ids
}

// staleSince returns the issues whose changes since the last sync (base)
// an old holder made here, fenced (see staleHere): held by it in ours, or
// held by it at the last sync and not claimed here since at the epoch
// given. The machine that took the issue over, whose queue holds its own
// claim at the epoch given, or its Lease-Epoch once the claim was let go,
// has changed it as its holder: none of its are stale.
func staleSince(base, ours []byte, gs map[string]given) []string {
	now := staleHere(ours, gs)
	epochs := map[string]int{}
	for _, is := range queue.Parse(ours).Issues {
		epochs[is.ID] = claim.Of(is).Epoch
	}
	for _, id := range staleHere(base, gs) {
		if epochs[id] < gs[id].epoch && !slices.Contains(now, id) {
			now = append(now, id)
		}
	}
	return now
}
