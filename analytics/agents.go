package analytics

import "strings"

// AgentStat is one agent's work across runs of several agents.
type AgentStat struct {
	// Name is the agent's name and its machine, NAME@HOST: agent-1 of two
	// machines sharing a remote is two agents.
	Name          string `json:"name"`
	Claims        int64  `json:"claims"`
	Merged        int64  `json:"merged"`
	MergeFailures int64  `json:"merge_failures"`
}

// onAgentWork counts a claim or a merge against the agent that claimed the
// issue: its holder, NAME@HOST/PID, without the process.
func (c *computer) onAgentWork(ev Event) {
	if ev.IssueID == "" {
		return
	}
	is := c.issue(ev)
	if ev.Event == EventClaim {
		holder, _, _ := strings.Cut(strings.TrimPrefix(ev.Detail, "holder="), " ")
		name := agentName(holder)
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

// agentName is a holder (NAME@HOST/PID) without its process: NAME@HOST,
// the agent of that name on that machine.
func agentName(holder string) string {
	at := strings.IndexByte(holder, '@')
	if slash := strings.LastIndexByte(holder, '/'); at >= 0 && slash > at {
		return holder[:slash]
	}
	return holder
}

// keepAgents bounds the agents the report tells apart.
const keepAgents = 256
