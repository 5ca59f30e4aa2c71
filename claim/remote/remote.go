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
package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// Prefix is where the claims live on the remote: Prefix+issue.
const Prefix = "refs/orchestrate/claims/"

// Timeout bounds each git command that talks to the remote.
const Timeout = time.Minute

// Remote is a git remote of a repository, where the claims are kept.
type Remote struct {
	dir  string // a directory of the repository: where git runs
	name string // the remote's name, as git remote lists it
	tree string // the empty tree, once written
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
	Err error  // not nil when the ref holds no record orchestrate can read
}

// Fetch brings this clone's view of every claim on the remote up to date,
// in one round trip to the remote, and returns the claims by issue.
func (r *Remote) Fetch(ctx context.Context) (map[string]Record, error) {
	err := r.fetch(ctx, "--prune", "+"+Prefix+"*:"+r.seen()+"*")
	if err != nil {
		return nil, r.remoteError("fetching", Prefix+"*", "from", err)
	}
	return r.read(ctx, r.seen())
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

// read returns the records under the refs pattern names (a prefix, or one
// ref), by issue: one local git process.
func (r *Remote) read(ctx context.Context, pattern string) (map[string]Record, error) {
	out, err := r.git(ctx, nil, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%00", pattern)
	if err != nil {
		return nil, fmt.Errorf("reading the claims seen on %s: %w", r.name, err)
	}
	recs := map[string]Record{}
	parts := strings.Split(out, "\x00")
	for i := 0; i+2 < len(parts); i += 3 {
		ref := strings.TrimLeft(parts[i], "\n")
		id, ok := strings.CutPrefix(ref, r.seen())
		if !ok || strings.Contains(id, "/") {
			continue
		}
		rec := Record{ID: id, Sha: parts[i+1]}
		rec.Lease, rec.Err = parse(parts[i+2])
		if rec.Err != nil {
			rec.Err = fmt.Errorf("%s on %s: %w", Ref(id), r.name, rec.Err)
		}
		recs[id] = rec
	}
	return recs, nil
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
// when there is to be no ref yet) to a record of l made at now, in one
// compare-and-swap push: one round trip. It returns a LostError when the
// ref on the remote is not from, and moves this clone's view of the ref to the
// record when it succeeds.
func (r *Remote) Push(ctx context.Context, id, from string, l claim.Lease, now time.Time) (Record, error) {
	ref := Ref(id)
	if err := CheckID(id); err != nil {
		return Record{}, err
	}
	sha, err := r.commit(ctx, id, l, now)
	if err != nil {
		return Record{}, fmt.Errorf("making the record of %s: %w", ref, err)
	}
	if err := r.pushRef(ctx, ref, from, sha); err != nil {
		return Record{}, err
	}
	if _, err := r.git(ctx, nil, "update-ref", r.seen()+id, sha); err != nil {
		return Record{}, fmt.Errorf("noting the claim pushed to %s: %w", ref, err)
	}
	return Record{ID: id, Lease: l, Sha: sha}, nil
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

// remoteSaid is what the remote said in err (its "remote: " lines), as
// ": what it said", or "".
func remoteSaid(err error) string {
	var said []string
	for _, line := range strings.Split(err.Error(), "; ") {
		if s, ok := strings.CutPrefix(line, "remote: "); ok && strings.TrimSpace(s) != "" {
			said = append(said, strings.TrimSpace(s))
		}
	}
	if len(said) == 0 {
		return ""
	}
	return ": " + strings.Join(said, "; ")
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
func (r *Remote) Change(ctx context.Context, id string, now time.Time, change func(Record) (claim.Lease, error)) (Record, error) {
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
			got, err := r.Push(ctx, id, rec.Sha, l, now)
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
// remote, on one line: what, where, and why. A remote that does not
// exist is said so.
func (r *Remote) remoteError(op, ref, prep string, err error) error {
	if _, gerr := r.git(context.Background(), nil, "remote", "get-url", r.name); gerr != nil {
		return fmt.Errorf("%s %s %s %s: there is no remote %s in this repository (git remote add %s URL)", op, ref, prep, r.name, r.name, r.name)
	}
	return fmt.Errorf("%s %s %s %s: %w", op, ref, prep, r.name, err)
}

// commit writes the record of l for issue id, made at now: a commit with
// no parent on the empty tree, whose message holds the lease's fields.
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

// parse reads a record's message (see Message).
func parse(msg string) (claim.Lease, error) {
	var l claim.Lease
	epoch := false
	for _, line := range strings.Split(msg, "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var err error
		switch name {
		case queue.FieldClaimedBy:
			l.Holder = v
		case queue.FieldLeaseEpoch:
			l.Epoch, err = strconv.Atoi(v)
			if err != nil || l.Epoch < 0 {
				return l, fmt.Errorf("%s %q is not a non-negative integer", name, v)
			}
			epoch = true
		case queue.FieldLeaseUntil, queue.FieldClaimedAt:
			var t time.Time
			if v != "" {
				if t, err = time.Parse(time.RFC3339, v); err != nil {
					return l, fmt.Errorf("%s %q is not a time (want RFC 3339)", name, v)
				}
			}
			if name == queue.FieldLeaseUntil {
				l.Until = t
			} else {
				l.Since = t
			}
		}
	}
	if !epoch {
		return l, fmt.Errorf("no %s line: not a claim orchestrate wrote", queue.FieldLeaseEpoch)
	}
	return l, nil
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

// gitEnv runs git in the repository and returns its stdout; its error is
// stderr's lines joined on one line.
func (r *Remote) gitEnv(ctx context.Context, env []string, stdin *strings.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", r.dir}, args...)...)
	// No prompt for a password: no one is there to answer.
	cmd.Env = append(os.Environ(), append([]string{"GIT_TERMINAL_PROMPT=0"}, env...)...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var lines []string
		for _, line := range strings.Split(errb.String(), "\n") {
			if line = strings.TrimSpace(strings.TrimPrefix(line, "fatal: ")); line != "" && !strings.HasPrefix(line, "Please make sure") && !strings.HasPrefix(line, "and the repository exists") {
				lines = append(lines, line)
			}
		}
		if len(lines) == 0 {
			lines = []string{err.Error()}
		}
		if ctx.Err() != nil {
			lines = append(lines, "no answer in "+Timeout.String())
		}
		return out.String(), errors.New(strings.Join(lines, "; "))
	}
	return out.String(), nil
}
