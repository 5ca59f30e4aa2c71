package gate

import (
	"strings"
)

// ApprovalState is where a human gate's approval stands.
type ApprovalState string

// The approval states. The caller keeps them (the loop, in the issue
// queue); the gate only reports them.
const (
	ApprovalAsk       ApprovalState = "ask"        // no request yet: a person is to be asked
	ApprovalPending   ApprovalState = "pending"    // asked, not answered
	ApprovalGiven     ApprovalState = "approved"   // approved: the gate passes
	ApprovalRejected  ApprovalState = "rejected"   // rejected: the gate fails with the comment
	ApprovalNotNeeded ApprovalState = "not_needed" // the gate's when: matches no issue: it passes
)

// Approval is a human gate's approval as the caller keeps it.
type Approval struct {
	State   ApprovalState
	Comment string // a rejection's comment: what the agent is to change
	Ref     string // where the request is kept (an issue ID); "" before it is made
	Note    string // more for a person to read: why it is not needed, why asked again
}

// decideHuman fills a human gate's result from its approval.
// othersPassed says whether every other blocking gate passed.
func decideHuman(r *Result, opts *Options, othersPassed bool) {
	r.Duration = 0
	if opts.Human == nil {
		r.Outcome, r.Err = Errored, "no one to ask: a human gate needs the issue queue (orchestrate gate, run or hook)"
		return
	}
	a := opts.Human(r.Gate)
	r.Approval = &a
	switch a.State {
	case ApprovalGiven:
		r.Outcome, r.ExitCode = Pass, 0
		r.Output = "approved"
		if a.Ref != "" {
			r.Output += " in " + a.Ref
		}
		r.Output += "\n"
	case ApprovalNotNeeded:
		r.Outcome, r.ExitCode = Pass, 0
		r.Output = "not needed: " + a.Note + "\n"
	case ApprovalRejected:
		r.Outcome, r.ExitCode, r.Err = Fail, 1, "rejected by a person"
		if a.Ref != "" {
			r.Err += " in " + a.Ref
		}
		r.Output = strings.TrimSpace(a.Comment)
		if r.Output == "" {
			r.Output = "(no comment)"
		}
		r.Output += "\n"
	default:
		if !othersPassed {
			r.Outcome, r.Err = Skipped, "skipped: a person is asked once the other gates pass"
			return
		}
		r.Outcome, r.Err = AwaitingApproval, "awaiting a person's approval"
		if a.Ref != "" {
			r.Err += " in " + a.Ref
		}
	}
	r.OutputBytes = int64(len(r.Output))
}
