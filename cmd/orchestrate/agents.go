package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// taskList is a repeatable --task.
type taskList []string

func (t *taskList) String() string { return strings.Join(*t, "; ") }
func (t *taskList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("empty task")
	}
	*t = append(*t, v)
	return nil
}

// runAgents is orchestrate run --agents N: N agents at once, each on the
// issue it claimed, in its own worktree, merged back in order.
func runAgents(e *env, opt loop.AgentsOptions) error {
	v := &agentsView{w: e.stdout, start: time.Now(), phase: map[string]string{}}
	if !e.json {
		opt.Step = v.step
	}
	res, err := e.ws().RunAgents(e.ctx, opt)
	if err != nil && res == nil {
		return err
	}
	code := runExitCode(res.Outcome)
	if e.json {
		if res.Worked == nil {
			res.Worked = []loop.Worked{}
		}
		for _, s := range []*[]string{&res.Merged, &res.Stuck, &res.Left} {
			if *s == nil {
				*s = []string{}
			}
		}
		if perr := e.printJSON(struct {
			*loop.AgentsResult
			ExitCode int `json:"exit_code"`
		}{res, code}); perr != nil {
			return perr
		}
	} else {
		v.end(res)
	}
	if err != nil {
		return err
	}
	if res.Outcome == loop.RunInterrupted {
		return withCode(exitError, errors.New(res.Reason+"; nothing is lost: run orchestrate run --agents again to go on"))
	}
	if code == exitOK {
		return nil
	}
	return withCode(code, nil)
}

// agentsView prints the steps of several agents as plain lines, each
// prefixed by the agent and its issue.
type agentsView struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	phase map[string]string
}

func (v *agentsView) step(s loop.Step) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var line string
	switch s.Kind {
	case loop.StepClaim:
		line = fmt.Sprintf("claimed (epoch %d): %s", s.Claim.Epoch, s.Claim.Summary)
	case loop.StepLaunch:
		line = fmt.Sprintf("loop %d: agent started", s.Loop)
	case loop.StepAgent:
		line = fmt.Sprintf("loop %d: agent %s in %.1fs", s.Loop, s.Agent.Outcome, s.Agent.Duration.Seconds())
	case loop.StepGates:
		line = fmt.Sprintf("loop %d: gates %s", s.Loop, gatesLine(s))
	case loop.StepCheck:
		line = fmt.Sprintf("loop %d: check %s", s.Loop, s.Check.Outcome)
	case loop.StepMerge:
		line = "merge " + s.Merge
	case loop.StepDone:
		line = fmt.Sprintf("done: %s (%s)", s.Result.Outcome, s.Result.Reason)
		if s.Result.Kept != "" {
			line += "\n  " + s.Result.Kept
		}
	default:
		return
	}
	fmt.Fprintf(v.w, "%6.1fs %s %s: %s\n", time.Since(v.start).Seconds(), s.Worker, s.Issue, line)
}

func gatesLine(s loop.Step) string {
	ev := s.Gates.Evaluation
	if ev.Passed {
		return "pass"
	}
	var names []string
	for _, f := range ev.Failures() {
		names = append(names, f.Name())
	}
	return "fail: " + strings.Join(names, ", ")
}

func (v *agentsView) end(res *loop.AgentsResult) {
	fmt.Fprintln(v.w)
	for _, l := range res.Left {
		fmt.Fprintf(v.w, "worktree left: %s\n", l)
	}
	fmt.Fprintf(v.w, "Merged into %s: %d of %d issues worked", res.Branch, len(res.Merged), len(res.Worked))
	if len(res.Merged) > 0 {
		fmt.Fprintf(v.w, " (%s)", strings.Join(res.Merged, ", "))
	}
	fmt.Fprintf(v.w, "; wall %.1fs, agents' time %.1fs.\n", float64(res.ElapsedMS)/1000, float64(res.AgentTimeMS)/1000)
	fmt.Fprintf(v.w, "\nStopped (run %s): %s.\n", res.RunID, res.Reason)
}
