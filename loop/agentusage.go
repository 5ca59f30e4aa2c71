package loop

import (
	"crypto/rand"
	"fmt"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// AgentReport is what an agent's output says of its launch: its session, its
// use (turns, tokens, cost) and its final answer.
type AgentReport struct {
	Usage  analytics.Usage
	Result string // the agent's final message; "" when the output does not say
}

// ParseAgentOutput reads an agent's output in the format of its profile
// (agentcli's Usage* formats, agentcli.ParseOutput). Whatever it cannot
// read is left out: a zero report for output in no known shape.
func ParseAgentOutput(format string, out []byte) AgentReport {
	r := agentcli.ParseOutput(format, out)
	u := r.Usage
	return AgentReport{Result: r.Result, Usage: analytics.Usage{
		Session: u.Session, Model: u.Model, Turns: u.Turns, InputTokens: u.InputTokens,
		OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CostUSD: u.CostUSD,
	}}
}

// maxAgentOutput bounds what is read of an agent's log for its report.
const maxAgentOutput = 32 << 20

// agentOutput is an agent's whole output, from its log, or the head and tail
// kept in memory when there is no log.
func agentOutput(logPath, kept string) []byte {
	if logPath != "" {
		if data, _, err := fsx.ReadFileMax(logPath, maxAgentOutput); err == nil {
			return data
		}
	}
	return []byte(kept)
}

// newSessionID returns a random (version 4) UUID, as Claude Code's
// --session-id wants.
func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
