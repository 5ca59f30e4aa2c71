package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// renderTable prints rows as a terminal table.
func renderTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapTruncate),
		tablewriter.WithTrimSpace(tw.On),
	)
	t.Header(header)
	for _, r := range rows {
		if err := t.Append(r); err != nil {
			return err
		}
	}
	return t.Render()
}

// problemsError returns the error for a file with problems, naming the
// first one as path:line: message; nil when there are none.
func problemsError(path string, problems []problem.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &problem.ValidationError{Path: path, Problems: problems}
}

// renderGateTable prints a gate run's results, a row per gate: its name,
// outcome, exit code, time and issue (the one it filed or recorded to, or
// its approval request). orchestrate gate's table (detail) adds each
// gate's enforcement, and a decided approval's request as its issue.
func renderGateTable(w io.Writer, gr *loop.GateRun, detail bool) error {
	header := []string{"Gate", "Outcome", "Exit", "Time", "Issue"}
	if detail {
		header = slices.Insert(header, 2, "Enforcement")
	}
	rows := [][]string{}
	for i := range gr.Evaluation.Results {
		r := &gr.Evaluation.Results[i]
		issue := gr.Issues[r.Name()].ID
		if ids := gr.IssuesOf(r.Name()); len(ids) > 1 {
			issue += fmt.Sprintf(" (+%d)", len(ids)-1)
		}
		if a := r.Approval; detail && issue == "" && a != nil {
			issue = a.Ref
		}
		if issue == "" {
			issue = gr.Approvals[r.Name()]
		}
		if ref, ok := gr.Waiting[r.Name()]; ok && issue == "" {
			issue = ref.ID + " (waits)"
		}
		outcome := string(r.Outcome)
		if e := r.Enforcement(); !detail && r.Failed() && e != config.Blocking {
			// A failure that does not fail the evaluation says so.
			outcome += " (" + string(e) + ")"
		}
		row := []string{r.Name(), outcome, strconv.Itoa(r.ExitCode), fmt.Sprintf("%.1fs", r.Duration.Seconds()), issue}
		if detail {
			row = slices.Insert(row, 2, string(r.Enforcement()))
		}
		rows = append(rows, row)
	}
	return renderTable(w, header, rows)
}
