package analytics

import (
	"maps"
	"slices"
	"time"
)

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
