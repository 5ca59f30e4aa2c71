package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/orchestrate-dev/orchestrate/gate"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

var watchCmd = &command{
	name:    "watch",
	summary: "show the status and the problems again on every save",
	usage: `Usage: orchestrate watch [--debounce DURATION] [--max-refreshes N] [--json]

Shows the status and every problem of the queue, the session state and the
config (file:line: message, as validate prints them), then shows them again,
under a timestamped header, each time issue_queue.md, session_state.md,
config.yaml, history.csv or no_auto_retry is saved. When history.csv
changed, it regenerates analytics.html too. Keep it open in a terminal
beside your editor, or beside a running agent.

It watches the directory, not the files, so it follows every way of saving
one: in place, a new file renamed over the old one, delete and create. A
burst of events (an editor's save is several) is one refresh, once nothing
has changed for --debounce (default 150ms); a steady stream of events is
shown at least every ten debounces (and at least every second). Its own
writes (analytics.html) and temporary files never trigger a refresh.
If the directory itself goes away, it waits for it to come back.

The approval requests of human gates are listed when they change: an
approval or a rejection made by editing the queue by hand shows at once
("approval ISSUE-… for gate sign-off: approved (was pending)").

A malformed file is not an error here: its problems are shown and the
watch goes on. Stop it with Ctrl-C (or SIGTERM).

Flags:
  --debounce DURATION  quiet time before a refresh (default 150ms)
  --max-refreshes N    exit after N refreshes caused by changes
                       (0, the default: until stopped)
  --json               one JSON object per line and refresh:
                       {"time": "…", "refresh": N, "changed": ["issue_queue.md"],
                        "ok": bool, "problems": [{"file": "…", "line": N,
                        "message": "…"}, …], "issues": N, "statuses": {"pending": N, …},
                        "analytics": "…", "error": "…"}

Examples:
  orchestrate watch
  orchestrate watch --debounce 500ms
  orchestrate --json watch | jq -c '.problems'

Exit codes: 0 stopped (Ctrl-C, SIGTERM, or --max-refreshes reached),
1 error (no workspace, the watcher could not start), 2 usage.
`,
	run: runWatch,
}

// errWatchDone ends the watch after --max-refreshes.
var errWatchDone = errors.New("enough refreshes")

