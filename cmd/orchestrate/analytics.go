package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/remote"
)

var analyticsCmd = &command{
	name:    "analytics",
	summary: "regenerate analytics.html from history.csv",
	usage: `Usage: orchestrate analytics [--out FILE] [--if-stale] [--remote NAME] [--json]

Reads history.csv and writes analytics.html (or FILE): the autonomous fix
rate, attempts to success, time to success, halted issues and cap hits,
failure rates per gate, the failures that came back most, with charts and
plain tables of the same numbers. The page is self-contained: it draws its
charts with no network.

With --remote NAME, the page is also made from the history of every other
machine that shares the queue on the git remote NAME (run --remote NAME):
each sync puts a machine's history.csv beside the queue on the remote
(refs/orchestrate/queue, as history/<host>/; the host is git config
orchestrate.host). It reads them as this clone last saw them (its last
sync, or git fetch NAME +refs/orchestrate/queue:refs/orchestrate/remote/NAME/queue),
leaves out this clone's own (history.csv is newer), and merges their rows
in time order, a row held by several histories (a committed history.csv,
a copied clone) counted once. It prints what each history gave. The page
keeps to the remote: every refresh after it reads the same remote's
histories, until orchestrate analytics without --remote.

The page is kept up to date without it: orchestrate run makes it as its
last step (run --remote NAME with NAME's histories), watch when
history.csv changes, and every other command that adds to history.csv
(the Stop hook, record, check, gate, issue, session, approve, reject,
abort) starts orchestrate analytics --if-stale in the background and does
not wait for it, so that none of them slows down as the history grows.
.orchestrator/.analytics.stamp says which state of the histories the page
shows.

Flags:
  --out FILE     write the page to FILE instead of .orchestrator/analytics.html
  --if-stale     only if history.csv changed since the page was made, and
                 not at all while another process is making it (that one
                 looks at the history again when it is done); it gives up
                 after 5 minutes or at SIGTERM, and a failure leaves
                 .orchestrator/.analytics.error, which status shows until
                 the next page is made
  --remote NAME  and every other machine's history shared on the git
                 remote NAME
  --json         the page's path, its rows, and what each history gave

Examples:
  orchestrate analytics
  orchestrate analytics --out /tmp/report.html && xdg-open /tmp/report.html
  orchestrate analytics --remote origin

Exit codes: 0 written (or current), 1 error, 2 usage.
`,
	run: runAnalytics,
}

func runAnalytics(e *env, args []string) error {
	fs := e.flags("analytics")
	out := fs.String("out", "", "")
	ifStale := fs.Bool("if-stale", false, "")
	remoteOf := e.remoteFlag(fs)
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	r, err := remoteOf()
	if err != nil {
		return err
	}
	ws := e.ws()
	var m *analytics.Metrics
	switch {
	case r != nil && *ifStale:
		return usageError("analytics", "--if-stale keeps to the histories the page shows: no --remote")
	case *out != "":
		if m, err = writePage(e.ctx, ws, r, *out); err != nil {
			return err
		}
	case *ifStale:
		*out = ws.Path(loop.AnalyticsFile)
		// In the background, no one waits: it gives up at its deadline,
		// or at a SIGTERM, and says why in .analytics.error.
		ctx, cancel := context.WithTimeoutCause(e.ctx, backgroundDeadline,
			fmt.Errorf("gave up after %s, the deadline of a refresh in the background", backgroundDeadline))
		defer cancel()
		held := inheritedAnalyticsLock(ws)
		if testRefreshHold != nil {
			testRefreshHold()
		}
		if err := ws.RefreshAnalyticsIfIdle(ctx, held); err != nil {
			return err
		}
		return e.report(map[string]any{"path": *out}, "wrote %s\n", *out)
	default:
		*out = ws.Path(loop.AnalyticsFile)
		if r != nil {
			if err := r.Check(e.ctx); err != nil {
				return err
			}
		}
		if m, err = ws.RefreshAnalyticsFrom(e.ctx, r); err != nil {
			return err
		}
	}
	return reportPage(e, *out, m, r != nil)
}

// writePage writes the page of ws's history (and of the hosts' histories
// on this clone's view of r, with r) to out.
func writePage(ctx context.Context, ws loop.Workspace, r *remote.Remote, out string) (*analytics.Metrics, error) {
	name := ""
	if r != nil {
		if err := r.Check(ctx); err != nil {
			return nil, err
		}
		name = r.Name()
	}
	srcs, what, done, err := ws.PageHistories(ctx, name)
	if err != nil {
		return nil, err
	}
	defer done()
	return analytics.Generate(srcs, out, analytics.RenderOptions{Source: what})
}

// pageReport is what analytics --json prints of the page it made.
type pageReport struct {
	Path       string                 `json:"path"`
	Rows       int64                  `json:"rows"`
	Duplicates int64                  `json:"duplicates"`
	Histories  []analytics.SourceStat `json:"histories"`
}

