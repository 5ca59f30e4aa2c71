package analytics

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on what Compute keeps, whatever the length of the history.
const (
	keepRuns         = 100  // RecentRuns: the most recent runs
	keepDays         = 60   // GateOutcomesByDay: the most recent days with gate runs
	keepWeeks        = 106  // Weeks: the most recent weeks with events, two years
	keepIssues       = 20   // AttemptsPerIssue: the issues with the most attempts
	keepSignatures   = 10   // TopSignatures
	keepMalformed    = 10   // MalformedRows
	sketchCapacity   = 1000 // signature counters (see topSignatures)
	maxGates         = 100  // gates counted by name; the rest go under otherName
	maxNames         = 64   // distinct events or outcomes counted by name
	maxInterned      = 4096
	maxSummaryLength = 200 // bytes of an issue's summary kept for the tables
)

// HaltNonRetryable is the detail of a halt row for a failure no retry can fix:
// the gate's command could not run (exit 126 or 127).
const HaltNonRetryable = "nonretryable"

// otherName collects what falls past a bound on distinct names.
const otherName = "(other)"

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

// Metrics are the numbers of analytics.html, computed from a history by Compute.
// Rates are fractions in [0, 1], and 0 when their denominator is 0.
type Metrics struct {
	Rows          int64          `json:"rows"`                     // rows read, header excluded; each once (Sources)
	Malformed     int64          `json:"malformed"`                // rows skipped as unreadable
	MalformedRows []MalformedRow `json:"malformed_rows,omitempty"` // the first few of them
	First         time.Time      `json:"first"`                    // earliest event time
	Last          time.Time      `json:"last"`                     // latest event time
	// Sources are the histories read, when several were (ComputeAll), and
	// Duplicates the rows read more than once among them, counted once.
	Sources    []SourceStat `json:"sources,omitempty"`
	Duplicates int64        `json:"duplicates,omitempty"`

	// IssuesFiled is the number of distinct issues the history names in issue rows
	// (issue_add, record, halt, retry_triggered, resolve, skip, retry, gate): those
	// filed by the tool and those a person added by hand.
	IssuesFiled int `json:"issues_filed"`
	// FixedAutonomously counts issues whose last state is resolved, by the loop, with
	// no person's retry or skip in their history.
	FixedAutonomously int `json:"fixed_autonomously"`
	// AutonomousFixRate is FixedAutonomously / IssuesFiled.
	AutonomousFixRate float64 `json:"autonomous_fix_rate"`
	// FixedByLoop counts issues resolved by the loop, after a person's retry or not:
	// the issues MeanAttemptsToPass and TimeToSuccess are taken over.
	FixedByLoop int `json:"fixed_by_loop"`
	// MeanAttemptsToPass (retry efficiency) is the mean over FixedByLoop issues of
	// their resolve row's attempt (the retries it took since the last reset) plus one
	// for the failing attempt that filed the issue: 1 means no retry was needed.
	MeanAttemptsToPass float64 `json:"mean_attempts_to_pass"`
	// TimeToSuccess (seed 001: "total time from initial task to final gate
	// passage") is, over the SucceededRuns, the time from the start of the task (the
	// run's first row, its run_start) to the gate row that left every gate of the run
	// passing.
	TimeToSuccess DurationStats `json:"time_to_success"`
	// SucceededRuns counts runs whose gates all passed in the end: each gate's last
	// row in the run is a pass (or skipped), and at least one passed.
	SucceededRuns int `json:"succeeded_runs"`
	// TimeToFix is the time from an issue's creation to its resolve, over
	// FixedByLoop issues: the resolve row's duration_ms, or else the time since the
	// issue's first row.
	TimeToFix DurationStats `json:"time_to_fix"`
	// FalsePositives (seed 001: "gates that fail but shouldn't") counts issues whose
	// failure the history shows was not the code's: halted as nonretryable (the
	// gate's command could not run: exit 126 or 127) or skipped by a person (who
	// judged it needs no fix), as their last state. FalsePositiveRate is
	// FalsePositives / IssuesFiled.
	FalsePositives    int     `json:"false_positives"`
	FalsePositiveRate float64 `json:"false_positive_rate"`

	// What the agents reported of their use (usage rows) and how long they ran
	// (agent rows). UsageReports counts usage rows; TokensPerSuccess (seed 001's
	// token efficiency: average tokens consumed per successful gate passage) is
	// Tokens / SucceededRuns, CostPerSuccess the same for CostUSD; AgentMSPerRun
	// and CostPerRun are over all Runs.
	AgentMS          int64   `json:"agent_ms"`
	AgentMSPerRun    int64   `json:"agent_ms_per_run"`
	UsageReports     int64   `json:"usage_reports"`
	Tokens           int64   `json:"tokens"`
	CostUSD          float64 `json:"cost_usd"`
	TokensPerSuccess float64 `json:"tokens_per_success"`
	CostPerSuccess   float64 `json:"cost_per_success"`
	CostPerRun       float64 `json:"cost_per_run"`
	// Halted counts issues that halted at least once; HaltReasons splits them by the
	// reason of their last halt.
	Halted      int     `json:"halted"`
	HaltReasons []Count `json:"halt_reasons"`
	// CapHits counts runs that reached the global auto-retry cap (a cap row, a check
	// with outcome cap_reached or a run_end with outcome cap_reached; once per run).
	CapHits int `json:"cap_hits"`
	// Runs counts distinct run IDs.
	Runs int `json:"runs"`

	// GateRuns counts gate rows other than skipped ones; GateFailures those with
	// outcome fail, timeout or error; GateFailureRate is their ratio.
	GateRuns        int64   `json:"gate_runs"`
	GateFailures    int64   `json:"gate_failures"`
	GateFailureRate float64 `json:"gate_failure_rate"`
	// Gates has the same per gate, by name.
	Gates []GateStat `json:"gates"`

	// RetryLoops counts auto-retry loops (check rows with outcome triggered);
	// RetriesPerRun is RetryLoops / Runs, MaxRetriesPerRun the most in one run.
	RetryLoops       int64   `json:"retry_loops"`
	RetriesPerRun    float64 `json:"retries_per_run"`
	MaxRetriesPerRun int     `json:"max_retries_per_run"`
	AgentLaunches    int64   `json:"agent_launches"`

	// The mix of outcomes.
	IssueOutcomes []Count `json:"issue_outcomes"` // by final state, in a fixed order
	RunOutcomes   []Count `json:"run_outcomes"`   // run_end outcomes
	AgentOutcomes []Count `json:"agent_outcomes"`
	CheckOutcomes []Count `json:"check_outcomes"`
	Events        []Count `json:"events"` // rows by event name

	TopSignatures     []SignatureStat `json:"top_signatures"`       // the signatures seen most often
	AttemptsPerIssue  []IssueStat     `json:"attempts_per_issue"`   // the issues with the most retries, then failures
	GateOutcomesByDay []DayStat       `json:"gate_outcomes_by_day"` // oldest first
	Weeks             []WeekStat      `json:"weeks"`                // oldest first, the most recent keepWeeks
	RecentRuns        []RunStat       `json:"recent_runs"`          // oldest first

	// Several agents at once (run --agents): each agent's claims, merges and
	// merge failures (a conflict, gates failing after the rebase), by name;
	// and over the runs of several agents, their wall time against the
	// agents' summed time (what one agent after another would have taken),
	// whose difference is the time saved.
	Agents          []AgentStat `json:"agents"`
	ParallelRuns    int         `json:"parallel_runs"`
	ParallelWallMS  int64       `json:"parallel_wall_ms"`
	ParallelAgentMS int64       `json:"parallel_agent_ms"`
	TimeSavedMS     int64       `json:"time_saved_ms"`
	MergeConflicts  int64       `json:"merge_conflicts"`
}

