package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/pool"
)

// The live view: a line per step above a block redrawn in place, a line per
// agent (issue, phase, gate, time) and the merge queue; plain lines only
// when not on a terminal.
func TestAgentsView(t *testing.T) {
	for _, live := range []bool{true, false} {
		var out bytes.Buffer
		v := newAgentsView(&out, live, 2)
		v.step(loop.Step{Kind: loop.StepClaim, Worker: "agent-1", Issue: "ISSUE-1", Claim: &loop.Claimed{ID: "ISSUE-1", Summary: "one"}})
		v.step(loop.Step{Kind: loop.StepLaunch, Worker: "agent-1", Issue: "ISSUE-1", Loop: 1})
		v.progress("agent-1", gate.Event{Kind: gate.GateStarted, Gate: "tests", Time: time.Now()})
		v.step(loop.Step{Kind: loop.StepQueued, Worker: "agent-2", Issue: "ISSUE-2", Loop: 1})
		v.close()
		got := out.String()
		if !strings.Contains(got, "agent-1 ISSUE-1: claimed (epoch 0): one\n") || !strings.Contains(got, "agent-1 ISSUE-1: loop 1: agent started\n") {
			t.Errorf("live=%v: the step lines are missing:\n%s", live, got)
		}
		block := strings.Contains(got, "agent-1   ISSUE-1") && strings.Contains(got, "gate tests") &&
			strings.Contains(got, "agent-2   -                    waiting to merge") && strings.Contains(got, "merge queue: ISSUE-2")
		escapes := strings.Contains(got, "\x1b[")
		if block != live || escapes != live {
			t.Errorf("live=%v: block %v, escapes %v:\n%q", live, block, escapes, got)
		}
	}
}

// A kept worktree is told once, at the end, on short lines: what and why,
// how to look, how to remove it; its agent's done line points there.
func TestAgentsViewKeptOnce(t *testing.T) {
	var out bytes.Buffer
	v := newAgentsView(&out, false, 1)
	note := "ISSUE-1: kept with 1 commit not merged: look with git -C /w/ISSUE-1 status, git log orchestrate/ISSUE-1; remove with git worktree remove --force /w/ISSUE-1 && git branch -D orchestrate/ISSUE-1"
	v.step(loop.Step{Kind: loop.StepDone, Worker: "agent-1", Issue: "ISSUE-1", Result: &loop.Worked{Issue: "ISSUE-1", Kept: note, RunResult: &loop.RunResult{Outcome: loop.RunHalted, Reason: "halted"}}})
	v.end(&pool.Result{Left: []string{note}, Branch: "main", RunID: "r", Reason: "halted"})
	got := out.String()
	if n := strings.Count(got, "git worktree remove --force /w/ISSUE-1"); n != 1 {
		t.Errorf("the kept worktree is told %d times, want once:\n%s", n, got)
	}
	want := "worktree left: ISSUE-1: kept with 1 commit not merged\n  look:   git -C /w/ISSUE-1 status, git log orchestrate/ISSUE-1\n  remove: git worktree remove --force /w/ISSUE-1 && git branch -D orchestrate/ISSUE-1\n"
	if !strings.Contains(got, want) {
		t.Errorf("the kept worktree's lines:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(got, "its worktree is kept (at the end: how to look)") {
		t.Errorf("the done line does not point to the end:\n%s", got)
	}
}
