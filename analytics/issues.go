package analytics

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// HaltNonRetryable is the detail of a halt row for a failure no retry can fix:
// the gate's command could not run (exit 126 or 127).
const HaltNonRetryable = "nonretryable"

// Issue outcomes: the final state of each issue, in IssueOutcomes order.
const (
	IssueFixedAutonomously = "fixed_autonomously" // resolved with no person's retry or skip
	IssueFixedAfterRetry   = "fixed_after_retry"  // resolved by the loop after a person's retry
	IssueResolvedManually  = "resolved_manually"  // a person resolved it (detail=manual)
	IssueHalted            = "halted"             // halted and not retried since
	IssueExhausted         = "exhausted"          // reported by check as out of retries
	IssueSkipped           = "skipped"            // a person skipped it
	IssueOpen              = "open"               // none of the above yet
)

var issueOutcomeOrder = []string{
	IssueFixedAutonomously, IssueFixedAfterRetry, IssueResolvedManually,
	IssueHalted, IssueExhausted, IssueSkipped, IssueOpen,
}

// SignatureStat is how often a failure signature was seen (issue_add and record rows).
type SignatureStat struct {
	Signature string    `json:"signature"`
	Count     int64     `json:"count"`
	Overcount int64     `json:"overcount,omitempty"` // Count may exceed the truth by this much
	LastIssue string    `json:"last_issue"`
	Gate      string    `json:"gate"`
	LastSeen  time.Time `json:"last_seen"`
}

// IssueStat is one issue's attempts.
type IssueStat struct {
	ID       string `json:"id"`
	Gate     string `json:"gate"`
	Summary  string `json:"summary"`
	Failures int    `json:"failures"` // failed verifications: its issue_add and record rows
	Retries  int    `json:"retries"`  // retry_triggered rows, over its whole history
	Outcome  string `json:"outcome"`  // one of the Issue* outcomes
}

// issueState is what Compute keeps per issue.
type issueState struct {
	gate, summary, haltReason string
	agent                     string // the agent that claimed it last
	firstSeen                 time.Time
	resolveMS                 int64 // -1: unknown
	failures, retries         int32
	sinceReset                int32 // retries since the last person's retry
	resolveAttempts           int32
	state                     uint8
	person, manual, halted    bool
}

const (
	stateOpen uint8 = iota
	stateResolved
	stateHalted
	stateExhausted
	stateSkipped
)

func (c *computer) onIssueAdd(ev Event) {
	is := c.issue(ev)
	if ev.Gate != "" {
		is.gate = c.intern(ev.Gate)
	}
	if ev.Detail != "" {
		is.summary = strings.Clone(truncate(ev.Detail, maxSummaryLength))
	}
	c.failed(is, ev)
	c.week(ev.Time).IssuesFiled++
}

func (c *computer) onRetryTriggered(ev Event, run *RunStat) {
	is := c.issue(ev)
	is.retries++
	is.sinceReset++
	if is.state == stateExhausted {
		is.state = stateOpen
	}
	if run != nil {
		run.IssuesRetried++
	}
}

func (c *computer) onResolve(ev Event) {
	is := c.issue(ev)
	is.state = stateResolved
	is.manual = ev.Detail == DetailManual
	if !is.manual {
		c.week(ev.Time).IssuesFixed++
	}
	is.resolveAttempts = max(int32(ev.Attempt), is.sinceReset)
	switch {
	case ev.DurationMS > 0:
		is.resolveMS = ev.DurationMS
	case !is.firstSeen.IsZero() && !ev.Time.Before(is.firstSeen):
		is.resolveMS = ev.Time.Sub(is.firstSeen).Milliseconds()
	default:
		is.resolveMS = -1
	}
}

// issue returns the state of ev's issue, creating it on its first row.
func (c *computer) issue(ev Event) *issueState {
	is, ok := c.issues[ev.IssueID]
	if !ok {
		is = &issueState{firstSeen: ev.Time, resolveMS: -1}
		c.issues[strings.Clone(ev.IssueID)] = is
	}
	return is
}

// failed notes a failed verification of an issue.
func (c *computer) failed(is *issueState, ev Event) {
	is.failures++
	if is.state != stateHalted && is.state != stateSkipped {
		is.state = stateOpen
	}
	if ev.Signature != "" {
		gate := ev.Gate
		if gate == "" {
			gate = is.gate
		}
		c.sigs.add(ev.Signature, ev.IssueID, c.intern(gate), ev.Time)
	}
}

// finishIssues settles the numbers taken over the issues.
func (c *computer) finishIssues() {
	m := &c.m
	outcomes := make(map[string]int64)
	halts := &counter{c: c}
	var durations []int64
	var attemptsSum int64
	var top []IssueStat
	for id, is := range c.issues {
		outcome := is.outcome()
		outcomes[outcome]++
		if is.halted {
			m.Halted++
			halts.add(is.haltReason)
		}
		if (outcome == IssueHalted && is.haltReason == HaltNonRetryable) || outcome == IssueSkipped {
			m.FalsePositives++
		}
		if outcome == IssueFixedAutonomously || outcome == IssueFixedAfterRetry {
			m.FixedByLoop++
			attemptsSum += int64(is.resolveAttempts) + 1
			if is.resolveMS >= 0 {
				durations = append(durations, is.resolveMS)
			}
		}
		top = keepTopIssues(top, IssueStat{
			ID: id, Gate: is.gate, Summary: is.summary,
			Failures: int(is.failures), Retries: int(is.retries), Outcome: outcome,
		})
	}
	m.IssuesFiled = len(c.issues)
	m.FixedAutonomously = int(outcomes[IssueFixedAutonomously])
	m.AutonomousFixRate = ratio(int64(m.FixedAutonomously), int64(m.IssuesFiled))
	m.MeanAttemptsToPass = float64(attemptsSum) / float64(max(m.FixedByLoop, 1))
	m.TimeToFix = durationStats(durations)
	m.FalsePositiveRate = ratio(int64(m.FalsePositives), int64(m.IssuesFiled))
	m.HaltReasons = halts.sorted()
	for _, name := range issueOutcomeOrder {
		m.IssueOutcomes = append(m.IssueOutcomes, Count{Name: name, N: outcomes[name]})
	}
	m.AttemptsPerIssue = top
}

func (is *issueState) outcome() string {
	switch is.state {
	case stateResolved:
		switch {
		case is.manual:
			return IssueResolvedManually
		case is.person:
			return IssueFixedAfterRetry
		default:
			return IssueFixedAutonomously
		}
	case stateHalted:
		return IssueHalted
	case stateExhausted:
		return IssueExhausted
	case stateSkipped:
		return IssueSkipped
	default:
		return IssueOpen
	}
}

// keepTopIssues inserts s into top, which holds the keepIssues issues with the most
// attempts, most first.
func keepTopIssues(top []IssueStat, s IssueStat) []IssueStat {
	i, _ := slices.BinarySearchFunc(top, s, compareIssues)
	if i >= keepIssues {
		return top
	}
	top = slices.Insert(top, i, s)
	return top[:min(len(top), keepIssues)]
}

func compareIssues(a, b IssueStat) int {
	return cmp.Or(
		cmp.Compare(b.Retries, a.Retries),
		cmp.Compare(b.Failures, a.Failures),
		strings.Compare(a.ID, b.ID),
	)
}
