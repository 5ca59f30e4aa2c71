package remote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
)

// Prefix is where the claims live on the remote: Prefix+issue.
const Prefix = "refs/orchestrate/claims/"

// Ref is the ref of issue id's claim on the remote.
func Ref(id string) string { return Prefix + id }

// seen is where this clone keeps its view of the remote's claims.
func (r *Remote) seen() string { return "refs/orchestrate/remote/" + r.name + "/claims/" }

// Record is an issue's claim as its ref on the remote holds it.
type Record struct {
	ID string
	claim.Lease
	Sha string // the commit the ref points to; "" when there is no ref
	// Written is the record's committer time: the clock of the machine
	// that pushed it, read just before the push.
	Written time.Time
	// Err is a *BadRecordError when the ref holds what orchestrate did
	// not write: the claim is then neither free nor held.
	Err error
	// Skew, when not nil, says the record's times disagree with this
	// machine's clock, or with the record it replaced, by more than Margin.
	Skew *SkewError
}

// BadRecordError says that a claim's ref on the remote holds what
// orchestrate does not write: no one may take the issue through it, nor
// is it held, until a person deletes the ref.
type BadRecordError struct {
	Ref, Remote string
	What        string // what is wrong: "not a claim orchestrate wrote (…)"
}

// Error is the line of a command that changes this one claim: it changed
// nothing.
func (e *BadRecordError) Error() string { return e.line("nothing changed") }

// Skipped is the line of claim --next, which skipped the issue.
func (e *BadRecordError) Skipped() string { return e.line("skipped") }

func (e *BadRecordError) line(done string) string {
	return fmt.Sprintf("%s on %s: %s; %s: delete it with git push %s --delete %s", e.Ref, e.Remote, e.What, done, e.Remote, e.Ref)
}

// Margin is how far apart the clocks of two machines may be before a
// record's times say so (SkewError): well above what NTP keeps clocks to
// and the whole seconds git keeps times in, and well below the 40 s a
// live holder's lease keeps ahead of its end when renewed every third of
// the shortest lease orchestrate gives (run --agents: a minute).
const Margin = 10 * time.Second

// SkewError says that a claim's record shows two clocks further apart
// than Margin: leases, which each machine judges by its own clock, cannot
// be judged.
type SkewError struct {
	ID, Remote string
	By         time.Duration // how far apart, in whole seconds
	// Replaced: the record was written By before the record it replaced
	// (it was pushed from that record, so after it); otherwise By ahead of
	// this machine's clock, read after the record was read.
	Replaced bool
	// Here: the record replaced was written on this machine (its holder's).
	Here bool
}

func (e *SkewError) Error() string {
	s := int(e.By / time.Second)
	what := fmt.Sprintf("was written %ds ahead of this machine's clock", s)
	switch {
	case e.Replaced && e.Here:
		what = fmt.Sprintf("was written %ds before the one this machine wrote, which it replaced: this machine's clock is ahead", s)
	case e.Replaced:
		what = fmt.Sprintf("was written %ds before the one it replaced: the clocks of the machines that wrote them disagree", s)
	}
	return fmt.Sprintf("clock skew: the claim of %s on %s %s (more than the margin of %ds); set the clocks right (NTP)", e.ID, e.Remote, what, int(Margin/time.Second))
}

// Fetch brings this clone's view of every claim on the remote up to date,
// in one round trip to the remote, and returns the claims by issue. A
// record that replaced the one this clone saw before, and was written
// more than Margin before it, has a SkewError.
func (r *Remote) Fetch(ctx context.Context) (map[string]Record, error) {
	before, err := r.read(ctx, r.seen())
	if err != nil {
		return nil, err
	}
	err = r.fetch(ctx, true, "+"+Prefix+"*:"+r.seen()+"*")
	if err != nil {
		return nil, r.remoteError("fetching", Prefix+"*", "from", err)
	}
	recs, err := r.read(ctx, r.seen())
	if err != nil {
		return nil, err
	}
	for id, rec := range recs {
		if old, ok := before[id]; ok && rec.Skew == nil {
			rec.Skew = r.replaced(old, rec)
			recs[id] = rec
		}
	}
	return recs, nil
}

