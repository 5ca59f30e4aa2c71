package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

type mcpGatesArgs struct {
	Names  []string `json:"names,omitempty" jsonschema:"the gates to run, by their names in config.yaml; all when empty"`
	Record bool     `json:"record,omitempty" jsonschema:"true: record the results as orchestrate gate does (file, record and resolve auto-retry issues, history rows); false (the default): only run and report, as orchestrate gate --no-record"`
}

// mcpGates is the gates tool's result: orchestrate gate --json's object.
type mcpGates struct {
	Passed           bool             `json:"passed" jsonschema:"every blocking gate passed"`
	Recorded         bool             `json:"recorded" jsonschema:"the results went to the queue and the history"`
	Results          []gateResultJSON `json:"results"`
	Warnings         []string         `json:"warnings"`
	Resolved         []string         `json:"resolved" jsonschema:"the issues resolved as their gates pass"`
	Feedback         string           `json:"feedback" jsonschema:"what to fix, for the agent, when a blocking gate failed"`
	Artifacts        string           `json:"artifacts" jsonschema:"the run's directory: logs, gate-results.json, summary.md"`
	AwaitingApproval []awaitingJSON   `json:"awaiting_approval"`
}

func addWriteTools(s *mcp.Server, e *env) {
	addTool(s, e, &mcp.Tool{Name: "gates", Annotations: mcpWrites,
		Description: "Run the quality gates of config.yaml now (all, or those named) and get each one's result, and the feedback on failure. record: false (the default) changes no issue and no history row; record: true records as orchestrate gate does. Cancelling the call kills the gates. When every gate passes, a stop on the same tree does not run them again."},
		true, mcpGatesTool)
	addTool(s, e, &mcp.Tool{Name: "issue_add", Annotations: mcpWrites,
		Description: "File an issue in the queue (orchestrate issue add). With details (a failure's output), an open issue with the same failure signature gets it recorded instead."},
		true, mcpIssueAdd)
	addTool(s, e, &mcp.Tool{Name: "claim", Annotations: mcpWrites,
		Description: "Claim the next ready issue for the caller (orchestrate claim --next): highest priority, then oldest; one you hold comes back; claimed is false when none is ready. With id, claim that issue (orchestrate claim ID; force takes it from its holder)."},
		false, mcpClaimTool)
	addTool(s, e, &mcp.Tool{Name: "claim_renew", Annotations: mcpWrites,
		Description: "Extend the caller's claim of an issue (orchestrate renew ID --epoch N)."},
		false, mcpRenew)
	addTool(s, e, &mcp.Tool{Name: "claim_release", Annotations: mcpWrites,
		Description: "End a claim of an issue (orchestrate release ID [--epoch N])."},
		false, mcpRelease)
	addTool(s, e, &mcp.Tool{Name: "record_failure", Annotations: mcpWrites,
		Description: "Record a failed verification's output against an issue (orchestrate record ID): its signature, the repeat count, a halt on identical failures."},
		false, mcpRecord)
	addTool(s, e, &mcp.Tool{Name: "resolve", Annotations: mcpWrites,
		Description: "Resolve an issue (orchestrate issue resolve ID)."},
		true, mcpResolve)
	addTool(s, e, &mcp.Tool{Name: "decide", Annotations: mcpWrites,
		Description: "The choice on an issue whose retries are spent: retry (counts back to 0, pending), skip (skipped), or abort (stop the orchestrate run in progress): orchestrate issue retry, issue skip, abort."},
		true, mcpDecide)
	addTool(s, e, &mcp.Tool{Name: "approve", Annotations: mcpWrites,
		Description: "A person's word on a human gate's approval request, the caller being that person: approve (the gate passes on its next run), or reject with a comment (it fails, with the comment as feedback): orchestrate approve, reject."},
		true, mcpApprove)
}

func mcpGatesTool(e *env, in mcpGatesArgs) (mcpGates, error) {
	for _, n := range in.Names {
		if err := checkName("gate name", n); err != nil {
			return mcpGates{}, err
		}
	}
	gr, err := e.ws().RunGates(e.ctx, e.now, loop.GateOptions{Names: in.Names, NoRecord: !in.Record})
	if err != nil {
		return mcpGates{}, err
	}
	ev := gr.Evaluation
	if ev.Passed && len(in.Names) == 0 {
		// Every gate passed on this tree: a Stop hook that finds it
		// unchanged lets the agent stop without running them again.
		if err := e.ws().RecordChecked(e.ctx, e.now(), "gates passed (mcp)"); err != nil {
			e.notify("recording where the gates passed: " + err.Error())
		}
	}
	return mcpGates{Passed: ev.Passed, Recorded: in.Record, Results: gateResults(gr), Warnings: nonNil(ev.Warnings),
		Resolved: nonNil(gr.Resolved), Feedback: gr.Feedback, Artifacts: gr.Dir, AwaitingApproval: awaitingOf(gr)}, nil
}

