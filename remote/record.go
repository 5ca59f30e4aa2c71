package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
)

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
// subject, then a line per field, as the table names them.
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
