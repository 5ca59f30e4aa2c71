package analytics

import (
	"maps"
	"slices"
	"strings"
	"time"
)

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

// DayStat counts gate outcomes on one UTC day.
type DayStat struct {
	Day     string `json:"day"` // 2006-01-02
	Pass    int64  `json:"pass"`
	Fail    int64  `json:"fail"`
	Timeout int64  `json:"timeout"`
	Error   int64  `json:"error"`
	Skipped int64  `json:"skipped"`
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