type mcpIssueAddArgs struct {
	Summary      string            `json:"summary" jsonschema:"what is wrong, one line first"`
	Type         string            `json:"type,omitempty" jsonschema:"bug (the default), feature, …"`
	Priority     string            `json:"priority,omitempty" jsonschema:"critical, high, medium (the default), low"`
	Fields       map[string]string `json:"fields,omitempty" jsonschema:"any other field of the issue's table, by name (Auto-Retry, Max-Retries, Touches, …)"`
	Details      string            `json:"details,omitempty" jsonschema:"the failure's output: signed, and recorded against an open issue with the same signature"`
	ExitCode     *int              `json:"exit_code,omitempty" jsonschema:"the failing command's exit code, with details"`
	Gate         string            `json:"gate,omitempty" jsonschema:"the gate that failed"`
	Verification string            `json:"verification,omitempty" jsonschema:"how to check the fix"`
	SuggestedFix string            `json:"suggested_fix,omitempty"`
}

func mcpIssueAdd(e *env, in mcpIssueAddArgs) (loop.Added, error) {
	if strings.TrimSpace(in.Summary) == "" {
		return loop.Added{}, fmt.Errorf("summary is empty: say what is wrong")
	}
	for what, s := range map[string]string{"summary": in.Summary, "verification": in.Verification, "suggested_fix": in.SuggestedFix} {
		if err := checkText(what, s); err != nil {
			return loop.Added{}, err
		}
	}
	ni := loop.NewIssue{Fields: map[string]string{}, Sections: map[string]string{queue.SectionSummary: in.Summary}}
	for k, v := range map[string]string{queue.FieldType: in.Type, queue.FieldPriority: in.Priority} {
		if v != "" {
			ni.Fields[k] = v
		}
	}
	maps.Copy(ni.Fields, in.Fields)
	for _, k := range slices.Sorted(maps.Keys(ni.Fields)) {
		if err := checkName("field name", strings.ReplaceAll(k, " ", "-")); err != nil {
			return loop.Added{}, err
		}
		if err := queue.CheckValue(k, ni.Fields[k]); err != nil {
			return loop.Added{}, err
		}
		if err := checkFieldName(k, false); err != nil {
			return loop.Added{}, err
		}
	}
	if in.Gate != "" {
		if err := checkName("gate", in.Gate); err != nil {
			return loop.Added{}, err
		}
	}
	if in.Details != "" {
		f, err := mcpFailure(e, in.Details, in.Gate, in.ExitCode)
		if err != nil {
			return loop.Added{}, err
		}
		ni.Failure = &f
	} else if in.Gate != "" {
		ni.Fields[loop.FieldGate] = in.Gate
	}
	if in.Verification != "" {
		ni.Sections[queue.SectionVerification] = in.Verification
	}
	if in.SuggestedFix != "" {
		ni.Sections[queue.SectionSuggestedFix] = in.SuggestedFix
	}
	return e.ws().AddIssue(e.ctx, e.now(), ni)
}

// mcpFailure reads a failure's output as orchestrate record reads it from
// stdin: signed whole, its head and tail kept.
func mcpFailure(e *env, output, gate string, exitCode *int) (loop.Failure, error) {
	e.stdin = strings.NewReader(output)
	f, err := readFailure(e, "-")
	if err != nil {
		return loop.Failure{}, err
	}
	f.Gate, f.ExitCode = gate, exitCode
	return f, nil
}

type mcpClaimArgs struct {
	ID     string `json:"id,omitempty" jsonschema:"the issue to claim; none: the next ready one"`
	Force  bool   `json:"force,omitempty" jsonschema:"with id: take the claim from whoever holds it (a person reassigning an issue)"`
	As     string `json:"as,omitempty" jsonschema:"the holder's name (default $ORCHESTRATE_AGENT, or agent); the claim is NAME@HOST/PID of the client"`
	Lease  string `json:"lease,omitempty" jsonschema:"the lease's length, such as 10m (the default)"`
	Remote string `json:"remote,omitempty" jsonschema:"the git remote that keeps the claims, for agents on several machines (claim --remote NAME)"`
}

type mcpClaimIDArgs struct {
	ID     string `json:"id" jsonschema:"the issue's ID"`
	Epoch  int    `json:"epoch" jsonschema:"the epoch of your claim"`
	As     string `json:"as,omitempty" jsonschema:"the holder's name (default $ORCHESTRATE_AGENT, or agent)"`
	Lease  string `json:"lease,omitempty" jsonschema:"the lease's length, such as 10m (the default)"`
	Remote string `json:"remote,omitempty" jsonschema:"the git remote that keeps the claim"`
}

