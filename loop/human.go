package loop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// A human gate keeps its approval in the issue queue, as an approval
// request: an issue of Type approval, filed when the gate first needs a
// person, with the gate's name in Gate, the diff it asks about (Diff-Hash,
// and the Diff Summary section: git diff --stat) and the feedback of the
// run so far (Earlier Feedback).
//
// The request is decided by the last field that a person (or orchestrate
// approve and reject) set:
//
//	Approved: true, or Status: resolved   approved: the gate passes
//	Approved: false                       rejected: the next evaluation fails the
//	                                      gate with the Comment section as its
//	                                      error, then closes the request
//	                                      (Status: resolved, Approved: false)
//	anything else, while pending          awaiting approval
//
// An approval holds for the change it was given for: once the diff differs
// (its hash), the gate asks again, in a new request. A closed request (a
// rejection sent to the agent, or one a person skipped) is followed by a
// new request when the gate next needs one.
const (
	TypeApproval           = "approval"
	FieldApproved          = "Approved"
	FieldDiffHash          = "Diff-Hash"
	CategoryHumanGate      = "human-gate"
	SectionDiffSummary     = "Diff Summary"
	SectionEarlierFeedback = "Earlier Feedback"
	SectionComment         = "Comment"
	SectionMatchingIssues  = "Matching Issues"

	// FeedbackFile, in runs/<run-id>/, is the last feedback sent to the
	// agent in the run: an approval request shows it.
	FeedbackFile = "feedback.md"

	// EventApproval is the history row of an approval request
	// (outcome requested) and of a person's decision (approved, rejected).
	EventApproval = "approval"
)

// NotApprovalError is returned by Approve and Reject for an issue that is
// not an approval request.
type NotApprovalError struct {
	ID, Type string
}

func (e *NotApprovalError) Error() string {
	return fmt.Sprintf("%s is not an approval request (Type: %s): approve and reject decide the requests of human gates", e.ID, e.Type)
}

// isApproval reports whether an issue is an approval request.
func isApproval(is *queue.Issue) bool {
	t, _ := is.Get(queue.FieldType)
	return strings.EqualFold(t, TypeApproval)
}

// approvalState reads an approval request's state: approved, rejected,
// pending, or closed (resolved with Approved: false, skipped, stuck).
func approvalState(is *queue.Issue) gate.ApprovalState {
	st := is.Status()
	if v, ok := is.Get(FieldApproved); ok {
		if b, err := queue.ParseBool(v); err == nil {
			switch {
			case b:
				return gate.ApprovalGiven
			case st == queue.StatusPending || st == queue.StatusInProgress:
				return gate.ApprovalRejected
			}
			return approvalClosed
		}
	}
	switch st {
	case queue.StatusResolved:
		return gate.ApprovalGiven
	case queue.StatusPending, queue.StatusInProgress:
		return gate.ApprovalPending
	}
	return approvalClosed
}

// approvalClosed is a request that decides nothing any more.
const approvalClosed gate.ApprovalState = "closed"

// human is what RunGates learns of one human gate while it asks for its
// approval, for what it writes afterwards.
type human struct {
	approval gate.Approval
	gate     config.Gate
	request  string // the open request to refresh, if any
	hash     string // of the diff now
	stat     string // git diff --stat now
	matching []string
	err      error
}

// decideHuman says where a human gate's approval stands, from the queue
// and the diff as they are now.
func (w Workspace) decideHuman(ctx context.Context, g config.Gate, tag map[string]string) *human {
	h := &human{gate: g}
	h.hash, h.stat = w.diffNow(ctx, g.DiffBase)
	q, err := queue.Load(w.Path(QueueFile))
	if err != nil {
		h.err = err
		h.approval = gate.Approval{State: gate.ApprovalPending}
		return h
	}
	var last *queue.Issue
	for _, is := range q.Issues {
		if name, _ := is.Get(FieldGate); name == g.Name && isApproval(is) && tagged(is, tag) {
			last = is
		}
	}
	note := ""
	if last != nil {
		ref := last.ID
		switch st := approvalState(last); st {
		case gate.ApprovalGiven:
			if h2, _ := last.Get(FieldDiffHash); h2 == h.hash {
				h.approval = gate.Approval{State: st, Ref: ref}
				return h
			}
			note = "the change is not the one approved in " + ref
		case gate.ApprovalRejected:
			comment := ""
			if s := last.Section(SectionComment); s != nil {
				comment = s.Body()
			}
			h.approval = gate.Approval{State: st, Ref: ref, Comment: comment}
			return h
		case gate.ApprovalPending:
			h.request = ref
			h.approval = gate.Approval{State: st, Ref: ref}
			return h
		}
	}
	// No request stands: ask, if the issues the loop works on need it. A
	// rejection being worked on always does.
	needed, why := g.When == nil, ""
	for _, is := range q.Issues {
		if isApproval(is) || !open(is) || is.Status() == queue.StatusStuck {
			continue
		}
		if name, _ := is.Get(FieldGate); name == g.Name {
			if why == "" {
				needed, why = true, "its rejection is being worked on in "+is.ID
			}
			continue
		}
		if g.When != nil && g.When.Match(is.Get) {
			needed = true
			h.matching = append(h.matching, describeIssue(is, g.When))
		}
	}
	if why == "" && len(h.matching) > 0 {
		why = "open issues match when: " + g.When.Text
	}
	if !needed {
		h.approval = gate.Approval{State: gate.ApprovalNotNeeded, Note: "no open issue matches when: " + g.When.Text}
		return h
	}
	if note == "" {
		note = why
	}
	h.approval = gate.Approval{State: gate.ApprovalAsk, Note: note}
	return h
}

