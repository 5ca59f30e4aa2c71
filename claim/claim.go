// Package claim keeps the claims of several agents on one queue: leases
// with a fencing epoch, kept in each issue's table (Claimed-By,
// Lease-Epoch, Lease-Until). Finding the next ready issue and claiming it
// is one step (Next) on a queue the caller holds under the workspace's
// lock, so two agents never get the same issue. A holder renews its lease
// while it works; another takes it over only when the lease has lapsed and
// the holder is known to be gone, and the takeover increments the epoch.
// Every write a holder makes carries its epoch (Fence): an older one is
// refused, so a paused-then-resumed holder cannot undo its successor's
// work.
package claim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// Lease is an issue's claim as its fields say.
type Lease struct {
	Holder string    `json:"holder"` // Claimed-By; "" when no one holds it
	Since  time.Time `json:"since"`  // Claimed-At: when this holder took it
	Epoch  int       `json:"epoch"`  // Lease-Epoch: grows with each new holder
	Until  time.Time `json:"until"`  // Lease-Until; zero when none
}

// DefaultLease is how long a claim lasts unless renewed, when its holder
// asks for no other length.
const DefaultLease = 10 * time.Minute

// MinLease is the shortest lease run --agents gives its agents' claims:
// they renew them every third of it.
const MinLease = 3 * time.Second

// Of reads an issue's lease. A bad epoch or time reads as none (0, zero):
// the queue's validation reports it with its line.
func Of(is *queue.Issue) Lease {
	l := Lease{Epoch: is.Int(queue.FieldLeaseEpoch, 0)}
	if v, ok := is.Get(queue.FieldClaimedBy); ok {
		l.Holder = strings.Trim(strings.TrimSpace(v), "`")
	}
	if v, ok := is.Get(queue.FieldLeaseUntil); ok && strings.TrimSpace(v) != "" {
		l.Until, _ = queue.ParseTime(v)
	}
	if v, ok := is.Get(queue.FieldClaimedAt); ok && strings.TrimSpace(v) != "" {
		l.Since, _ = queue.ParseTime(v)
	}
	return l
}

// Lapsed reports whether the lease has ended at now. A holder with no
// Lease-Until (a person's hand-written claim) never lapses.
func (l Lease) Lapsed(now time.Time) bool {
	return !l.Until.IsZero() && !now.Before(l.Until)
}

// Free reports whether another may claim the issue at now: no one holds
// it, its holder is a process of this machine that has died (at once,
// whatever its lease says: see Dead), or the lease lapsed and its holder
// is gone.
func (l Lease) Free(now time.Time) bool {
	return l.Holder == "" || Dead(l.Holder) || l.Lapsed(now) && Gone(l.Holder)
}

func (l Lease) String() string {
	if l.Holder == "" {
		return fmt.Sprintf("no one (epoch %d)", l.Epoch)
	}
	s := fmt.Sprintf("%s at epoch %d", l.Holder, l.Epoch)
	if !l.Until.IsZero() {
		s += " until " + l.Until.UTC().Format(time.RFC3339)
	}
	return s
}

// HeldError says an issue is held by another.
type HeldError struct {
	ID     string
	Lease  Lease
	Remote string // the git remote the claim is on, if any
}

func (e *HeldError) Error() string {
	release := e.ID
	if e.Remote != "" {
		release += " --remote " + e.Remote
	}
	return fmt.Sprintf("%s is claimed by %s: wait for the lease to end, or release it (orchestrate release %s)", e.ID, e.Lease, release)
}

// FencedError refuses a write made with an epoch older than the issue's.
type FencedError struct {
	ID    string
	Yours int
	Lease Lease
}

func (e *FencedError) Error() string {
	if e.Yours > e.Lease.Epoch || e.Yours <= 0 {
		return fmt.Sprintf("%s: no claim of it is at epoch %d; this write is refused: %s holds it (claim it: orchestrate claim %s, and carry the epoch it gives)", e.ID, e.Yours, holderOr(e.Lease), e.ID)
	}
	if e.Lease.Holder == "" && e.Yours == e.Lease.Epoch {
		return fmt.Sprintf("%s: your claim (epoch %d) was released; this write is refused: no one holds the issue now (claim it again: orchestrate claim %s)", e.ID, e.Yours, e.ID)
	}
	if e.Lease.Holder == "" {
		return fmt.Sprintf("%s: your claim (epoch %d) was taken over, then released; this write is refused: no one holds the issue now (epoch %d)", e.ID, e.Yours, e.Lease.Epoch)
	}
	return fmt.Sprintf("%s: your claim (epoch %d) was taken over; this write is refused: %s holds the issue now (epoch %d)", e.ID, e.Yours, e.Lease.Holder, e.Lease.Epoch)
}