// mcpClaimed is a claim tool's result.
type mcpClaimed struct {
	Claimed bool   `json:"claimed" jsonschema:"false when nothing was ready to claim"`
	ID      string `json:"id,omitempty"`
	Summary string `json:"summary,omitempty"`
	Holder  string `json:"holder,omitempty" jsonschema:"NAME@HOST/PID; empty once released"`
	Epoch   int    `json:"epoch,omitempty" jsonschema:"carry it in every change to the issue"`
	Until   string `json:"until,omitempty" jsonschema:"RFC 3339: when the lease ends"`
}

func claimedOf(c loop.Claimed) mcpClaimed {
	return mcpClaimed{Claimed: c.Holder != "", ID: c.ID, Summary: c.Summary, Holder: c.Holder, Epoch: c.Epoch, Until: rfc3339(c.Until)}
}

// holderAndLease checks a claim's holder name and lease, as the claim
// commands' --as and --lease.
func holderAndLease(e *env, as, lease string) (string, time.Duration, error) {
	if as == "" {
		as = defaultHolder()
	}
	holder, err := holderName(e, as)
	if err != nil {
		return "", 0, fmt.Errorf("as %q: want a name without spaces, @, / or |", as)
	}
	ttl := claim.DefaultLease
	if lease != "" {
		if ttl, err = time.ParseDuration(lease); err != nil || ttl <= 0 {
			return "", 0, fmt.Errorf("lease %q: want a positive duration, such as 10m", lease)
		}
	}
	return holder, ttl, nil
}

// mcpClaims are the claims of the workspace, or with remote those kept
// on that git remote, as the claim commands' --remote NAME.
func mcpClaims(e *env, name string) (loop.Claims, error) {
	if name == "" {
		return e.ws().Claims(nil), nil
	}
	if err := checkName("remote", name); err != nil {
		return nil, err
	}
	r, err := remote.New(e.ws().Root(), name)
	if err != nil {
		return nil, err
	}
	r.Clock = e.now
	return e.ws().Claims(r), nil
}

func mcpClaimTool(e *env, in mcpClaimArgs) (mcpClaimed, error) {
	holder, ttl, err := holderAndLease(e, in.As, in.Lease)
	if err != nil {
		return mcpClaimed{}, err
	}
	claims, err := mcpClaims(e, in.Remote)
	if err != nil {
		return mcpClaimed{}, err
	}
	if in.ID != "" {
		if err := checkName("id", in.ID); err != nil {
			return mcpClaimed{}, err
		}
		c, err := claims.Claim(e.ctx, e.now(), in.ID, holder, ttl, in.Force)
		return claimedOf(c), err
	}
	if in.Force {
		return mcpClaimed{}, fmt.Errorf("force takes one issue's claim: give its id")
	}
	c, err := claims.Next(e.ctx, e.now(), holder, ttl, nil)
	if err != nil || c == nil {
		return mcpClaimed{}, err
	}
	return claimedOf(*c), nil
}

func mcpRenew(e *env, in mcpClaimIDArgs) (mcpClaimed, error) {
	if err := checkName("id", in.ID); err != nil {
		return mcpClaimed{}, err
	}
	if in.Epoch <= 0 {
		return mcpClaimed{}, fmt.Errorf("epoch %d: want the epoch of your claim of %s", in.Epoch, in.ID)
	}
	holder, ttl, err := holderAndLease(e, in.As, in.Lease)
	if err != nil {
		return mcpClaimed{}, err
	}
	claims, err := mcpClaims(e, in.Remote)
	if err != nil {
		return mcpClaimed{}, err
	}
	c, err := claims.Renew(e.ctx, e.now(), in.ID, holder, in.Epoch, ttl)
	return claimedOf(c), err
}

type mcpReleaseArgs struct {
	ID     string `json:"id" jsonschema:"the issue's ID"`
	Epoch  int    `json:"epoch,omitempty" jsonschema:"only the claim at this epoch; none: any claim (a person's release)"`
	Remote string `json:"remote,omitempty" jsonschema:"the git remote that keeps the claim"`
}

func mcpRelease(e *env, in mcpReleaseArgs) (mcpClaimed, error) {
	if err := checkName("id", in.ID); err != nil {
		return mcpClaimed{}, err
	}
	if in.Epoch < 0 {
		return mcpClaimed{}, fmt.Errorf("epoch %d: want the epoch of the claim, or none", in.Epoch)
	}
	claims, err := mcpClaims(e, in.Remote)
	if err != nil {
		return mcpClaimed{}, err
	}
	c, err := claims.Release(e.ctx, e.now(), in.ID, in.Epoch)
	return claimedOf(c), err
}

