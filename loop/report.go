package loop

import (
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
)

// The outcomes of a run: the outcome column of its run_end row in
// history.csv.
const (
	RunPassed      = "passed"            // every blocking gate passed
	RunNothing     = "nothing_to_retry"  // nothing to do, or auto-retry is disabled
	RunCapReached  = "cap_reached"       // the global cap of auto-retry loops
	RunHalted      = "halted"            // the failing issues wait for a person
	RunAborted     = "aborted"           // orchestrate abort
	RunInterrupted = "interrupted"       // the context ended: Ctrl-C, SIGTERM
	RunGatesFailed = "gates_failed"      // MaxLoops reached while the check would retry
	RunAwaiting    = "awaiting_approval" // done but for a person's approval (human.wait: exit)
	RunError       = "error"             // an error stopped the run
)

// The kinds of Step.
const (
	StepLaunch    = "launch"     // an agent is about to start: Agent has its command and prompt
	StepGatesOnly = "gates-only" // the first loop runs the gates alone: the open issues wait on a person
	StepAgent     = "agent"      // the agent finished: Agent
	StepGates     = "gates"      // the gates ran: Gates, Resolved
	StepResolved  = "resolved"   // the passing work resolved issues no gate owns: Resolved
	StepWait      = "wait"       // human gates await a decision, which the run waits for (human.wait: block): Gates
	StepCheck     = "check"      // the auto-retry check decided: Check
)

// Step is one step of a run, reported as it happens.
type Step struct {
	Kind string
	// Worker and Issue name the agent of run --agents the step is of, and
	// its issue; "" for a single agent.
	Worker, Issue string
	Loop          int
	Agent         *AgentRun
	Gates         *GateRun
	Resolved      []Resolution // the issues the gates resolved
	Check         *CheckResult
	Claim         *Claimed // StepClaim
	Merge         string   // StepMerge: its outcome and why
	Why           string   // StepGatesOnly: why the gates run with no agent first
	Result        *Worked  // StepDone
}

// AgentRun is one launch of the agent.
type AgentRun struct {
	Loop     int           `json:"loop"`
	Fresh    bool          `json:"fresh"` // a fresh agent, not the same one resumed
	Command  string        `json:"command"`
	Key      string        `json:"-"`       // the config key of the command: agent.command or agent.resume_command
	Prompt   string        `json:"prompt"`  // the file of the prompt it was sent
	Log      string        `json:"log"`     // the file of its whole output
	Outcome  string        `json:"outcome"` // ok, fail, timeout, or error (could not start, canceled)
	ExitCode int           `json:"exit_code"`
	Reason   string        `json:"reason,omitempty"`
	Duration time.Duration `json:"-"`
	Output   string        `json:"-"` // the head and tail of its output
	// Usage is what the agent reported of its session, turns, tokens and
	// cost; nil when it reported nothing.
	Usage *analytics.Usage `json:"usage,omitempty"`
}

// RunResult is what a run did and why it stopped.
type RunResult struct {
	RunID   string     `json:"run_id"`
	Outcome string     `json:"outcome"` // one of the Run* outcomes
	Reason  string     `json:"reason"`  // why, in a sentence
	Loops   int        `json:"loops"`
	Agents  []AgentRun `json:"agents"`
	// Gates and Check are the last evaluation and the last check.
	Gates *GateRun     `json:"-"`
	Check *CheckResult `json:"check,omitempty"`
	// Stuck lists the issues that wait for a person, when the run stopped
	// for them.
	Stuck []IssueRef `json:"stuck"`
	// Stash is the message of the git stash entry that keeps the last
	// attempt's changes (on_exhaustion: stash).
	Stash string `json:"stash,omitempty"`
	// Commit is the commit of the agent's work when the run passed
	// (on_success: commit); NotCommitted says why there is none, and how
	// to make it.
	Commit       *Commit `json:"commit,omitempty"`
	NotCommitted string  `json:"not_committed,omitempty"`
}

// Worked is what one agent did with one issue.
type Worked struct {
	Agent   string `json:"agent"`
	Issue   string `json:"issue"`
	Summary string `json:"summary"`
	Epoch   int    `json:"epoch"`
	*RunResult
	// Merged is the commit the issue's work was merged as; "" when it was
	// not.
	Merged string `json:"merged,omitempty"`
	// Kept is the worktree kept for a person, with what it holds; "" when
	// it was removed.
	Kept string `json:"kept,omitempty"`
	// TakenOver says the claim was taken over while the agent worked (a
	// person reassigned it, or its lease lapsed): the agent stopped, and
	// the run goes on with the other issues.
	TakenOver bool `json:"taken_over,omitempty"`
}

// The Step kinds of several agents at once (package pool), besides the loop's own (each carries the
// agent's name and its issue).
const (
	StepClaim = "claim" // an agent claimed an issue: Claim
	StepMerge = "merge" // an issue's branch merged, or failed to: Merge
	StepDone  = "done"  // an agent is done with its issue: Result
	// StepQueued: an issue's passing work joined the merge queue.
	StepQueued = "queued"
)