// holderOr is who holds a lease, for a message: "no one" when no one
// does.
func holderOr(l Lease) string {
	if l.Holder == "" {
		return fmt.Sprintf("no one (epoch %d)", l.Epoch)
	}
	return fmt.Sprintf("%s at epoch %d", l.Holder, l.Epoch)
}

// ErrFenced matches every FencedError.
var ErrFenced = errors.New("claim taken over")

func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// MaxEpoch is the greatest epoch a claim is given: the greatest integer
// a JSON reader holds exactly (2^53-1). An issue whose Lease-Epoch is at
// it, or above, is claimed no more (an EpochError): a greater epoch would
// wrap round, below its holders'.
const MaxEpoch = 1<<53 - 1

// EpochError refuses a claim of an issue whose epoch is at MaxEpoch or
// above, or below 0: no epoch can be given above it.
type EpochError struct {
	ID    string
	Epoch int
}

func (e *EpochError) Error() string {
	return fmt.Sprintf("%s: Lease-Epoch %d is out of range (0 to %d): no claim can be given an epoch above it; set it back to the epoch it had", e.ID, e.Epoch, MaxEpoch)
}

// Take claims is for holder until now+ttl. Claiming what one already holds
// renews it (the same epoch); claiming a free issue (see Lease.Free)
// increments the epoch. force takes it from any holder: a person
// reassigning a claim.
func Take(is *queue.Issue, holder string, now time.Time, ttl time.Duration, force bool) (Lease, error) {
	l, err := Of(is).Taken(is.ID, holder, now, ttl, force)
	if err == nil {
		Put(is, l)
	}
	return l, err
}

// Taken is the lease holder gets by claiming issue id whose lease is l
// (see Take); on a HeldError, l.
func (l Lease) Taken(id, holder string, now time.Time, ttl time.Duration, force bool) (Lease, error) {
	if l.Holder == holder && holder != "" {
		l.Until = until(now, ttl)
		return l, nil
	}
	if !force && !l.Free(now) {
		return l, &HeldError{ID: id, Lease: l}
	}
	if l.Epoch >= MaxEpoch || l.Epoch < 0 {
		return l, &EpochError{ID: id, Epoch: l.Epoch}
	}
	return Lease{Holder: holder, Since: now.UTC().Truncate(time.Second), Epoch: l.Epoch + 1, Until: until(now, ttl)}, nil
}

// Renew extends the lease of its holder at epoch to now+ttl.
func Renew(is *queue.Issue, holder string, epoch int, now time.Time, ttl time.Duration) (Lease, error) {
	l, err := Of(is).Renewed(is.ID, holder, epoch, now, ttl)
	if err == nil {
		Put(is, l)
	}
	return l, err
}

// Renewed is issue id's lease l extended by its holder at epoch to
// now+ttl; on a FencedError, l.
func (l Lease) Renewed(id, holder string, epoch int, now time.Time, ttl time.Duration) (Lease, error) {
	if l.Holder != holder || l.Epoch != epoch {
		return l, &FencedError{ID: id, Yours: epoch, Lease: l}
	}
	l.Until = until(now, ttl)
	return l, nil
}

// Release ends the claim of the holder at epoch; epoch 0 releases any
// claim (a person's release). The epoch stays, so that the next holder's
// is greater. It returns the claim that ended.
func Release(is *queue.Issue, epoch int) (Lease, error) {
	cur := Of(is)
	l, err := cur.Released(is.ID, epoch)
	if err != nil {
		return cur, err
	}
	Put(is, l)
	return cur, nil
}

// Released is issue id's lease l ended by its holder at epoch (0: by a
// person, whoever holds it): no holder, the same epoch.
func (l Lease) Released(id string, epoch int) (Lease, error) {
	if epoch != 0 && epoch != l.Epoch {
		return l, &FencedError{ID: id, Yours: epoch, Lease: l}
	}
	return Lease{Epoch: l.Epoch}, nil
}

// Equal reports whether two leases say the same.
func (l Lease) Equal(m Lease) bool {
	return l.Holder == m.Holder && l.Epoch == m.Epoch && l.Since.Equal(m.Since) && l.Until.Equal(m.Until)
}

// Fence refuses a write to is made by a holder at epoch unless epoch is
// the issue's own: a greater issue's epoch (its claim was taken over), a
// smaller one (an epoch no claim of it was given, such as 0 while it is
// claimed), or the same but no one holds it (a person released it). An
// issue never claimed (epoch 0, no holder) takes a write at epoch 0.
func Fence(is *queue.Issue, epoch int) error {
	if cur := Of(is); epoch != cur.Epoch || cur.Holder == "" && epoch > 0 {
		// Taken over, released by a person, or never this epoch: its
		// writer is to stop.
		return &FencedError{ID: is.ID, Yours: epoch, Lease: cur}
	}
	return nil
}

