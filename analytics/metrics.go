package analytics

import (
	"fmt"
	"time"
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

// otherName collects what falls past a bound on distinct names.
const otherName = "(other)"

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

	// Attempts judged by their issue's own tests against a baseline (judge
	// rows): JudgedAttempts counts them, TestsFixed the tests that the
	// attempts that passed turned green, Regressions the tests that passed
	// on the baseline and failed after an attempt, each caught before it
	// landed.
	JudgedAttempts int64 `json:"judged_attempts,omitempty"`
	TestsFixed     int64 `json:"tests_fixed,omitempty"`
	Regressions    int64 `json:"regressions,omitempty"`
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

// String is a one-line summary, for logs and tests.
func (m *Metrics) String() string {
	return fmt.Sprintf("%s, %s, %d fixed autonomously (%.0f%%), %d halted, %s, %s",
		count(m.Rows, "row"), count(m.IssuesFiled, "issue"), m.FixedAutonomously, 100*m.AutonomousFixRate, m.Halted,
		count(m.CapHits, "cap hit"), count(m.Runs, "run"))
}