func runWatch(e *env, args []string) error {
	fs := e.flags("watch")
	debounce := fs.Duration("debounce", 150*time.Millisecond, "")
	maxRefreshes := fs.Int("max-refreshes", 0, "")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	if *debounce < 0 {
		return usageError("watch", "watch: --debounce must not be negative, got %v", *debounce)
	}
	if *maxRefreshes < 0 {
		return usageError("watch", "watch: --max-refreshes must not be negative, got %d", *maxRefreshes)
	}
	// The watch ends only by a signal: take them here, whatever context
	// the caller gave (main's has them, a test's may not), so that Ctrl-C
	// is a clean exit 0.
	ctx, stop := signal.NotifyContext(e.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	ws := e.ws()
	n := 0
	seen := map[string]gate.ApprovalState{} // approval states at the last refresh
	opt := loop.WatchOptions{
		Debounce: *debounce,
		Notice:   func(msg string) { fmt.Fprintf(e.stderr, "orchestrate: %s\n", msg) },
	}
	err := loop.Watch(ctx, ws, opt, func(changed []string) error {
		if changed != nil {
			n++
		}
		var out bytes.Buffer
		if e.json {
			writeWatchJSON(e, &out, ws, n, changed)
		} else {
			writeWatchText(e, &out, ws, n, changed, seen)
		}
		// One write a refresh: a reader never sees half of one.
		if _, err := e.stdout.Write(out.Bytes()); err != nil {
			return err
		}
		if *maxRefreshes > 0 && n >= *maxRefreshes {
			return errWatchDone
		}
		return nil
	})
	if errors.Is(err, errWatchDone) {
		return nil
	}
	return err
}

// writeApprovals lists the approval requests of human gates that changed
// since the last refresh (all of them at the first): an approval made by
// editing the queue by hand shows at once.
func writeApprovals(out *bytes.Buffer, q *queue.Queue, seen map[string]gate.ApprovalState) {
	for _, a := range loop.Approvals(q) {
		if seen[a.ID] == a.State {
			continue
		}
		was := ""
		if old, ok := seen[a.ID]; ok {
			was = fmt.Sprintf(" (was %s)", old)
		}
		fmt.Fprintf(out, "approval %s for gate %s: %s%s\n", a.ID, a.Gate, a.State, was)
		seen[a.ID] = a.State
	}
}

// watchAnalytics regenerates analytics.html when history.csv changed and
// returns its path, or "" when there was nothing to do. A workspace with
// neither file gets no report it did not ask for.
func watchAnalytics(ctx context.Context, ws loop.Workspace, changed []string) (string, error) {
	if !slices.Contains(changed, loop.HistoryFile) {
		return "", nil
	}
	path := ws.Path(loop.AnalyticsFile)
	if !watchFileExists(ws.Path(loop.HistoryFile)) && !watchFileExists(path) {
		return "", nil
	}
	// The page may be current already: made by the command that appended.
	_, err := ws.RefreshAnalytics(ctx, false)
	return path, err
}

func watchFileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// watchHeader says when and why a refresh was made.
func watchHeader(e *env, ws loop.Workspace, n int, changed []string) string {
	t := e.now().Format("2006-01-02 15:04:05")
	if changed == nil {
		return fmt.Sprintf("== %s watching %s (Ctrl-C to stop) ==\n", t, ws.Dir)
	}
	return fmt.Sprintf("\n== %s refresh %d: %s changed ==\n", t, n, strings.Join(changed, ", "))
}

func writeWatchText(e *env, out *bytes.Buffer, ws loop.Workspace, n int, changed []string, seen map[string]gate.ApprovalState) {
	pe := *e
	pe.stdout = out
	out.WriteString(watchHeader(e, ws, n, changed))
	if path, err := watchAnalytics(e.ctx, ws, changed); err != nil {
		fmt.Fprintf(out, "analytics: %v\n", err)
	} else if path != "" {
		fmt.Fprintf(out, "wrote %s\n", path)
	}
	if !watchFileExists(ws.Path(loop.QueueFile)) {
		fmt.Fprintf(out, "(%s does not exist)\n", ws.Path(loop.QueueFile))
	}
	st, err := validateAll(ws)
	if err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
		return
	}
	if err := printStatus(&pe, st.queue, st.state, termWidth(e), false); err != nil {
		fmt.Fprintf(out, "error: %v\n", err)
	}
	problems, issues := st.problems, len(st.queue.Issues)
	for _, p := range problems {
		fmt.Fprintf(out, "%s:%d: %s\n", p.File, p.Line, p.Message)
	}
	if len(problems) == 0 {
		fmt.Fprintf(out, "ok: %s, no problems\n", plural(issues, "issue"))
	} else {
		fmt.Fprintf(out, "%d problem(s)\n", len(problems))
	}
	writeApprovals(out, st.queue, seen)
}

// watchJSON is one refresh as a line of JSON.
type watchJSON struct {
	Time      string         `json:"time"`
	Refresh   int            `json:"refresh"`
	Changed   []string       `json:"changed"`
	OK        bool           `json:"ok"`
	Problems  []problemJSON  `json:"problems"`
	Issues    int            `json:"issues"`
	Statuses  map[string]int `json:"statuses"`
	Analytics string         `json:"analytics,omitempty"`
	Error     string         `json:"error,omitempty"`
}

func writeWatchJSON(e *env, out *bytes.Buffer, ws loop.Workspace, n int, changed []string) {
	j := watchJSON{
		Time: e.now().Format(time.RFC3339), Refresh: n, Changed: changed,
		Problems: []problemJSON{}, Statuses: map[string]int{},
	}
	if j.Changed == nil {
		j.Changed = []string{}
	}
	var errs []string
	if path, err := watchAnalytics(e.ctx, ws, changed); err != nil {
		errs = append(errs, "analytics: "+err.Error())
	} else {
		j.Analytics = path
	}
	if st, err := validateAll(ws); err != nil {
		errs = append(errs, err.Error())
	} else {
		j.Problems, j.Issues = st.problems, len(st.queue.Issues)
		j.OK = len(st.problems) == 0
		for _, is := range st.queue.Issues {
			j.Statuses[is.Status()]++
		}
	}
	j.Error = strings.Join(errs, "; ")
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	enc.Encode(j)
}
