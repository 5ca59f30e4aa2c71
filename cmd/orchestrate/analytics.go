package main

import (
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/loop"
)

func init() {
	register(&command{
		name:    "analytics",
		summary: "regenerate analytics.html from history.csv",
		usage: `Usage: orchestrate analytics [--out FILE] [--json]

Reads history.csv and writes analytics.html (or FILE): the autonomous fix
rate, attempts to success, time to success, halted issues and cap hits,
failure rates per gate, the failures that came back most, with charts and
plain tables of the same numbers. The page is self-contained: it draws its
charts with no network. record, check and issue resolve regenerate it too.

Examples:
  orchestrate analytics
  orchestrate analytics --out /tmp/report.html && xdg-open /tmp/report.html

Exit codes: 0 written, 1 error, 2 usage.
`,
		run: runAnalytics,
	})
}

func runAnalytics(e *env, args []string) error {
	fs := e.flags("analytics")
	out := fs.String("out", "", "")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	ws := e.ws()
	var err error
	if *out == "" {
		// The workspace's own report is written under its lock, as every
		// other file of it is.
		*out = ws.Path(loop.AnalyticsFile)
		err = ws.Regenerate(e.ctx)
	} else {
		err = analytics.Generate(ws.Path(loop.HistoryFile), *out)
	}
	if err != nil {
		return err
	}
	return e.report(map[string]any{"path": *out}, "wrote %s\n", *out)
}
