package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/pool"
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
func runAgents(e *env, opt pool.Options) error {
	v := newAgentsView(e.stdout, stdoutIsTerminal(e), opt.Agents)
	if !e.json {
		opt.Step, opt.AgentProgress = v.step, v.progress
	}
	res, err := pool.Run(e.ctx, e.ws(), opt)
	v.close()
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
			*pool.Result
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

func stdoutIsTerminal(e *env) bool {
	f, ok := e.stdoutFile()
	return ok && isatty.IsTerminal(f.Fd())
}

// agentsView shows the agents of run --agents as they go. Each step is a
// plain line, with its time, agent and issue. Live, on a terminal, a block
// at the bottom is redrawn in place: a line per agent (its issue, its
// phase, the gate running, the time in that phase) and the merge queue.
type agentsView struct {
	mu     sync.Mutex
	w      io.Writer
	live   bool
	start  time.Time
	agents []*agentLine // agent-1 first
	queue  []string     // issues waiting to merge, in order
	drawn  int          // lines of the live block on screen
	stop   chan struct{}
	once   sync.Once
}

type agentLine struct {
	name, issue, phase, gate string
	since                    time.Time
}

func newAgentsView(w io.Writer, live bool, n int) *agentsView {
	v := &agentsView{w: w, live: live, start: time.Now(), stop: make(chan struct{})}
	for i := 1; i <= n; i++ {
		v.agents = append(v.agents, &agentLine{name: fmt.Sprintf("agent-%d", i), phase: "starting", since: v.start})
	}
	if live {
		go func() {
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					v.mu.Lock()
					v.draw()
					v.mu.Unlock()
				case <-v.stop:
					return
				}
			}
		}()
	}
	return v
}

func (v *agentsView) close() {
	v.once.Do(func() {
		close(v.stop)
		v.mu.Lock()
		v.clear()
		v.mu.Unlock()
	})
}

func (v *agentsView) agent(name string) *agentLine {
	for _, a := range v.agents {
		if a.name == name {
			return a
		}
	}
	a := &agentLine{name: name}
	v.agents = append(v.agents, a)
	return a
}

// progress notes the gate an agent's gates are running.
func (v *agentsView) progress(agent string, e gate.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a := v.agent(agent)
	switch e.Kind {
	case gate.GateStarted:
		a.gate = e.Gate
	case gate.GateFinished:
		a.gate = ""
	}
}

func (v *agentsView) step(s loop.Step) {
	v.mu.Lock()
	defer v.mu.Unlock()
	a := v.agent(s.Worker)
	phase, line := a.phase, ""
	switch s.Kind {
	case loop.StepClaim:
		a.issue, phase = s.Issue, "claimed"
		line = fmt.Sprintf("claimed (epoch %d): %s", s.Claim.Epoch, s.Claim.Summary)
	case loop.StepLaunch:
		phase = fmt.Sprintf("loop %d: agent", s.Loop)
		line = fmt.Sprintf("loop %d: agent started", s.Loop)
	case loop.StepAgent:
		phase = fmt.Sprintf("loop %d: gates", s.Loop)
		line = fmt.Sprintf("loop %d: agent %s in %.1fs", s.Loop, s.Agent.Outcome, s.Agent.Duration.Seconds())
	case loop.StepGates:
		line = fmt.Sprintf("loop %d: gates %s", s.Loop, gatesLine(s))
	case loop.StepCheck:
		line = fmt.Sprintf("loop %d: check %s", s.Loop, s.Check.Outcome)
	case loop.StepQueued:
		phase = "waiting to merge"
		v.queue = append(v.queue, s.Issue)
	case loop.StepMerge:
		v.queue = slices.DeleteFunc(v.queue, func(id string) bool { return id == s.Issue })
		line = "merge " + s.Merge
	case loop.StepDone:
		a.issue, phase = "", "looking for an issue"
		line = fmt.Sprintf("done: %s (%s)", s.Result.Outcome, s.Result.Reason)
		if s.Result.Kept != "" {
			line += "; its worktree is kept (at the end: how to look)"
		}
	default:
		return
	}
	if phase != a.phase {
		a.phase, a.since = phase, time.Now()
	}
	if line == "" {
		v.draw()
		return
	}
	v.clear()
	fmt.Fprintf(v.w, "%6.1fs %s %s: %s\n", time.Since(v.start).Seconds(), s.Worker, s.Issue, line)
	v.draw()
}

// clear takes the live block off the screen; v.mu is held.
func (v *agentsView) clear() {
	if !v.live || v.drawn == 0 {
		return
	}
	fmt.Fprintf(v.w, "\x1b[%dA\x1b[J", v.drawn)
	v.drawn = 0
}

// draw redraws the live block; v.mu is held.
func (v *agentsView) draw() {
	if !v.live {
		return
	}
	v.clear()
	var b strings.Builder
	for _, a := range v.agents {
		issue := a.issue
		if issue == "" {
			issue = "-"
		}
		fmt.Fprintf(&b, "  %-9s %-20s %-22s", a.name, issue, a.phase)
		if a.gate != "" {
			fmt.Fprintf(&b, " gate %s", a.gate)
		}
		fmt.Fprintf(&b, " %5.1fs\n", time.Since(a.since).Seconds())
	}
	queue := "empty"
	if len(v.queue) > 0 {
		queue = strings.Join(v.queue, ", ")
	}
	fmt.Fprintf(&b, "  merge queue: %s\n", queue)
	io.WriteString(v.w, b.String())
	v.drawn = len(v.agents) + 1
}

// leftLines puts a kept worktree's note (pool's "ISSUE: kept with …: look
// with …; remove with …") on short lines: what and why, how to look, how
// to remove it.
func leftLines(note string) string {
	note = strings.Replace(note, ": look with ", "\n  look:   ", 1)
	return strings.Replace(note, "; remove with ", "\n  remove: ", 1)
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

func (v *agentsView) end(res *pool.Result) {
	v.close()
	fmt.Fprintln(v.w)
	for _, l := range res.Left {
		fmt.Fprintf(v.w, "worktree left: %s\n", leftLines(l))
	}
	fmt.Fprintf(v.w, "Merged into %s: %d of %d issues worked", res.Branch, len(res.Merged), len(res.Worked))
	if len(res.Merged) > 0 {
		fmt.Fprintf(v.w, " (%s)", strings.Join(res.Merged, ", "))
	}
	fmt.Fprintf(v.w, "; wall %.1fs, agents' time %.1fs.\n", float64(res.ElapsedMS)/1000, float64(res.AgentTimeMS)/1000)
	fmt.Fprintf(v.w, "\nStopped (run %s): %s.\n", res.RunID, res.Reason)
}