// AgentStat is one agent's work across runs of several agents.
type AgentStat struct {
	Name          string `json:"name"`
	Claims        int64  `json:"claims"`
	Merged        int64  `json:"merged"`
	MergeFailures int64  `json:"merge_failures"`
}

// WeekStat rolls up one week, Monday to Sunday in UTC. Rows count in the week of
// their time; a run, and whether it succeeded, in the week it started.
type WeekStat struct {
	Week          string    `json:"week"` // its Monday, 2006-01-02
	Start         time.Time `json:"start"`
	Runs          int       `json:"runs"`
	Succeeded     int       `json:"succeeded"`
	GateRuns      int64     `json:"gate_runs"` // all but skipped
	GateFailures  int64     `json:"gate_failures"`
	IssuesFiled   int64     `json:"issues_filed"` // issue_add rows
	IssuesFixed   int64     `json:"issues_fixed"` // resolve rows but a person's
	AgentLaunches int64     `json:"agent_launches"`
	AgentMS       int64     `json:"agent_ms"`
	Tokens        int64     `json:"tokens"`
	CostUSD       float64   `json:"cost_usd"`
	// MeanTimeToSuccessMS is the mean TimeToSuccess of the week's succeeded runs.
	MeanTimeToSuccessMS int64 `json:"mean_time_to_success_ms"`
	successMS           int64
}