// replaced is the skew of rec, which replaced old on the remote: a
// compare-and-swap push from old, made after old was there to be read;
// so, were the clocks right, written no earlier than old.
func (r *Remote) replaced(old, rec Record) *SkewError {
	if old.Err != nil || rec.Err != nil || old.Sha == rec.Sha {
		return nil
	}
	if by := old.Written.Sub(rec.Written); by > Margin {
		return &SkewError{ID: rec.ID, Remote: r.name, By: by, Replaced: true, Here: onThisMachine(old.Holder)}
	}
	return nil
}

// ahead is the skew of rec, read at now: its committer time and its
// Claimed-At were this or another machine's clock before now, were the
// clocks right.
func (r *Remote) ahead(rec Record, now time.Time) *SkewError {
	t := rec.Written
	if rec.Since.After(t) {
		t = rec.Since
	}
	if by := t.Sub(now.Truncate(time.Second)); by > Margin {
		return &SkewError{ID: rec.ID, Remote: r.name, By: by}
	}
	return nil
}

// onThisMachine reports whether holder (NAME@HOST/PID) names this machine.
func onThisMachine(holder string) bool {
	at, slash := strings.LastIndexByte(holder, '@'), strings.LastIndexByte(holder, '/')
	host, err := os.Hostname()
	return at >= 0 && slash > at && err == nil && holder[at+1:slash] == host
}

// Known returns issue id's claim as this clone last saw it (no round trip):
// after a Fetch, or its own last Push. A Record with no Sha when it saw
// none.
func (r *Remote) Known(ctx context.Context, id string) (Record, error) {
	recs, err := r.read(ctx, r.seen()+id)
	if err != nil {
		return Record{}, err
	}
	if rec, ok := recs[id]; ok {
		return rec, nil
	}
	return Record{ID: id}, nil
}

// readFormat is what read asks of each ref: its name, then what record
// reads (see record); readFields, how many fields that is.
const (
	readFormat = "%(refname)%00%(objecttype)%00%(objectname)%00%(tree)%00%(parent)%00%(committerdate:unix)%00%(contents)%00"
	readFields = 7
)

// read returns the records under the refs pattern names (a prefix, or one
// ref), by issue: one local git process. A record written ahead of this
// machine's clock, read after them, has a SkewError.
func (r *Remote) read(ctx context.Context, pattern string) (map[string]Record, error) {
	recs, patterns, err := r.oversized(ctx, pattern)
	if err != nil || len(patterns) == 0 {
		return recs, err
	}
	out, err := r.git(ctx, nil, append([]string{"for-each-ref", "--format=" + readFormat}, patterns...)...)
	if err != nil {
		return nil, fmt.Errorf("reading the claims seen on %s: %w", r.name, err)
	}
	now := r.now()
	parts := strings.Split(out, "\x00")
	for i := 0; i+readFields <= len(parts); i += readFields {
		ref := strings.TrimLeft(parts[i], "\n")
		id, ok := strings.CutPrefix(ref, r.seen())
		if !ok || strings.Contains(id, "/") {
			continue
		}
		rec := r.record(id, parts[i+1:i+readFields])
		if rec.Err == nil {
			rec.Skew = r.ahead(rec, now)
		}
		recs[id] = rec
	}
	return recs, nil
}

// MaxRecord is the most bytes a claim's record (its commit object) may
// hold: its message is a few lines of at most a few hundred bytes. A
// larger one is not read (a BadRecordError), so that no record on the
// remote can make a claim slow or big.
const MaxRecord = 16 << 10

