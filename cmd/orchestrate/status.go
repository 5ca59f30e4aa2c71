package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

var statusCmd = &command{
	name:    "status",
	summary: "show the issues and the session state",
	usage: `Usage: orchestrate status [--wide] [--json]

Prints the session state and a table of the issues: ID, status, priority,
retries (Retry-Count/Max-Retries), the identical-failure count, whether it is
halted, and its summary. When the run's attempts were judged by their
issue's own tests (history.csv's judge rows), a line counts the tests they
fixed and the regressions they were sent back for. Then the claims, if any (see orchestrate help
claim): each claimed issue, who holds it, since and until when, its epoch,
and whether the lease lapsed.

The tables fit the terminal's width (or $COLUMNS when stdout is not a
terminal): a summary, and a claim's holder, too long for it are cut with
an ellipsis. --wide shows them whole (a summary's whole first line).

With --json, prints one object:
  {"session": {"<field>": <value>, …},
   "issues": [{"id": "…", "status": "…", "line": N,
               "fields": {"<field name as written>": <value>, …}}, …]}
fields in the order of the file, each value typed: counts are numbers,
flags booleans, lists of signatures arrays, an empty or null value null,
any other value its text as written (issue show --json prints the same
issue object, with its sections).

Examples:
  orchestrate status
  orchestrate status --wide | less -S
  orchestrate status --json | jq '.issues[] | select(.status == "stuck") | .id'

Exit codes: 0 shown, 1 error (a malformed file: its problems are printed
as file:line: message after what could be shown), 2 usage.
`,
	run: runStatus,
}

func runStatus(e *env, args []string) error {
	fs := e.flags("status")
	wide := fs.Bool("wide", false, "")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	ws := e.ws()
	if err := ws.Exists(); err != nil {
		return err
	}
	q, s, err := loadStatus(ws)
	if err != nil {
		return err
	}
	if e.json {
		if err := writeStatusJSON(e.stdout, s, q); err != nil {
			return err
		}
	} else {
		width := termWidth(e)
		if *wide {
			width = 0
		}
		if err := printStatus(e, q, s, width, *wide); err != nil {
			return err
		}
	}
	return reportProblems(e, ws.Path(loop.QueueFile), q.Problems, ws.Path(loop.StateFile), s.Problems)
}

// loadStatus reads what status shows: the queue and the session state.
func loadStatus(ws loop.Workspace) (*queue.Queue, *session.State, error) {
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Load(ws.Path(loop.StateFile))
	if err != nil {
		return nil, nil, err
	}
	return q, s, nil
}