// MalformedRow is a row that Compute skipped.
type MalformedRow struct {
	File    string `json:"file,omitempty"` // its history, when several were read (ComputeAll)
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// Count is a number of things with a name.
type Count struct {
	Name string `json:"name"`
	N    int64  `json:"n"`
}

// DurationStats summarizes durations, in milliseconds.
type DurationStats struct {
	Count    int   `json:"count"`
	MeanMS   int64 `json:"mean_ms"`
	MedianMS int64 `json:"median_ms"` // exact: one value per fixed issue is kept
}

// GateStat counts one gate's runs by outcome.
type GateStat struct {
	Name           string  `json:"name"`
	Runs           int64   `json:"runs"` // all but skipped
	Pass           int64   `json:"pass"`
	Fail           int64   `json:"fail"`
	Timeout        int64   `json:"timeout"`
	Error          int64   `json:"error"`
	Skipped        int64   `json:"skipped"`
	Other          int64   `json:"other"` // outcomes the report does not know
	FailureRate    float64 `json:"failure_rate"`
	MeanDurationMS int64   `json:"mean_duration_ms"`
	durationSum    int64
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

// DayStat counts gate outcomes on one UTC day.
type DayStat struct {
	Day     string `json:"day"` // 2006-01-02
	Pass    int64  `json:"pass"`
	Fail    int64  `json:"fail"`
	Timeout int64  `json:"timeout"`
	Error   int64  `json:"error"`
	Skipped int64  `json:"skipped"`
}

// RunStat is one run.
type RunStat struct {
	ID            string    `json:"id"`
	Start         time.Time `json:"start"` // its first row
	Loops         int       `json:"loops"` // the highest loop number seen
	AgentLaunches int       `json:"agent_launches"`
	GateFailures  int       `json:"gate_failures"`
	RetryLoops    int       `json:"retry_loops"`    // check rows with outcome triggered
	IssuesRetried int       `json:"issues_retried"` // retry_triggered rows
	CapReached    bool      `json:"cap_reached"`
	Outcome       string    `json:"outcome"` // its run_end outcome, empty while none
	AgentMS       int64     `json:"agent_ms"`
	Tokens        int64     `json:"tokens"`
	CostUSD       float64   `json:"cost_usd"`
	// Succeeded: every gate's last row in the run is a pass (or skipped), and one
	// passed; TimeToSuccessMS is then the time from its start to that pass. The
	// rows after its run_end are not the run's.
	Succeeded       bool  `json:"succeeded"`
	TimeToSuccessMS int64 `json:"time_to_success_ms,omitempty"`

	failing   map[string]bool // gates whose last row in the run is not a pass
	succeeded time.Time       // the pass that left none failing, zero while failing
}

// Compute reads a history and reduces it to Metrics, in one pass. Memory is bounded by
// the number of distinct issues (a few hundred bytes each, summary included) and by
// the constants above, not by the number of rows: a million rows over 10,000 issues
// peak under 10 MB of heap (see BenchmarkGenerateScaling). Malformed rows are skipped
// and counted; the error is one of readHistory's.
func Compute(r io.Reader) (*Metrics, error) {
	c := newComputer()
	if err := readHistory(r, c.add, c.bad); err != nil {
		return nil, err
	}
	return c.finish(), nil
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

type computer struct {
	m        Metrics
	issues   map[string]*issueState
	gates    map[string]*GateStat
	agents   map[string]*AgentStat
	days     map[int64]*DayStat
	runs     map[string]*RunStat
	weeks    map[int64]*WeekStat
	success  []int64  // TimeToSuccess of each succeeded run
	runOrder []string // ring of the kept runs' IDs, oldest at runNext once full
	runNext  int
	sigs     *topSignatures
	interned map[string]string

	events, runOutcomes, agentOutcomes, checkOutcomes *counter
}

func newComputer() *computer {
	c := &computer{
		issues:   make(map[string]*issueState),
		gates:    make(map[string]*GateStat),
		agents:   make(map[string]*AgentStat),
		days:     make(map[int64]*DayStat),
		weeks:    make(map[int64]*WeekStat),
		runs:     make(map[string]*RunStat),
		sigs:     newTopSignatures(sketchCapacity),
		interned: make(map[string]string),
	}
	c.events = &counter{c: c}
	c.runOutcomes = &counter{c: c}
	c.agentOutcomes = &counter{c: c}
	c.checkOutcomes = &counter{c: c}
	return c
}

func (c *computer) bad(e *rowError) {
	c.m.Malformed++
	if len(c.m.MalformedRows) < keepMalformed {
		c.m.MalformedRows = append(c.m.MalformedRows, MalformedRow{File: e.File, Line: e.Line, Message: e.Err.Error()})
	}
}

// intern returns s in memory of its own, shared with earlier equal strings: the
// strings of a row share one allocation with the whole row, which a map key would keep.
func (c *computer) intern(s string) string {
	if t, ok := c.interned[s]; ok {
		return t
	}
	t := strings.Clone(s)
	if len(c.interned) < maxInterned {
		c.interned[t] = t
	}
	return t
}

// add reads one row of the history into the computer.
func (c *computer) add(ev Event) error {
	m := &c.m
	m.Rows++
	if m.First.IsZero() || ev.Time.Before(m.First) {
		m.First = ev.Time
	}
	if ev.Time.After(m.Last) {
		m.Last = ev.Time
	}
	c.events.add(ev.Event)

	switch ev.Event {
	case EventIssueAdd, EventRecord, EventHalt, EventRetryTriggered, EventResolve, EventSkip, EventRetry:
		if ev.IssueID == "" {
			return nil // about no issue: counted under Events only
		}
	}
	var run *RunStat
	if ev.RunID != "" {
		run = c.run(ev.RunID, ev.Time)
		run.Loops = max(run.Loops, ev.Loop)
	}

	switch ev.Event {
	case EventRunEnd:
		c.onRunEnd(ev, run)
	case EventAgent:
		c.onAgent(ev, run)
	case EventUsage:
		c.onUsage(ev, run)
	case EventGate:
		c.onGate(ev, run)
	case EventIssueAdd:
		c.onIssueAdd(ev)
	case EventRecord:
		c.failed(c.issue(ev), ev)
	case EventHalt:
		is := c.issue(ev)
		is.halted = true
		is.haltReason = c.intern(ev.Detail)
		is.state = stateHalted
	case EventCheck:
		c.onCheck(ev, run)
	case EventRetryTriggered:
		c.onRetryTriggered(ev, run)
	case EventResolve:
		c.onResolve(ev)
	case EventCap:
		c.capHit(run)
	case EventSkip:
		is := c.issue(ev)
		is.person = true
		is.state = stateSkipped
	case EventRetry:
		is := c.issue(ev)
		is.person = true
		is.state = stateOpen
		is.sinceReset = 0
	case EventClaim, EventMerge:
		c.onAgentWork(ev)
	}
	return nil
}

// onAgentWork counts a claim or a merge against the agent that claimed the
// issue: the name before the @ of its holder.
func (c *computer) onAgentWork(ev Event) {
	if ev.IssueID == "" {
		return
	}
	is := c.issue(ev)
	if ev.Event == EventClaim {
		holder, _, _ := strings.Cut(strings.TrimPrefix(ev.Detail, "holder="), " ")
		name, _, _ := strings.Cut(holder, "@")
		if name == "" || len(c.agents) >= keepAgents && c.agents[name] == nil {
			return
		}
		is.agent = c.intern(name)
	}
	a := c.agents[is.agent]
	if a == nil {
		if is.agent == "" || len(c.agents) >= keepAgents {
			return
		}
		a = &AgentStat{Name: is.agent}
		c.agents[is.agent] = a
	}
	switch {
	case ev.Event == EventClaim:
		a.Claims++
	case ev.Outcome == OutcomePass:
		a.Merged++
	default:
		a.MergeFailures++
		c.m.MergeConflicts++
	}
}

// keepAgents bounds the agents the report tells apart.
const keepAgents = 256

// The readers of add, one per event; run is the row's run, nil when it
// names none.

func (c *computer) onRunEnd(ev Event, run *RunStat) {
	c.runOutcomes.add(ev.Outcome)
	// A run of several agents: its wall time, and the agents' summed time
	// (detail "…; agents=N merged=M agent_ms=T").
	if i := strings.LastIndex(ev.Detail, "; agents="); i >= 0 {
		var agents, merged int
		var agentMS int64
		if n, _ := fmt.Sscanf(ev.Detail[i:], "; agents=%d merged=%d agent_ms=%d", &agents, &merged, &agentMS); n == 3 && agents > 1 {
			c.m.ParallelRuns++
			c.m.ParallelWallMS += ev.DurationMS
			c.m.ParallelAgentMS += agentMS
		}
	}
	if run != nil {
		run.Outcome = c.intern(ev.Outcome)
	}
	if ev.Outcome == OutcomeCapReached {
		c.capHit(run)
	}
}

func (c *computer) onAgent(ev Event, run *RunStat) {
	m := &c.m
	m.AgentLaunches++
	m.AgentMS += max(ev.DurationMS, 0)
	c.agentOutcomes.add(ev.Outcome)
	w := c.week(ev.Time)
	w.AgentLaunches++
	w.AgentMS += max(ev.DurationMS, 0)
	if run != nil {
		run.AgentLaunches++
		run.AgentMS += max(ev.DurationMS, 0)
	}
}

func (c *computer) onUsage(ev Event, run *RunStat) {
	u, err := ParseUsage(ev.Detail)
	if err != nil {
		return // counted under Events; its numbers are unreadable
	}
	m := &c.m
	m.UsageReports++
	m.Tokens += u.Tokens()
	m.CostUSD += u.CostUSD
	w := c.week(ev.Time)
	w.Tokens += u.Tokens()
	w.CostUSD += u.CostUSD
	if run != nil {
		run.Tokens += u.Tokens()
		run.CostUSD += u.CostUSD
	}
}

func (c *computer) onGate(ev Event, run *RunStat) {
	failed := c.gate(ev)
	if ev.Outcome != OutcomeSkipped {
		w := c.week(ev.Time)
		w.GateRuns++
		if failed {
			w.GateFailures++
		}
	}
	if run != nil {
		if failed {
			run.GateFailures++
		}
		run.gateOutcome(ev)
	}
	if ev.IssueID != "" {
		c.issue(ev)
	}
}

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

func (c *computer) onCheck(ev Event, run *RunStat) {
	m := &c.m
	c.checkOutcomes.add(ev.Outcome)
	switch ev.Outcome {
	case OutcomeTriggered:
		m.RetryLoops++
		if run != nil {
			run.RetryLoops++
			m.MaxRetriesPerRun = max(m.MaxRetriesPerRun, run.RetryLoops)
		}
	case OutcomeCapReached:
		c.capHit(run)
	case OutcomeExhausted:
		for _, id := range strings.FieldsFunc(ev.Detail, isIDSeparator) {
			if is := c.issues[id]; is != nil && is.state == stateOpen {
				is.state = stateExhausted
			}
		}
	}
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

func isIDSeparator(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' }

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

func (c *computer) capHit(run *RunStat) {
	if run == nil {
		c.m.CapHits++
		return
	}
	if !run.CapReached {
		run.CapReached = true
		c.m.CapHits++
	}
}

// run returns the state of a run, keeping only the keepRuns most recently started.
func (c *computer) run(id string, at time.Time) *RunStat {
	if r, ok := c.runs[id]; ok {
		return r
	}
	r := &RunStat{ID: strings.Clone(id), Start: at}
	c.m.Runs++
	c.week(at).Runs++
	if len(c.runOrder) < keepRuns {
		c.runOrder = append(c.runOrder, r.ID)
	} else {
		c.endRun(c.runs[c.runOrder[c.runNext]])
		delete(c.runs, c.runOrder[c.runNext])
		c.runOrder[c.runNext] = r.ID
		c.runNext = (c.runNext + 1) % keepRuns
	}
	c.runs[r.ID] = r
	return r
}

// gateOutcome follows the run's gates: which fail as of their last row, and the
// pass that left none failing.
func (r *RunStat) gateOutcome(ev Event) {
	if r.Outcome != "" {
		// The run ended (run_end): a gate run later in its session (orchestrate
		// gate) is not the run's, and does not change whether it succeeded.
		return
	}
	name := ev.Gate
	switch {
	case ev.Outcome == OutcomeSkipped:
		return
	case ev.Detail == DetailAdvisory || ev.Detail == DetailInformational:
		// Its failure is reported, and does not fail the run.
		return
	case ev.Outcome == OutcomePass:
		delete(r.failing, name)
		if len(r.failing) == 0 {
			r.succeeded = ev.Time
		}
	default: // fail, timeout, error, awaiting approval: not passing
		if r.failing == nil {
			r.failing = make(map[string]bool)
		}
		if len(r.failing) < maxGates {
			r.failing[name] = true
		}
		r.succeeded = time.Time{}
	}
}

// endRun settles a run whose rows are all read: whether it succeeded, and when.
func (c *computer) endRun(r *RunStat) {
	if r.succeeded.IsZero() || len(r.failing) > 0 {
		return
	}
	r.Succeeded = true
	r.TimeToSuccessMS = max(r.succeeded.Sub(r.Start).Milliseconds(), 0)
	c.m.SucceededRuns++
	c.success = append(c.success, r.TimeToSuccessMS)
	if w, ok := c.weeks[weekKey(r.Start)]; ok {
		w.Succeeded++
		w.successMS += r.TimeToSuccessMS
	}
}

// gate counts a gate row and reports whether it was a failure.
func (c *computer) gate(ev Event) bool {
	name := ev.Gate
	if name == "" {
		name = "(unnamed)"
	}
	g, ok := c.gates[name]
	if !ok {
		if len(c.gates) >= maxGates {
			name = otherName
			g = c.gates[name]
		}
		if g == nil {
			g = &GateStat{Name: c.intern(name)}
			c.gates[g.Name] = g
		}
	}
	day := c.day(ev.Time)
	failed := false
	switch ev.Outcome {
	case OutcomePass:
		g.Pass++
		day.Pass++
	case OutcomeFail:
		g.Fail++
		day.Fail++
		failed = true
	case OutcomeTimeout:
		g.Timeout++
		day.Timeout++
		failed = true
	case OutcomeError:
		g.Error++
		day.Error++
		failed = true
	case OutcomeSkipped:
		g.Skipped++
		day.Skipped++
		return false
	default:
		g.Other++
	}
	g.Runs++
	g.durationSum += ev.DurationMS
	c.m.GateRuns++
	if failed {
		c.m.GateFailures++
	}
	return failed
}

// weekKey numbers the week of t: the days since the epoch of its Monday (UTC).
func weekKey(t time.Time) int64 {
	const secondsPerDay = 24 * 60 * 60
	sec := t.Unix()
	day := sec / secondsPerDay
	if sec < 0 && sec%secondsPerDay != 0 {
		day--
	}
	// 1970-01-01 was a Thursday: day 0 is weekday 3 counting from Monday.
	return day - (((day+3)%7)+7)%7
}

func (c *computer) week(t time.Time) *WeekStat {
	key := weekKey(t)
	if w, ok := c.weeks[key]; ok {
		return w
	}
	if len(c.weeks) >= 2*keepWeeks {
		keepNewest(c.weeks, keepWeeks)
	}
	start := time.Unix(key*24*60*60, 0).UTC()
	w := &WeekStat{Week: start.Format(time.DateOnly), Start: start}
	c.weeks[key] = w
	return w
}

// keepNewest drops all but the keep highest keys of m: the most recent
// days or weeks.
func keepNewest[V any](m map[int64]V, keep int) {
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys[:max(len(keys)-keep, 0)] {
		delete(m, k)
	}
}

func (c *computer) day(t time.Time) *DayStat {
	const secondsPerDay = 24 * 60 * 60
	sec := t.Unix()
	key := sec / secondsPerDay
	if sec < 0 && sec%secondsPerDay != 0 {
		key--
	}
	if d, ok := c.days[key]; ok {
		return d
	}
	if len(c.days) >= 2*keepDays {
		keepNewest(c.days, keepDays)
	}
	d := &DayStat{Day: time.Unix(key*secondsPerDay, 0).UTC().Format(time.DateOnly)}
	c.days[key] = d
	return d
}

// finish settles what add has read into the Metrics.
func (c *computer) finish() *Metrics {
	m := &c.m
	c.finishIssues()
	c.finishGates()
	for _, a := range c.agents {
		m.Agents = append(m.Agents, *a)
	}
	slices.SortFunc(m.Agents, func(a, b AgentStat) int { return strings.Compare(a.Name, b.Name) })
	m.TimeSavedMS = max(m.ParallelAgentMS-m.ParallelWallMS, 0)
	m.RetriesPerRun = ratio(m.RetryLoops, int64(m.Runs))
	m.RunOutcomes = c.runOutcomes.sorted()
	m.AgentOutcomes = c.agentOutcomes.sorted()
	m.CheckOutcomes = c.checkOutcomes.sorted()
	m.Events = c.events.sorted()
	m.TopSignatures = c.sigs.top(keepSignatures)
	c.finishDays()
	c.finishRuns()
	c.finishWeeks()
	m.emptyLists()
	return m
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

// finishGates settles the gates' rates, by name.
func (c *computer) finishGates() {
	m := &c.m
	m.GateFailureRate = ratio(m.GateFailures, m.GateRuns)
	for _, g := range c.gates {
		g.FailureRate = ratio(g.Fail+g.Timeout+g.Error, g.Runs)
		g.MeanDurationMS = g.durationSum / max(g.Runs, 1)
		m.Gates = append(m.Gates, *g)
	}
	slices.SortFunc(m.Gates, func(a, b GateStat) int { return strings.Compare(a.Name, b.Name) })
}

// finishDays lists the kept days, oldest first.
func (c *computer) finishDays() {
	keepNewest(c.days, keepDays)
	for _, k := range slices.Sorted(maps.Keys(c.days)) {
		c.m.GateOutcomesByDay = append(c.m.GateOutcomesByDay, *c.days[k])
	}
}

// finishRuns settles the kept runs, oldest first, and the numbers per run.
func (c *computer) finishRuns() {
	m := &c.m
	for i := range c.runOrder {
		r := c.runs[c.runOrder[(c.runNext+i)%len(c.runOrder)]]
		c.endRun(r)
		m.RecentRuns = append(m.RecentRuns, *r)
	}
	m.TimeToSuccess = durationStats(c.success)
	m.TokensPerSuccess = ratioF(float64(m.Tokens), float64(m.SucceededRuns))
	m.CostPerSuccess = ratioF(m.CostUSD, float64(m.SucceededRuns))
	m.CostPerRun = ratioF(m.CostUSD, float64(m.Runs))
	m.AgentMSPerRun = m.AgentMS / int64(max(m.Runs, 1))
}

// finishWeeks lists the kept weeks, oldest first. It follows finishRuns,
// which counts the weeks' succeeded runs.
func (c *computer) finishWeeks() {
	keepNewest(c.weeks, keepWeeks)
	c.m.Weeks = []WeekStat{}
	for _, k := range slices.Sorted(maps.Keys(c.weeks)) {
		w := *c.weeks[k]
		if w.Succeeded > 0 {
			w.MeanTimeToSuccessMS = w.successMS / int64(w.Succeeded)
		}
		c.m.Weeks = append(c.m.Weeks, w)
	}
}

// emptyLists makes the lists that are nil empty: empty lists, not null, in
// JSON, so that a reader need not tell the two apart.
func (m *Metrics) emptyLists() {
	for _, l := range []*[]Count{&m.HaltReasons, &m.RunOutcomes, &m.AgentOutcomes, &m.CheckOutcomes, &m.Events} {
		if *l == nil {
			*l = []Count{}
		}
	}
	if m.Gates == nil {
		m.Gates = []GateStat{}
	}
	if m.Agents == nil {
		m.Agents = []AgentStat{}
	}
	if m.TopSignatures == nil {
		m.TopSignatures = []SignatureStat{}
	}
	if m.AttemptsPerIssue == nil {
		m.AttemptsPerIssue = []IssueStat{}
	}
	if m.GateOutcomesByDay == nil {
		m.GateOutcomesByDay = []DayStat{}
	}
	if m.RecentRuns == nil {
		m.RecentRuns = []RunStat{}
	}
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

func durationStats(ms []int64) DurationStats {
	if len(ms) == 0 {
		return DurationStats{}
	}
	slices.Sort(ms)
	var sum int64
	for _, d := range ms {
		sum += d
	}
	n := len(ms)
	median := ms[n/2]
	if n%2 == 0 {
		median = (ms[n/2-1] + ms[n/2]) / 2
	}
	return DurationStats{Count: n, MeanMS: sum / int64(n), MedianMS: median}
}

func ratioF(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// counter counts names, up to maxNames of them; the rest count under otherName.
type counter struct {
	c *computer
	n map[string]int64
}

func (k *counter) add(name string) {
	if name == "" {
		name = "(none)"
	}
	if k.n == nil {
		k.n = make(map[string]int64)
	}
	if _, ok := k.n[name]; !ok {
		if len(k.n) >= maxNames {
			name = otherName
		} else {
			name = k.c.intern(name)
		}
	}
	k.n[name]++
}

// sorted returns the counts, most first.
func (k *counter) sorted() []Count {
	out := make([]Count, 0, len(k.n))
	for name, n := range k.n {
		out = append(out, Count{Name: name, N: n})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.N, a.N), strings.Compare(a.Name, b.Name))
	})
	return out
}

// String is a one-line summary, for logs and tests.
func (m *Metrics) String() string {
	return fmt.Sprintf("%d rows, %d issues, %d fixed autonomously (%.0f%%), %d halted, %d cap hits, %d runs",
		m.Rows, m.IssuesFiled, m.FixedAutonomously, 100*m.AutonomousFixRate, m.Halted, m.CapHits, m.Runs)
}