// oversized returns the records under the refs pattern names whose object
// is over MaxRecord, each a BadRecordError, by issue, and the patterns
// that name the others for read to read: pattern itself when none is
// over.
func (r *Remote) oversized(ctx context.Context, pattern string) (map[string]Record, []string, error) {
	out, err := r.git(ctx, nil, "for-each-ref", "--format=%(refname)%00%(objectsize)%00%(objectname)%00", pattern)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the claims seen on %s: %w", r.name, err)
	}
	recs := map[string]Record{}
	var small []string
	parts := strings.Split(out, "\x00")
	for i := 0; i+3 <= len(parts); i += 3 {
		ref := strings.TrimLeft(parts[i], "\n")
		size, _ := strconv.ParseInt(parts[i+1], 10, 64)
		id, ok := strings.CutPrefix(ref, r.seen())
		switch {
		case !ok || strings.Contains(id, "/"):
		case size > MaxRecord:
			what := fmt.Sprintf("a record of %d bytes, more than the %d a claim's is at most", size, MaxRecord)
			recs[id] = Record{ID: id, Sha: parts[i+2], Err: &BadRecordError{Ref: Ref(id), Remote: r.name, What: what}}
		default:
			small = append(small, ref)
		}
	}
	if len(recs) == 0 {
		return recs, []string{pattern}, nil
	}
	return recs, small, nil
}

// Push moves issue id's claim on the remote from the commit from (""
// when there is to be no ref yet) to a record of l, written at this
// machine's clock (Clock) as it pushes, in one compare-and-swap push: one
// round trip. It returns a LostError when the ref on the remote is not
// from, and moves this clone's view of the ref to the record when it
// succeeds.
func (r *Remote) Push(ctx context.Context, id, from string, l claim.Lease) (Record, error) {
	ref := Ref(id)
	if err := CheckID(id); err != nil {
		return Record{}, err
	}
	written := r.now().UTC().Truncate(time.Second)
	sha, err := r.commit(ctx, id, l, written)
	if err != nil {
		return Record{}, fmt.Errorf("making the record of %s: %w", ref, err)
	}
	if err := r.pushRef(ctx, ref, from, sha); err != nil {
		return Record{}, err
	}
	if _, err := r.git(ctx, nil, "update-ref", r.seen()+id, sha); err != nil {
		return Record{}, fmt.Errorf("noting the claim pushed to %s: %w", ref, err)
	}
	return Record{ID: id, Lease: l, Sha: sha, Written: written}, nil
}

// Change moves issue id's claim on the remote to what change makes of its
// record, with a compare-and-swap push. It asks change first about this
// clone's view of the claim (no round trip): when the view is current, a
// claim, renewal or release is one push. A refusal, a change that changes
// nothing, or a lost push made from that view may come of its being out of
// date: then the claims are fetched (one round trip) and change asked again
// about the remote's record. What change says of a fetched record is final;
// a push lost from it (another was quicker) is tried again, from a new
// fetch, a few times, then ErrLost is returned.
//
// It returns the record the claim is at: the one pushed, or the one change
// refused (with its error).
func (r *Remote) Change(ctx context.Context, id string, change func(Record) (claim.Lease, error)) (Record, error) {
	if err := CheckID(id); err != nil {
		return Record{ID: id}, err
	}
	rec, err := r.Known(ctx, id)
	if err != nil {
		return rec, err
	}
	for fetched := 0; ; fetched++ {
		err := rec.Err
		var l claim.Lease
		if err == nil {
			l, err = change(rec)
		}
		if err == nil && !l.Equal(rec.Lease) {
			got, err := r.Push(ctx, id, rec.Sha, l)
			if !errors.Is(err, ErrLost) || fetched > lostTries {
				return got, err
			}
		} else if fetched > 0 {
			return rec, err // a refusal, or nothing to change, on the remote's record
		}
		recs, err := r.Fetch(ctx)
		if err != nil {
			return rec, err
		}
		if rec = recs[id]; rec.ID == "" {
			rec.ID = id
		}
	}
}

// lostTries is how many times Change fetches again after a lost push.
const lostTries = 3

var issueID = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// CheckID refuses an issue ID a ref cannot be named after.
func CheckID(id string) error {
	if !issueID.MatchString(id) || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") {
		return fmt.Errorf("%q: an issue ID a git ref cannot be named after (want letters, digits, ., _ and -)", id)
	}
	return nil
}
