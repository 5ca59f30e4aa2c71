package main

import (
	"fmt"
	"strconv"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
)

func init() {
	register(&command{
		name:    "gate",
		summary: "run the quality gates once; feedback on failure",
		usage: `Usage: orchestrate gate [NAME...] [--json]

Runs the quality gates of config.yaml (or only those named), like a careful
CI: serial gates first, in order (a fail_fast failure stops there), then the
others in parallel (parallelism, default the number of CPUs). Each runs with
sh -c in its own process group; its timeout kills the whole group. Output is
kept head and tail in memory, whole in runs/<run-id>/<gate>.log.

A review gate (type: review) runs its command, the reviewer, with the diff
against diff_base (HEAD; new files included) on stdin, once per dimension in
parallel, and fails on findings at fail_on (P1) or worse; the feedback lists
them by priority. A human gate (type: human) asks a person once every other
blocking gate passes: it files an approval request in the queue, prints it,
and waits for orchestrate approve or reject (see orchestrate help approve).

Only blocking gates decide: advisory failures are warnings, informational
ones are only recorded. A failing gate with auto_retry: true files an issue,
or records the failure against the open issue it filed before; a passing
gate resolves that issue. runs/<run-id>/ gets gate-results.json and
summary.md. On a terminal, a live line per running gate shows its elapsed
time; then the results table and, on failure, the feedback for the agent
(its template is prompts/feedback.md, which .orchestrator/prompts/feedback.md
overrides).

Examples:
  orchestrate gate
  orchestrate gate tests lint --json

Exit codes: 0 every blocking gate passed, 12 a blocking gate failed, 11 none
failed but a human gate awaits a person's approval, 1 error (a bad
config.yaml names its line), 2 usage.
`,
		run: runGate,
	})
}

type gateResultJSON struct {
	Name        string  `json:"name"`
	Outcome     string  `json:"outcome"`
	Enforcement string  `json:"enforcement"`
	ExitCode    int     `json:"exit_code"`
	Duration    float64 `json:"duration_seconds"`
	Reason      string  `json:"reason,omitempty"`
	Log         string  `json:"log,omitempty"`
	Issue       string  `json:"issue,omitempty"`
	// A review gate's findings; a human gate's approval request.
	Findings []gate.Finding `json:"findings,omitempty"`
	Approval string         `json:"approval,omitempty"`
}

type awaitingJSON struct {
	Gate  string `json:"gate"`
	Issue string `json:"issue"`
}

func runGate(e *env, args []string) error {
	fs := e.flags("gate")
	names, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	var renderer *gate.Renderer
	opt := loop.GateOptions{Names: names}
	if !e.json {
		renderer = gate.NewRenderer(e.stderr, e.stderrIsTerminal())
		opt.Progress = renderer.Handle
	}
	gr, err := e.ws().RunGates(e.ctx, e.now, opt)
	if renderer != nil {
		renderer.Close()
	}
	if err != nil {
		return err
	}
	ev := gr.Evaluation
	if e.json {
		results := []gateResultJSON{}
		for i := range ev.Results {
			r := &ev.Results[i]
			results = append(results, gateResultJSON{
				Name: r.Name(), Outcome: string(r.Outcome), Enforcement: string(r.Enforcement()),
				ExitCode: r.ExitCode, Duration: r.Duration.Seconds(), Reason: r.Reason(),
				Log: r.LogPath, Issue: gr.Issues[r.Name()].ID, Approval: gr.Approvals[r.Name()],
			})
			if r.Review != nil {
				results[len(results)-1].Findings = r.Review.Findings
			}
		}
		awaiting := []awaitingJSON{}
		for _, name := range gr.AwaitingApproval {
			awaiting = append(awaiting, awaitingJSON{Gate: name, Issue: gr.Approvals[name]})
		}
		err = e.printJSON(map[string]any{
			"passed": ev.Passed, "results": results, "warnings": nonNil(ev.Warnings),
			"resolved": nonNil(gr.Resolved), "feedback": gr.Feedback, "artifacts": gr.Dir,
			"awaiting_approval": awaiting,
		})
	} else {
		rows := [][]string{}
		for i := range ev.Results {
			r := &ev.Results[i]
			issue := gr.Issues[r.Name()].ID
			if a := r.Approval; issue == "" && a != nil {
				issue = a.Ref
			}
			if issue == "" {
				issue = gr.Approvals[r.Name()]
			}
			rows = append(rows, []string{
				r.Name(), string(r.Outcome), string(r.Enforcement()), strconv.Itoa(r.ExitCode),
				fmt.Sprintf("%.1fs", r.Duration.Seconds()), issue,
			})
		}
		if err = renderTable(e.stdout, []string{"Gate", "Outcome", "Enforcement", "Exit", "Time", "Issue"}, rows); err != nil {
			return err
		}
		for _, w := range ev.Warnings {
			fmt.Fprintln(e.stdout, "warning:", w)
		}
		for _, id := range gr.Resolved {
			fmt.Fprintf(e.stdout, "%s resolved: its gate passes\n", id)
		}
		if gr.Feedback != "" {
			fmt.Fprintln(e.stdout)
			fmt.Fprintln(e.stdout, gr.Feedback)
		}
		for _, name := range gr.AwaitingApproval {
			id := gr.Approvals[name]
			fmt.Fprintf(e.stdout, "awaiting approval: gate %s, in %s\n  orchestrate approve %s\n  orchestrate reject %s --comment \"what to change\"\n", name, id, id, id)
		}
		fmt.Fprintf(e.stdout, "artifacts: %s\n", gr.Dir)
	}
	switch {
	case err != nil:
		return err
	case gr.Failed():
		return withCode(exitGateFailed, nil)
	case !ev.Passed && len(gr.AwaitingApproval) > 0:
		return withCode(exitPerson, nil)
	case !ev.Passed:
		return withCode(exitGateFailed, nil)
	}
	return nil
}