func until(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl).UTC().Truncate(time.Second)
}

// Put writes lease l into an issue's fields: a claim made elsewhere (on a
// git remote) mirrored into the queue.
func Put(is *queue.Issue, l Lease) {
	is.Set(queue.FieldClaimedBy, l.Holder)
	is.Set(queue.FieldClaimedAt, timeField(l.Holder, l.Since))
	is.SetInt(queue.FieldLeaseEpoch, l.Epoch)
	is.Set(queue.FieldLeaseUntil, timeField(l.Holder, l.Until))
}

// timeField is a time as a claim's field holds it: "" when there is no
// holder or no time.
func timeField(holder string, t time.Time) string {
	if holder == "" || t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Ready returns the issues that may be claimed at now, in the order they
// are to be taken: by priority (critical first), then age (Created, then
// ID). It skips those open is false for (resolved, stuck, waiting for a
// person: the caller says), those claimed, those whose epoch is out of
// range (see MaxEpoch), and those whose Touches overlap a claimed
// issue's.
func Ready(q *queue.Queue, now time.Time, open func(*queue.Issue) bool) []*queue.Issue {
	var ready, held []*queue.Issue
	for _, is := range q.Issues {
		if !open(is) {
			continue
		}
		switch l := Of(is); {
		case !l.Free(now):
			held = append(held, is)
		case l.Epoch >= 0 && l.Epoch < MaxEpoch:
			ready = append(ready, is)
		}
	}
	slices.SortStableFunc(ready, func(a, b *queue.Issue) int {
		if c := rank(a) - rank(b); c != 0 {
			return c
		}
		ca, _ := a.Get(queue.FieldCreated)
		cb, _ := b.Get(queue.FieldCreated)
		if c := strings.Compare(strings.TrimSpace(ca), strings.TrimSpace(cb)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return slices.DeleteFunc(ready, func(is *queue.Issue) bool {
		return slices.ContainsFunc(held, func(h *queue.Issue) bool { return Overlap(is, h) })
	})
}

// rank orders priorities: critical, high, medium, low, then anything else.
func rank(is *queue.Issue) int {
	p, _ := is.Get(queue.FieldPriority)
	return rankOf(p)
}

func rankOf(p string) int {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(p), "`")) {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium", "":
		return 2
	case "low":
		return 3
	}
	return 4
}

// Next claims the first ready issue for holder (see Ready): the finding and
// the claiming are one step on the queue. A holder that already holds an
// open issue gets it back, renewed: claiming again is a no-op. nil when
// nothing is ready.
func Next(q *queue.Queue, holder string, now time.Time, ttl time.Duration, open func(*queue.Issue) bool) (*queue.Issue, Lease, error) {
	for _, is := range Candidates(q, holder, now, open) {
		l, err := Take(is, holder, now, ttl, false)
		return is, l, err
	}
	return nil, Lease{}, nil
}

// Candidates returns the issues holder may claim next, in the order Next
// tries them: the open issue it holds, if any, then those Ready.
func Candidates(q *queue.Queue, holder string, now time.Time, open func(*queue.Issue) bool) []*queue.Issue {
	ready := Ready(q, now, open)
	for _, is := range q.Issues {
		if open(is) && Of(is).Holder == holder {
			return append([]*queue.Issue{is}, slices.DeleteFunc(ready, func(r *queue.Issue) bool { return r == is })...)
		}
	}
	return ready
}

// Touches returns the globs an issue's Touches field names.
func Touches(is *queue.Issue) []string { return is.List(queue.FieldTouches) }

// Overlap reports whether two issues name files in common: a glob of one
// matches a glob of the other, or one is a directory prefix of the other.
// Issues that name nothing overlap nothing.
func Overlap(a, b *queue.Issue) bool {
	for _, x := range Touches(a) {
		for _, y := range Touches(b) {
			if globsMeet(x, y) {
				return true
			}
		}
	}
	return false
}

// globsMeet is a cheap test of whether two globs may match a file in
// common: their literal prefixes (up to the first wildcard) are equal or
// one starts with the other.
func globsMeet(x, y string) bool {
	px, py := literalPrefix(x), literalPrefix(y)
	return strings.HasPrefix(px, py) || strings.HasPrefix(py, px)
}

func literalPrefix(g string) string {
	g = strings.TrimPrefix(strings.TrimSpace(g), "./")
	if i := strings.IndexAny(g, "*?[{"); i >= 0 {
		return g[:i]
	}
	return g
}

// Holder names an agent: name@host/pid. Its process is what Gone looks at.
func Holder(name string, pid int) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s@%s/%d", name, host, pid)
}

// Whole reports whether s names a holder whole, NAME@HOST/PID, as Holder
// makes one: a name and a host with no space, @, / or |, and a process.
func Whole(s string) bool {
	host, _, ok := hostPID(s)
	name, _, _ := strings.Cut(s, "@")
	return ok && name != "" && host != "" && !strings.ContainsAny(name+host, "@/|` \t\n")
}

// Gone reports whether a holder is known to be gone: a process on this
// machine that is dead, a zombie, or stopped (a paused process is not
// working). A holder that names no process here (a person, another
// machine) is gone only in that its lease lapsed: Gone says true, and the
// lease decides.
func Gone(holder string) bool {
	host, pid, ok := hostPID(holder)
	if me, _ := os.Hostname(); !ok || host != me {
		return true
	}
	return !alive(pid)
}

// Dead reports whether holder names a process on this machine that has
// ended (or is a zombie): it will never renew its lease, which need not
// be waited for. A stopped process is not dead: it may go on, and its
// lease decides.
func Dead(holder string) bool {
	host, pid, ok := hostPID(holder)
	me, _ := os.Hostname()
	return ok && host == me && !exists(pid)
}

// GoneHere reports whether holder names a process on this machine that is
// gone (see Gone): known gone, whatever its lease says.
func GoneHere(holder string) bool {
	host, pid, ok := hostPID(holder)
	me, _ := os.Hostname()
	return ok && host == me && !alive(pid)
}

// hostPID is the machine and the process a holder names (NAME@HOST/PID);
// false when it names none.
func hostPID(holder string) (host string, pid int, ok bool) {
	at := strings.LastIndexByte(holder, '@')
	slash := strings.LastIndexByte(holder, '/')
	if at < 0 || slash < at {
		return "", 0, false
	}
	pid, err := strconv.Atoi(holder[slash+1:])
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return holder[at+1 : slash], pid, true
}

// brief is what Choose keeps of an open issue, to order the first ones.
type brief struct {
	head, created string
	rank          int
	at            int // its piece's place in the file
}

// before reports whether the issue of rank, created and head comes
// before x: by priority, then age, then heading. It takes the bytes of a
// piece as they are (most issues of a big queue come after the last of
// the first ones: none is copied) or a brief's strings.
func before[S ~string | ~[]byte](rank int, created, head S, x brief) bool {
	switch {
	case rank != x.rank:
		return rank < x.rank
	case string(created) != x.created:
		return string(created) < x.created
	}
	return string(head) < x.head
}

// Choose is for Next on a big queue: from a look at each piece of the file
// (queue.Peek), without parsing it, it picks the pieces Next needs to read:
// every claimed issue's (a holder's own, the Touches of the held), the
// first max open ones by priority and age, and any piece it cannot read at
// a look. more reports whether open issues were left out: if none of
// those read is ready, the whole queue is to be read. It is the choose of
// queue.UpdateChosen: the look at each piece gives the ID it read, and
// keep is asked of each piece by its place in the file.
func Choose(max int) (choose queue.Chooser, more *bool) {
	more = new(bool)
	return func(pieces func(look func(piece []byte) []byte)) func(i int) bool {
		keep := map[int]bool{} // by place in the file
		// The first max open issues, in order, found in one pass: a big
		// queue's pieces are looked at, not copied.
		first := make([]brief, 0, max+1)
		open, i := 0, -1
		v := make([][]byte, 4)
		pieces(func(piece []byte) []byte {
			i++
			id, ok := queue.Peek(piece, v, "status", "priority", "created", "claimedby")
			switch st := v[0]; {
			case !ok:
				// Not read at a look: an issue's piece is parsed, to be safe.
				keep[i] = bytes.HasPrefix(queue.Heading(piece), []byte("##"))
				return nil
			case len(v[3]) != 0:
				keep[i] = true
			case len(st) == 0 || bytes.EqualFold(st, []byte(queue.StatusPending)) || bytes.EqualFold(st, []byte(queue.StatusInProgress)):
				open++
				head, rank := queue.Heading(piece), rankOf(string(v[1]))
				if len(first) == max && (max == 0 || !before(rank, v[2], head, first[max-1])) {
					return id // after all of the first max: never among them
				}
				b := brief{head: string(head), created: string(v[2]), rank: rank, at: i}
				at := slices.IndexFunc(first, func(x brief) bool { return before(b.rank, b.created, b.head, x) })
				if at < 0 {
					at = len(first)
				}
				if at < max {
					first = slices.Insert(first, at, b)[:min(len(first)+1, max)]
				}
			}
			return id
		})
		*more = open > max
		for _, b := range first {
			keep[b.at] = true
		}
		return func(i int) bool { return keep[i] }
	}, more
}
