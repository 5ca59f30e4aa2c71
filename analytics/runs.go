package analytics

import (
	"fmt"
	"strings"
	"time"
)

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

func isIDSeparator(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' }

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