// reportPage says where the page went and what it counts; with a remote,
// what each history gave.
func reportPage(e *env, path string, m *analytics.Metrics, hosts bool) error {
	rep := pageReport{Path: path, Histories: []analytics.SourceStat{}}
	if m != nil {
		rep.Rows, rep.Duplicates = m.Rows, m.Duplicates
		rep.Histories = append(rep.Histories, m.Sources...)
	}
	if e.json {
		return e.printJSON(rep)
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", path)
	if !hosts {
		return nil
	}
	fmt.Fprintf(e.stdout, "%d rows from %d histories", rep.Rows, len(rep.Histories))
	if rep.Duplicates > 0 {
		fmt.Fprintf(e.stdout, "; %d in more than one, counted once", rep.Duplicates)
	}
	fmt.Fprintln(e.stdout)
	for _, h := range rep.Histories {
		fmt.Fprintf(e.stdout, "  %s: %d rows", h.Name, h.Rows)
		if h.Duplicates > 0 {
			fmt.Fprintf(e.stdout, ", and %d also in another history (counted once)", h.Duplicates)
		}
		if h.LeftOut != "" {
			fmt.Fprintf(e.stdout, "; the rest left out: %s", h.LeftOut)
		}
		fmt.Fprintln(e.stdout)
	}
	return nil
}

// backgroundDeadline bounds orchestrate analytics --if-stale.
const backgroundDeadline = 5 * time.Minute

// refreshAnalytics starts orchestrate analytics --if-stale for ws in the
// background when its page is behind its history and no other process is
// already making it. The process is detached (a session of its own, no
// standard streams), so that the caller, a Stop hook most of all, returns
// at once and whoever reads the caller's output does not wait for it.
// Failing to start it loses nothing: the next command, run, watch or
// orchestrate analytics makes the page.
func refreshAnalytics(ws loop.Workspace) {
	if ws.Exists() != nil || ws.AnalyticsCurrent() {
		return
	}
	// A caller that must know when every process of a command is done (a
	// test that kills commands, a script that copies the workspace) can
	// have none left behind.
	if os.Getenv("ORCHESTRATE_NO_BACKGROUND") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dir, err := filepath.Abs(ws.Dir)
	if err != nil {
		return
	}
	// The page's lock is taken here and handed to the process: from now
	// until that process ends, whoever looks sees a refresh at work (no
	// second one starts, and a test or a script that waits for it has an
	// event to wait for, not a guess). Another process making the page
	// already will look at the history again when it is done.
	lock, err := fsx.TryLockFile(ws.Path(loop.AnalyticsLockFile))
	if err != nil {
		return
	}
	defer lock.Close()
	if startRefresh != nil {
		startRefresh(ws)
		return
	}
	cmd := refreshCommand(exe, dir)
	cmd.ExtraFiles = []*os.File{lock}
	cmd.Env = append(os.Environ(), analyticsLockEnv+"=3")
	if err := cmd.Start(); err != nil {
		return
	}
	// Reaped if this process outlives it; left to init if not.
	go cmd.Wait()
}

// refreshCommand is orchestrate analytics --if-stale for the workspace
// dir, detached: its standard streams are /dev/null (a Stop hook's reader
// waits for the end of its output, which a process holding it would
// delay), and it runs in a session of its own, out of reach of a Ctrl-C
// meant for its parent.
func refreshCommand(exe, dir string) *exec.Cmd {
	cmd := exec.Command(exe, "--dir", dir, "analytics", "--if-stale")
	cmd.Args[0] = "orchestrate"
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// analyticsLockEnv names the descriptor on which the background refresh
// finds the page's lock that its parent took for it (ExtraFiles' first is
// 3).
const analyticsLockEnv = "ORCHESTRATE_ANALYTICS_LOCK_FD"

// inheritedAnalyticsLock is the release of the page's lock that the
// process which started this one handed over, or nil when there is none.
func inheritedAnalyticsLock(ws loop.Workspace) func() {
	fd, err := strconv.ParseUint(os.Getenv(analyticsLockEnv), 10, 31)
	if err != nil {
		return nil
	}
	os.Unsetenv(analyticsLockEnv)
	unlock, ok := fsx.InheritedLock(uintptr(fd), ws.Path(loop.AnalyticsLockFile))
	if !ok {
		return nil
	}
	return unlock
}

// testRefreshHold is nil but in a test build (testhooks.go), where the
// background refresh can be held at its start.
var testRefreshHold func()

// startRefresh, when set, replaces the background process of
// refreshAnalytics.
var startRefresh func(loop.Workspace)

// refreshesAnalytics lists the commands after which refreshAnalytics
// runs: a person's (an issue changed, a decision, a session, an abort,
// the gates run by hand or in CI) and status, by which someone looks. The
// commands of a loop at work (record, check, claim) do not: the loop ends
// with one that does (run makes the page itself; a Stop hook that lets
// the agent stop calls refreshAnalytics; the slash command ends with
// analytics and status).
var refreshesAnalytics = map[string]bool{
	"issue": true, "session": true, "approve": true, "reject": true, "abort": true,
	"gate": true, "status": true,
}
