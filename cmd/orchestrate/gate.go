package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/orchestrate-dev/orchestrate/findings"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
)

var gateCmd = &command{
	name:    "gate",
	summary: "run the quality gates once; feedback on failure",
	usage: `Usage: orchestrate gate [NAME...] [--json] [--junit FILE] [--sarif FILE] [--no-record]

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

For CI: --junit FILE writes JUnit XML (a testcase per gate: failure for a
fail, error for an error or a timeout, skipped for a skipped gate, with the
end of its output); --sarif FILE writes SARIF 2.1.0 (a result per review
finding: its gate and dimension as the rule, its level from its priority,
its file and line); --no-record evaluates and reports without touching the
queue or the history (no issue filed, recorded or resolved). With
GITHUB_ACTIONS=true (and without --json) it prints workflow annotations
(::error file=F,line=L::message where a location is known, ::error::
otherwise; ::warning for advisory gates) and appends summary.md to
$GITHUB_STEP_SUMMARY.

Examples:
  orchestrate gate
  orchestrate gate tests lint --json
  orchestrate gate --no-record --junit gates.xml --sarif review.sarif

Exit codes: 0 every blocking gate passed, 12 a blocking gate failed, 11 none
failed but a human gate awaits a person's approval, 1 error (a bad
config.yaml names its line), 2 usage.
`,
	run: runGate,
}

type gateResultJSON struct {
	Name        string             `json:"name"`
	Outcome     string             `json:"outcome" jsonschema:"pass, fail, timeout, error, skipped"`
	Enforcement string             `json:"enforcement" jsonschema:"blocking, advisory, informational"`
	ExitCode    int                `json:"exit_code"`
	Duration    float64            `json:"duration_seconds"`
	Reason      string             `json:"reason,omitempty" jsonschema:"why it did not pass"`
	Log         string             `json:"log,omitempty" jsonschema:"its whole output's file"`
	Issue       string             `json:"issue,omitempty" jsonschema:"the issue its failure was filed or recorded against (when recorded)"`
	Issues      []string           `json:"issues,omitempty" jsonschema:"every issue its failing tests were filed or recorded against, when more than one (issue is the first)"`
	Findings    []findings.Finding `json:"findings,omitempty" jsonschema:"a review gate's findings"`
	Approval    string             `json:"approval,omitempty" jsonschema:"a human gate's approval request"`
}

type awaitingJSON struct {
	Gate  string `json:"gate"`
	Issue string `json:"issue"`
}

func runGate(e *env, args []string) error {
	fs := e.flags("gate")
	junit := fs.String("junit", "", "")
	sarif := fs.String("sarif", "", "")
	noRecord := fs.Bool("no-record", false, "")
	names, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	var renderer *progressRenderer
	opt := loop.GateOptions{Names: names, NoRecord: *noRecord}
	if !e.json {
		renderer = newProgressRenderer(e.stderr, e.stderrIsTerminal())
		opt.Progress = renderer.Handle
	}
	gr, err := e.ws().RunGates(e.ctx, e.now, opt)
	if renderer != nil {
		renderer.Close()
	}
	if err != nil {
		return err
	}
	if err := writeCIReports(e, gr, *junit, *sarif); err != nil {
		return err
	}
	if e.json {
		err = printGateJSON(e, gr)
	} else {
		err = printGateText(e, gr)
	}
	if err != nil {
		return err
	}
	return gateExit(gr)
}

// gateExit is the exit code of a gate run: 12 when a blocking gate
// failed, 11 when none failed but a human gate awaits approval.
func gateExit(gr *loop.GateRun) error {
	switch ev := gr.Evaluation; {
	case gr.Failed():
		return withCode(exitGateFailed, nil)
	case !ev.Passed && len(gr.AwaitingApproval) > 0:
		return withCode(exitPerson, nil)
	case !ev.Passed:
		return withCode(exitGateFailed, nil)
	}
	return nil
}