// describeIssue is one line about an issue that made a when: match.
func describeIssue(is *queue.Issue, w *config.When) string {
	var kv []string
	for _, f := range w.Fields() {
		v, _ := is.Get(f)
		kv = append(kv, f+" "+v)
	}
	line := is.ID + " (" + strings.Join(kv, ", ") + ")"
	if s := summaryOf(is); s != "" {
		line += ": " + s
	}
	return line
}

// tagged reports whether an issue has every field of tag, as given, and
// belongs to the same agent session: a Session-tagged issue is only its
// session's, and an untagged run (orchestrate gate, run) has none.
func tagged(is *queue.Issue, tag map[string]string) bool {
	for k, v := range tag {
		if got, _ := is.Get(k); got != v {
			return false
		}
	}
	s, _ := is.Get(FieldSession)
	return s == tag[FieldSession]
}

// diffExclude is the workspace directory, relative to the repository, when
// it is inside it: the diff under review leaves it out.
func (w Workspace) diffExclude() []string {
	abs, err := filepath.Abs(w.Dir)
	if err != nil {
		return nil
	}
	rel, err := filepath.Rel(w.Root(), abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return []string{rel}
}

// diffNow returns the hash of the change against base (short hex) and its
// git diff --stat. Outside a git repository both say so: an approval there
// holds until a person changes it.
func (w Workspace) diffNow(ctx context.Context, base string) (hash, stat string) {
	if base == "" {
		base = config.DefaultDiffBase
	}
	sum := sha256.New()
	if err := gate.Diff(ctx, w.Root(), base, w.diffExclude(), false, sum); err != nil {
		return "", "(no diff: " + err.Error() + ")"
	}
	var b strings.Builder
	if err := gate.Diff(ctx, w.Root(), base, w.diffExclude(), true, &b); err != nil {
		return "", "(no diff: " + err.Error() + ")"
	}
	stat = strings.TrimRight(b.String(), "\n")
	if stat == "" {
		stat = "(no change against " + base + ")"
	}
	return hex.EncodeToString(sum.Sum(nil))[:16], stat
}

// fenced puts text in a code fence it cannot close.
func fenced(text string) string {
	text = strings.TrimRight(text, "\n")
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + "\n" + text + "\n" + f
}

// requestApproval files the approval request of a human gate that awaits
// one, or brings the open request up to date (the diff, the feedback).
// It returns the request's ID.
func (w Workspace) requestApproval(ctx context.Context, tx queueTx, now time.Time, cfg *config.Config, h *human, feedback string, tag map[string]string) (string, error) {
	g := h.gate
	sections := map[string]string{SectionDiffSummary: fenced(h.stat)}
	if feedback != "" {
		sections[SectionEarlierFeedback] = fenced(feedback)
	}
	if len(h.matching) > 0 {
		sections[SectionMatchingIssues] = "- " + strings.Join(h.matching, "\n- ")
	}
	id := h.request
	err := tx.change(ctx, func(q *queue.Queue) error {
		if h.request != "" {
			is := q.Issue(h.request)
			if is == nil {
				return &NoIssueError{Path: w.Path(QueueFile), ID: h.request}
			}
			is.Set(FieldDiffHash, h.hash)
			for _, title := range []string{SectionDiffSummary, SectionEarlierFeedback, SectionMatchingIssues} {
				if body, ok := sections[title]; ok {
					is.SetSection(title, body)
				}
			}
			return nil
		}
		id = q.NextID(now)
		fields := Defaults(now, cfg.Retry.MaxRetries)
		priority := g.Priority
		if priority == "" {
			priority = config.PriorityHigh
		}
		for k, v := range map[string]string{
			queue.FieldType: TypeApproval, queue.FieldPriority: priority, queue.FieldSource: "gate",
			queue.FieldCategory: CategoryHumanGate, queue.FieldBlocking: "true",
			FieldGate: g.Name, FieldApproved: "", FieldDiffHash: h.hash,
		} {
			fields[k] = v
		}
		for k, v := range tag {
			fields[k] = v
		}
		ask := g.Prompt
		if ask == "" {
			ask = "approve or reject this change"
		}
		sections[queue.SectionSummary] = fmt.Sprintf("Approval needed for quality gate %s: %s", g.Name, ask)
		if h.approval.Note != "" {
			sections[queue.SectionSummary] += "\n\nAsked because " + h.approval.Note + "."
		}
		sections[queue.SectionVerification] = fmt.Sprintf("`orchestrate approve %[1]s`, or `orchestrate reject %[1]s --comment \"what to change\"`.\n"+
			"By hand: set Approved to true (or Status to resolved) to approve; set Approved to false and write a ### %[2]s section to reject.", id, SectionComment)
		q.Add(now, fields, sections)
		return nil
	}, func() []analytics.Event {
		if h.request != "" {
			return nil
		}
		return []analytics.Event{{Time: now, RunID: w.runID(), Event: EventApproval, IssueID: id, Gate: g.Name,
			Outcome: "requested", Detail: h.approval.Note}}
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// closeRejection closes a rejected request once the gate failed on it: the
// rejection went to the agent, and a new request follows.
func (w Workspace) closeRejection(ctx context.Context, tx queueTx, id string) error {
	return w.changeIssue(ctx, tx, id, func(is *queue.Issue) error {
		is.Set(queue.FieldStatus, queue.StatusResolved)
		return nil
	}, nil)
}

// settleApproval marks an approved request resolved, when a person set only
// Approved: true.
func (w Workspace) settleApproval(ctx context.Context, tx queueTx, id string) error {
	return w.changeIssue(ctx, tx, id, func(is *queue.Issue) error {
		if approvalState(is) == gate.ApprovalGiven {
			is.Set(queue.FieldStatus, queue.StatusResolved)
		}
		return nil
	}, nil)
}

// lastFeedback returns the last feedback of the run, or "".
func (w Workspace) lastFeedback() string {
	data, _, err := fsx.ReadFileMax(filepath.Join(w.Path(RunsDir), w.runID(), FeedbackFile), maxArtifact)
	if err != nil {
		return ""
	}
	return string(data)
}

// Decision is a person's word on an approval request.
type Decision struct {
	ID       string `json:"id"`
	Gate     string `json:"gate"`
	Approved bool   `json:"approved"`
	Status   string `json:"status"`
	Comment  string `json:"comment,omitempty"`
	Changed  bool   `json:"changed"` // false when the request already said so
}

// Approve approves a human gate's request: Approved true, Status resolved;
// the gate passes on its next evaluation, as long as the change is the same.
// A comment, if given, goes to the request's Comment section.
func (w Workspace) Approve(ctx context.Context, now time.Time, id, comment string) (Decision, error) {
	return w.decide(ctx, now, id, true, comment)
}

// Reject rejects a human gate's request: Approved false, the comment in its
// Comment section; the gate fails on its next evaluation with the comment
// as its error, which goes to the agent as feedback.
func (w Workspace) Reject(ctx context.Context, now time.Time, id, comment string) (Decision, error) {
	return w.decide(ctx, now, id, false, comment)
}

func (w Workspace) decide(ctx context.Context, now time.Time, id string, approve bool, comment string) (Decision, error) {
	d := Decision{ID: id, Approved: approve, Comment: strings.TrimSpace(comment)}
	err := w.updateIssue(ctx, id, func(is *queue.Issue) error {
		if !isApproval(is) {
			t, _ := is.Get(queue.FieldType)
			return &NotApprovalError{ID: id, Type: t}
		}
		d.Gate, _ = is.Get(FieldGate)
		before := approvalState(is)
		is.SetBool(FieldApproved, approve)
		d.Status = queue.StatusPending
		if approve {
			d.Status = queue.StatusResolved
		}
		is.Set(queue.FieldStatus, d.Status)
		if d.Comment != "" {
			is.SetSection(SectionComment, d.Comment)
		}
		d.Changed = before != approvalState(is) || d.Comment != ""
		return nil
	}, func() []analytics.Event {
		outcome := "rejected"
		if approve {
			outcome = "approved"
		}
		first, _, _ := strings.Cut(d.Comment, "\n")
		return []analytics.Event{{Time: now, RunID: w.runID(), Event: EventApproval, IssueID: id, Gate: d.Gate, Outcome: outcome, Detail: first}}
	})
	return d, err
}

// WaitApprovals waits until a person decided each of the approval requests
// ids (approved, rejected, or closed), reading the queue every poll, or
// until ctx ends. It is what orchestrate run does with human.wait: block.
func (w Workspace) WaitApprovals(ctx context.Context, ids []string, poll time.Duration) error {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		q, err := queue.Load(w.Path(QueueFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		waiting := 0
		for _, id := range ids {
			if q == nil {
				break
			}
			if is := q.Issue(id); is != nil && approvalState(is) == gate.ApprovalPending {
				waiting++
			}
		}
		if waiting == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ApprovalInfo is where one approval request stands.
type ApprovalInfo struct {
	ID    string             `json:"id"`
	Gate  string             `json:"gate"`
	State gate.ApprovalState `json:"state"`
}

// Approvals lists the queue's approval requests and their states, read as
// the human gates read them: an approval made by editing the queue by hand
// counts as one made with orchestrate approve.
func Approvals(q *queue.Queue) []ApprovalInfo {
	var out []ApprovalInfo
	for _, is := range q.Issues {
		if isApproval(is) {
			g, _ := is.Get(FieldGate)
			out = append(out, ApprovalInfo{ID: is.ID, Gate: g, State: approvalState(is)})
		}
	}
	return out
}
