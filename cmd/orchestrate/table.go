package main

import (
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
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
