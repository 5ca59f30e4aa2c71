// Package remote keeps the claims of agents on several machines on a git
// remote of their repository: a ref per issue, refs/orchestrate/claims/<issue>,
// that holds the lease's record and is created or moved only by a
// compare-and-swap push (git push --atomic --force-with-lease), which the
// remote checks under its lock of the ref: of two machines that push from
// the same record, one succeeds and the other is told the ref moved.
//
// Each record is a commit with no parent on the empty tree, whose message
// holds the lease's fields as lines (Claimed-By: …, Lease-Epoch: N, …), so
// that git log refs/orchestrate/claims/ISSUE-… shows it to a person. A
// clone keeps its view of the remote's claims under
// refs/orchestrate/remote/<remote>/claims/, brought up to date by one fetch
// of them all, and moved by its own pushes.
//
// A ref that holds anything else (another kind of object, a commit with a
// parent or with files, a message without the fields) is read as a
// BadRecordError: neither free nor held. The records' times, each the clock
// of the machine that pushed it, are compared with this machine's clock
// and with the records they replaced: a SkewError says two clocks are
// further apart than Margin.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/internal/git"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// Prefix is where the claims live on the remote: Prefix+issue.
const Prefix = "refs/orchestrate/claims/"

// Remote is a git remote of a repository, where the claims are kept.
type Remote struct {
	dir  string // a directory of the repository: where git runs
	name string // the remote's name, as git remote lists it
	tree string // the empty tree, once written

	// Clock is this machine's clock (time.Now when nil): the time of each
	// record pushed, and the time the records read are compared with.
	Clock func() time.Time
}