type mcpRecordArgs struct {
	ID       string `json:"id" jsonschema:"the issue's ID"`
	Output   string `json:"output" jsonschema:"the failing verification's output"`
	ExitCode *int   `json:"exit_code,omitempty" jsonschema:"its exit code: 126 or 127 are not retryable, 124 is infrastructure"`
	Gate     string `json:"gate,omitempty" jsonschema:"the gate that failed"`
	Epoch    int    `json:"epoch,omitempty" jsonschema:"the epoch of your claim of the issue: refused once another holds it"`
}

func mcpRecord(e *env, in mcpRecordArgs) (loop.Recorded, error) {
	if err := checkName("id", in.ID); err != nil {
		return loop.Recorded{}, err
	}
	if in.Gate != "" {
		if err := checkName("gate", in.Gate); err != nil {
			return loop.Recorded{}, err
		}
	}
	if err := e.fence(in.ID, in.Epoch); err != nil {
		return loop.Recorded{}, err
	}
	f, err := mcpFailure(e, in.Output, in.Gate, in.ExitCode)
	if err != nil {
		return loop.Recorded{}, err
	}
	return e.ws().Record(e.ctx, e.now(), in.ID, f)
}

type mcpResolveArgs struct {
	ID     string `json:"id" jsonschema:"the issue's ID"`
	Manual bool   `json:"manual,omitempty" jsonschema:"a person fixed it, not the loop"`
	Epoch  int    `json:"epoch,omitempty" jsonschema:"the epoch of your claim of the issue"`
}

// mcpResolved is the resolve tool's result.
type mcpResolved struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Retries int    `json:"retries" jsonschema:"the retries it took"`
	Summary string `json:"summary"`
}

func mcpResolve(e *env, in mcpResolveArgs) (mcpResolved, error) {
	if err := checkName("id", in.ID); err != nil {
		return mcpResolved{}, err
	}
	if err := e.fence(in.ID, in.Epoch); err != nil {
		return mcpResolved{}, err
	}
	r, err := e.ws().Resolve(e.ctx, e.now(), in.ID, in.Manual)
	if err != nil {
		return mcpResolved{}, err
	}
	return mcpResolved{ID: in.ID, Status: queue.StatusResolved, Retries: r.Retries, Summary: r.Summary}, nil
}

type mcpDecideArgs struct {
	Action string `json:"action" jsonschema:"retry, skip or abort"`
	ID     string `json:"id,omitempty" jsonschema:"the issue's ID (retry, skip)"`
	Epoch  int    `json:"epoch,omitempty" jsonschema:"the epoch of your claim of the issue"`
}

// mcpDecided is the decide tool's result.
type mcpDecided struct {
	Action  string `json:"action"`
	ID      string `json:"id,omitempty"`
	Status  string `json:"status,omitempty" jsonschema:"the issue's status now (retry, skip)"`
	Aborted bool   `json:"aborted,omitempty" jsonschema:"a run was in progress and was asked to stop (abort)"`
}

func mcpDecide(e *env, in mcpDecideArgs) (mcpDecided, error) {
	out := mcpDecided{Action: in.Action, ID: in.ID}
	switch in.Action {
	case "abort":
		if in.ID != "" {
			return out, fmt.Errorf("abort stops the run in progress: it takes no id")
		}
		running, err := e.ws().Abort(e.ctx, e.now())
		out.Aborted = running
		return out, err
	case "retry", "skip":
	default:
		return out, fmt.Errorf("action %q: want retry, skip or abort", in.Action)
	}
	if err := checkName("id", in.ID); err != nil {
		return out, err
	}
	if err := e.fence(in.ID, in.Epoch); err != nil {
		return out, err
	}
	if in.Action == "retry" {
		out.Status = queue.StatusPending
		return out, e.ws().Retry(e.ctx, e.now(), in.ID)
	}
	out.Status = queue.StatusSkipped
	return out, e.ws().Skip(e.ctx, e.now(), in.ID)
}

type mcpApproveArgs struct {
	ID      string `json:"id" jsonschema:"the approval request's ID"`
	Reject  bool   `json:"reject,omitempty" jsonschema:"reject instead of approve: needs a comment, which the agent gets as feedback"`
	Comment string `json:"comment,omitempty" jsonschema:"a note kept in the request's Comment section"`
}

func mcpApprove(e *env, in mcpApproveArgs) (loop.Decision, error) {
	if err := checkName("id", in.ID); err != nil {
		return loop.Decision{}, err
	}
	if err := checkText("comment", in.Comment); err != nil {
		return loop.Decision{}, err
	}
	if in.Reject {
		if strings.TrimSpace(in.Comment) == "" {
			return loop.Decision{}, fmt.Errorf("reject needs a comment: what the agent is to change")
		}
		return e.ws().Reject(e.ctx, e.now(), in.ID, in.Comment)
	}
	return e.ws().Approve(e.ctx, e.now(), in.ID, in.Comment)
}
