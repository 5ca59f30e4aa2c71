package analytics

import (
	"cmp"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

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
// Its readers, one per event, lie beside the numbers they count.
// Their argument run is the row's run, nil when it names none.
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
	if ev.RunID != "" && ev.RunID != NoRun {
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
	case EventJudge:
		c.onJudge(ev)
	}
	return nil
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