var remoteName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*$`)

// New returns the remote called name of the repository that holds dir.
// The name is a remote's (git remote add NAME URL), not a URL: this clone's
// view of the claims is kept under a ref named after it.
func New(dir, name string) (*Remote, error) {
	if !remoteName.MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".lock") {
		return nil, fmt.Errorf("--remote %q: want the name of a git remote, such as origin (git remote add NAME URL)", name)
	}
	return &Remote{dir: dir, name: name}, nil
}

// Name is the remote's name.
func (r *Remote) Name() string { return r.name }

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

// Skewed returns the skew of recs that is the furthest (the first issue's
// of equals), nil when none is.
func Skewed(recs map[string]Record) *SkewError {
	var worst *SkewError
	for _, rec := range recs {
		if s := rec.Skew; s != nil && (worst == nil || s.By > worst.By || s.By == worst.By && s.ID < worst.ID) {
			worst = s
		}
	}
	return worst
}

// now reads this machine's clock.
func (r *Remote) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
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
	out, err := r.git(ctx, nil, "for-each-ref", "--format="+readFormat, pattern)
	if err != nil {
		return nil, fmt.Errorf("reading the claims seen on %s: %w", r.name, err)
	}
	now := r.now()
	recs := map[string]Record{}
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

// emptyTree is git's empty tree, in SHA-1 and in SHA-256: the tree of
// every record.
var emptyTree = map[string]bool{
	"4b825dc642cb6eb9a060e54bf8d69288fbee4904":                         true,
	"6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321": true,
}

// record reads issue id's record from the fields of its ref (readFormat):
// the object's type and name, its tree, its parents, its committer time
// and its message.
func (r *Remote) record(id string, f []string) Record {
	typ, sha, tree, parents, date, msg := f[0], f[1], f[2], f[3], f[4], f[5]
	rec := Record{ID: id, Sha: sha}
	var err error
	switch {
	case typ != "commit":
		err = fmt.Errorf("a %s, not a commit", typ)
	case parents != "":
		err = errors.New("a commit with a parent; a claim has none")
	case !emptyTree[tree]:
		err = errors.New("a commit with files; a claim's tree is empty")
	default:
		secs, _ := strconv.ParseInt(date, 10, 64)
		rec.Written = time.Unix(secs, 0).UTC()
		rec.Lease, err = parse(id, msg)
	}
	if err != nil {
		// Nothing of it is read: neither a holder nor a time.
		return Record{ID: id, Sha: sha, Err: &BadRecordError{Ref: Ref(id), Remote: r.name, What: "not a claim orchestrate wrote (" + err.Error() + ")"}}
	}
	return rec
}

// ErrLost matches every LostError.
var ErrLost = errors.New("the claim moved on the remote")

// LostError is returned by Push when the claim's ref on the remote is no
// longer the one the change was made from: another changed it meanwhile.
type LostError struct {
	Ref, Remote string
	Said        string // what the remote said, if anything: ": …"
}

func (e *LostError) Error() string {
	return fmt.Sprintf("pushing %s to %s: the claim moved on the remote meanwhile (another machine changed it)%s", e.Ref, e.Remote, e.Said)
}

func (e *LostError) Is(target error) bool { return target == ErrLost }

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

// pushRef moves ref on the remote from the commit from ("" when there is
// to be no ref yet) to sha, in one compare-and-swap push: a LostError
// when the ref on the remote is not from.
func (r *Remote) pushRef(ctx context.Context, ref, from, sha string) error {
	out, err := r.git(ctx, nil, "push", "--porcelain", "--atomic", "--no-verify", "--force-with-lease="+ref+":"+from, r.name, sha+":"+ref)
	if err != nil {
		// The porcelain line of the ref: "!\tSRC:DST\t[rejected] (stale info)".
		for _, line := range strings.Split(out, "\n") {
			if f := strings.SplitN(line, "\t", 3); len(f) == 3 && f[0] == "!" && strings.HasSuffix(f[1], ":"+ref) {
				reason := strings.TrimSpace(f[2])
				switch said := remoteSaid(err); {
				case strings.Contains(reason, "(stale info)"):
					// The ref the remote showed is not from.
					return &LostError{Ref: ref, Remote: r.name}
				case strings.Contains(reason, "(atomic transaction failed)"):
					// The remote's check, under its lock of the ref: the
					// ref moved after it showed it, or another push held
					// its lock.
					return &LostError{Ref: ref, Remote: r.name, Said: said}
				default:
					err = errors.New("refused: " + reason + said)
				}
			}
		}
		return r.remoteError("pushing", ref, "to", err)
	}
	return nil
}

// remoteSaid is what the remote said in err, git's error (its "remote: "
// lines), as ": what it said", or "".
func remoteSaid(err error) string {
	var gerr *git.Error
	if !errors.As(err, &gerr) || len(gerr.RemoteSaid()) == 0 {
		return ""
	}
	return ": " + strings.Join(gerr.RemoteSaid(), "; ")
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

// remoteError is err of git doing op ("fetching") on ref from or to the
// remote, on one line: what, where, and why (what git said). A remote that
// does not exist is said so.
func (r *Remote) remoteError(op, ref, prep string, err error) error {
	if _, gerr := r.git(context.Background(), nil, "remote", "get-url", r.name); gerr != nil {
		return fmt.Errorf("%s %s %s %s: there is no remote %s in this repository (git remote add %s URL)", op, ref, prep, r.name, r.name, r.name)
	}
	if gerr := (*git.Error)(nil); errors.As(err, &gerr) {
		return fmt.Errorf("%s %s %s %s: %s", op, ref, prep, r.name, gerr.Said())
	}
	return fmt.Errorf("%s %s %s %s: %w", op, ref, prep, r.name, err)
}

// commit writes the record of l for issue id, written at now: a commit
// with no parent on the empty tree, whose message holds the lease's
// fields.
func (r *Remote) commit(ctx context.Context, id string, l claim.Lease, now time.Time) (string, error) {
	if r.tree == "" {
		// The empty tree is written once: a repository in SHA-256, or a
		// git that keeps no empty tree of its own, has it then too.
		tree, err := r.git(ctx, strings.NewReader(""), "mktree")
		if err != nil {
			return "", err
		}
		r.tree = strings.TrimSpace(tree)
	}
	date := fmt.Sprintf("@%d +0000", now.Unix())
	env := []string{"GIT_AUTHOR_NAME=orchestrate", "GIT_AUTHOR_EMAIL=orchestrate@localhost", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=orchestrate", "GIT_COMMITTER_EMAIL=orchestrate@localhost", "GIT_COMMITTER_DATE=" + date}
	out, err := r.gitEnv(ctx, env, strings.NewReader(Message(id, l)), "commit-tree", r.tree)
	return strings.TrimSpace(out), err
}

// Message is the commit message of issue id's record of lease l: a
// subject, then a line per field, as the issue's table names them.
func Message(id string, l claim.Lease) string {
	var b strings.Builder
	if l.Holder == "" {
		fmt.Fprintf(&b, "orchestrate: %s released at epoch %d\n\n", id, l.Epoch)
	} else {
		fmt.Fprintf(&b, "orchestrate: %s claimed by %s at epoch %d\n\n", id, l.Holder, l.Epoch)
	}
	fmt.Fprintf(&b, "%s: %s\n", queue.FieldClaimedBy, l.Holder)
	fmt.Fprintf(&b, "%s: %s\n", queue.FieldClaimedAt, timeText(l.Since))
	fmt.Fprintf(&b, "%s: %d\n", queue.FieldLeaseEpoch, l.Epoch)
	fmt.Fprintf(&b, "%s: %s\n", queue.FieldLeaseUntil, timeText(l.Until))
	return b.String()
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fields are the lines of a record's message (see Message), each there
// once, in the order parse asks for them.
var fields = []string{queue.FieldLeaseEpoch, queue.FieldLeaseUntil, queue.FieldClaimedBy, queue.FieldClaimedAt}

// parse reads issue id's record's message (see Message): a subject that
// names the issue, and each of the fields once. Its error says what is
// not as Message writes it.
func parse(id, msg string) (claim.Lease, error) {
	var l claim.Lease
	subject, body, _ := strings.Cut(msg, "\n")
	seen := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(fields, name) {
			continue
		}
		if seen[name] {
			return l, fmt.Errorf("two %s lines", name)
		}
		seen[name] = true
		if err := setField(&l, name, strings.TrimSpace(v)); err != nil {
			return l, err
		}
	}
	for _, name := range fields {
		if !seen[name] {
			return l, fmt.Errorf("no %s line", name)
		}
	}
	if !strings.HasPrefix(subject, "orchestrate: "+id+" ") {
		return l, fmt.Errorf("its subject does not name %s", id)
	}
	return l, nil
}

// setField sets the field name of l to v, as a record's line says it.
func setField(l *claim.Lease, name, v string) error {
	switch name {
	case queue.FieldClaimedBy:
		l.Holder = v
	case queue.FieldLeaseEpoch:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%s %q is not a non-negative integer", name, v)
		}
		l.Epoch = n
	default: // Lease-Until, Claimed-At
		var t time.Time
		if v != "" {
			var err error
			if t, err = time.Parse(time.RFC3339, v); err != nil {
				return fmt.Errorf("%s %q is not an RFC 3339 time", name, v)
			}
		}
		if name == queue.FieldLeaseUntil {
			l.Until = t
		} else {
			l.Since = t
		}
	}
	return nil
}

var issueID = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// CheckID refuses an issue ID a ref cannot be named after.
func CheckID(id string) error {
	if !issueID.MatchString(id) || strings.Contains(id, "..") || strings.HasSuffix(id, ".lock") {
		return fmt.Errorf("%q: an issue ID a git ref cannot be named after (want letters, digits, ., _ and -)", id)
	}
	return nil
}

func (r *Remote) git(ctx context.Context, stdin *strings.Reader, args ...string) (string, error) {
	return r.gitEnv(ctx, nil, stdin, args...)
}

// gitEnv runs git in the repository, with env added to its environment
// and stdin as its input (none when nil), and returns its stdout. Each
// command may talk to the remote: it is bounded by git.NetworkTimeout.
func (r *Remote) gitEnv(ctx context.Context, env []string, stdin *strings.Reader, args ...string) (string, error) {
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	var out strings.Builder
	err := git.Runner{Dir: r.dir, Env: env, Timeout: git.NetworkTimeout}.Run(ctx, in, &out, args...)
	return out.String(), err
}