// printGateJSON prints a gate run as orchestrate gate --json's object.
func printGateJSON(e *env, gr *loop.GateRun) error {
	ev := gr.Evaluation
	return e.printJSON(map[string]any{
		"passed": ev.Passed, "results": gateResults(gr), "warnings": nonNil(ev.Warnings),
		"resolved": nonNil(gr.Resolved), "feedback": gr.Feedback, "artifacts": gr.Dir,
		"awaiting_approval": awaitingOf(gr),
	})
}

// gateResults is each gate's result of a gate run, as gate --json and the
// MCP server's gates tool give it.
func gateResults(gr *loop.GateRun) []gateResultJSON {
	results := []gateResultJSON{}
	for i := range gr.Evaluation.Results {
		r := &gr.Evaluation.Results[i]
		results = append(results, gateResultJSON{
			Name: r.Name(), Outcome: string(r.Outcome), Enforcement: string(r.Enforcement()),
			ExitCode: r.ExitCode, Duration: r.Duration.Seconds(), Reason: r.Reason(),
			Log: r.LogPath, Issue: gr.Issues[r.Name()].ID, Approval: gr.Approvals[r.Name()],
		})
		if ids := gr.IssuesOf(r.Name()); len(ids) > 1 {
			results[len(results)-1].Issues = ids
		}
		if r.Review != nil {
			results[len(results)-1].Findings = r.Review.Findings
		}
	}
	return results
}

// awaitingOf is the human gates of a gate run that await a person's
// approval, each with its request.
func awaitingOf(gr *loop.GateRun) []awaitingJSON {
	awaiting := []awaitingJSON{}
	for _, name := range gr.AwaitingApproval {
		awaiting = append(awaiting, awaitingJSON{Gate: name, Issue: gr.Approvals[name]})
	}
	return awaiting
}

// printGateText prints a gate run for a person: the results table, the
// warnings, the issues resolved, the feedback, the approvals awaited.
func printGateText(e *env, gr *loop.GateRun) error {
	if err := renderGateTable(e.stdout, gr, true); err != nil {
		return err
	}
	for _, w := range gr.Evaluation.Warnings {
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
		if id == "" {
			fmt.Fprintf(e.stdout, "awaiting approval: gate %s (no request filed: --no-record)\n", name)
			continue
		}
		fmt.Fprint(e.stdout, loop.AwaitingApprovalMessage(name, id))
	}
	fmt.Fprintf(e.stdout, "artifacts: %s\n", gr.Dir)
	return nil
}

// writeCIReports writes what CI reads of an evaluation: the JUnit XML and
// SARIF files asked for and, under GitHub Actions, the workflow
// annotations (not with --json: stdout is one JSON object) and summary.md
// appended to $GITHUB_STEP_SUMMARY; with the output settings the gates
// ran with (the configuration is not read again).
func writeCIReports(e *env, gr *loop.GateRun, junit, sarif string) error {
	if junit != "" {
		data, err := gate.JUnit(gr.Evaluation, gr.Output)
		if err == nil {
			err = fsx.WriteFile(junit, data, 0o644)
		}
		if err != nil {
			return fmt.Errorf("writing JUnit XML to %s: %w", junit, err)
		}
	}
	if sarif != "" {
		data, err := gate.SARIF(gr.Evaluation, readBuildVersion().Version)
		if err == nil {
			err = fsx.WriteFile(sarif, data, 0o644)
		}
		if err != nil {
			return fmt.Errorf("writing SARIF to %s: %w", sarif, err)
		}
	}
	if os.Getenv("GITHUB_ACTIONS") != "true" {
		return nil
	}
	if !e.json {
		fmt.Fprint(e.stdout, gate.Annotations(gr.Evaluation, e.ws().Root(), gr.Output))
	}
	if path := os.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		summary, _, err := fsx.ReadFileMax(filepath.Join(gr.Dir, gate.SummaryFile), 64<<20)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("appending to $GITHUB_STEP_SUMMARY: %w", err)
		}
		_, werr := f.Write(append(summary, '\n'))
		if err := f.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return fmt.Errorf("appending to $GITHUB_STEP_SUMMARY: %w", werr)
		}
	}
	return nil
}