// printStatus prints the session's line, the issues' table and the
// claims', each table cut to width (0: no bound); wide keeps a summary's
// whole first line, which is otherwise cut at 60 characters.
func printStatus(e *env, q *queue.Queue, s *session.State, width int, wide bool) error {
	run, _ := s.Get(session.RunID)
	if run == "" {
		run = "(none: orchestrate session start)"
	}
	enabled := "enabled"
	if !s.AutoRetryEnabled() {
		enabled = "disabled (auto_retry_enabled: false)"
	}
	if e.ws().SentinelExists() {
		enabled = "disabled (no_auto_retry sentinel)"
	}
	fmt.Fprintf(e.stdout, "run %s: %d auto-retries, auto-retry %s\n", run, s.TotalAutoRetries(), enabled)
	if j := runJudged(e.ws(), s); j != (analytics.Judged{}) {
		fmt.Fprintf(e.stdout, "tests: %d fixed, %s caught (attempts judged by their issue's tests this run)\n",
			j.Fixed, plural(int(j.Regressions), "regression"))
	}
	if f := e.ws().AnalyticsFailure(); f != "" {
		fmt.Fprintf(e.stdout, "analytics.html is not up to date: the refresh in the background failed (%s); orchestrate analytics says why again\n", f)
	}
	if len(q.Issues) == 0 {
		fmt.Fprintln(e.stdout, "no issues")
		return nil
	}
	counts := map[string]int{}
	rows := make([][]string, 0, len(q.Issues))
	for _, is := range q.Issues {
		counts[is.Status()]++
		pri, _ := is.Get(queue.FieldPriority)
		halted := ""
		if st := is.Status(); is.Bool(queue.FieldHalted, false) && st != queue.StatusResolved && st != queue.StatusSkipped {
			// A resolved or skipped issue is halted no more: its Halted
			// field stays in the queue as evidence, the table says what is.
			halted = "halted"
		}
		summary := ""
		if sec := is.Section(queue.SectionSummary); sec != nil {
			summary = firstLine(textclean.Text(sec.Body()), summaryLimit(wide))
		}
		row := []string{
			is.ID, is.Status(), pri,
			strconv.Itoa(is.Int(queue.FieldRetryCount, 0)) + "/" + strconv.Itoa(is.Int(queue.FieldMaxRetries, queue.DefaultMaxRetries)),
			strconv.Itoa(is.Int(queue.FieldSignatureRepeatCount, 0)),
			halted, summary,
		}
		for i := range row {
			row[i] = textclean.Line(row[i]) // no escape sequence from the queue reaches the terminal
		}
		rows = append(rows, row)
	}
	header := []string{"ID", "Status", "Priority", "Retries", "Repeats", "Halted", "Summary"}
	// Too narrow: the Halted column goes when no issue is halted, then the
	// summaries are cut.
	if err := fitTable(width, header, rows, 6, 5, true).render(e.stdout); err != nil {
		return err
	}
	var parts []string
	known := 0
	for _, st := range queue.Statuses {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
			known += counts[st]
		}
	}
	if n := len(q.Issues) - known; n > 0 {
		parts = append(parts, fmt.Sprintf("%d with an unknown status", n))
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", plural(len(q.Issues), "issue"), strings.Join(parts, ", "))
	return printClaims(e, q, width)
}

// runJudged counts the judge rows of the session's run in history.csv:
// the tests its attempts fixed and the regressions they were sent back
// for; nothing when there is no run or no such row.
func runJudged(ws loop.Workspace, s *session.State) analytics.Judged {
	run, _ := s.Get(session.RunID)
	if run == "" {
		return analytics.Judged{}
	}
	j, _ := analytics.CountJudgedFile(ws.Path(loop.HistoryFile), run)
	return j
}

// summaryLimit is the most characters of a summary's first line that the
// table shows: all with --wide, else 60.
func summaryLimit(wide bool) int {
	if wide {
		return math.MaxInt
	}
	return 60
}

// printClaims shows who holds which issue, since and until when, at which
// epoch, and whether the lease lapsed, cut to width (0: no bound) in its
// holder's column.
func printClaims(e *env, q *queue.Queue, width int) error {
	now := e.now()
	var rows [][]string
	for _, is := range q.Issues {
		l := claim.Of(is)
		if l.Holder == "" {
			continue
		}
		state := "held"
		switch {
		case l.Lapsed(now) && claim.Gone(l.Holder):
			state = "lapsed: the next claim takes it over"
		case claim.Dead(l.Holder):
			state = "its holder died: the next claim takes it over"
		case l.Lapsed(now):
			state = "lapsed: its holder still runs"
		}
		rows = append(rows, []string{is.ID, textclean.Line(l.Holder), stamp(l.Since), stamp(l.Until), strconv.Itoa(l.Epoch), state})
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(e.stdout)
	header := []string{"Claimed", "By", "Since", "Until", "Epoch", "Lease"}
	// Too narrow: Since goes, then the holders are cut.
	return fitTable(width, header, rows, 1, 2, false).render(e.stdout)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

// reportProblems prints every problem of the given files (path, problems
// pairs) on stderr and returns an exit-1 error if there were any.
func reportProblems(e *env, pairs ...any) error {
	n := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		path := pairs[i].(string)
		for _, p := range pairs[i+1].([]queue.Problem) {
			fmt.Fprintln(e.stderr, p.Format(path))
			n++
		}
	}
	if n > 0 {
		return withCode(exitError, fmt.Errorf("%d problem(s); fix them by hand, then run orchestrate validate", n))
	}
	return nil
}
