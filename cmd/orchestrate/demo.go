package main

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// demoFiles is the demo project: calc.sh with two bugs, a test script per
// bug, the scripted agent, and the workspace's config.yaml and task.md.
//
//go:embed all:demo
var demoFiles embed.FS

var demoCmd = &command{
	name:    "demo",
	summary: "the offline end-to-end demo: a fix, a retry, a halt, the analytics",
	usage: `Usage: orchestrate demo [--dir D] [--json]

Runs orchestrate run on a bundled tiny project, offline and in seconds, with
a scripted agent in place of an LLM, so that you see the whole loop:

  calc.sh          a shell calculator with two bugs (add and mul)
  tests/*.sh       the two quality gates, add and mul
  agent.sh         the scripted agent: it counts its attempts and fixes add
                   on its second one, but makes the same wrong change to
                   mul every time

Loop 1 files an issue per failing gate and the check retries both
(AUTO-RETRY TRIGGERED); loop 2, the same agent resumed, fixes add (AUTO-RETRY
SUCCEEDED); loop 3, a fresh agent after two failures, fails mul the same
way a third time, which halts its issue (AUTO-RETRY EXHAUSTED). Then the
status table, and where to look: issue_queue.md, history.csv,
analytics.html and runs/.

The project is built in D, which must not exist or be empty (default: a new
temporary directory), and is kept so that you can look around, or go on:
cd D && orchestrate issue retry ISSUE-… && orchestrate run.

Examples:
  orchestrate demo
  orchestrate demo --dir /tmp/demo && cd /tmp/demo && orchestrate status

Exit codes: 0 the demo went as scripted, 1 error, 2 usage.
`,
	run: runDemo,
}

func runDemo(e *env, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "where to build the demo project")
	fs.BoolVar(&e.json, "json", e.json, "print one JSON object")
	if err := e.parseNone(fs, args); err != nil {
		return err
	}
	root, err := demoDir(*dir)
	if err != nil {
		return err
	}
	ws := loop.Workspace{Dir: filepath.Join(root, loop.DefaultDir)}
	if err := writeDemo(root, ws.Dir); err != nil {
		return err
	}

	opt := loop.RunOptions{Now: e.now}
	p := &runPrinter{w: e.stdout, dir: ws.Dir}
	if !e.json {
		opt.Step = p.step
		fmt.Fprintf(e.stdout, `orchestrate demo, in %s:
  calc.sh     a tiny shell calculator with two bugs, add and mul
  tests/      a quality gate for each (config: %s)
  agent.sh    a scripted agent in place of an LLM: it fixes add on its
              second attempt, and makes the same wrong change to mul each time
  task:       %s

$ orchestrate run
`, root, ws.Path(loop.ConfigFile), ws.Path(loop.TaskFile))
	}
	res, err := ws.Run(e.ctx, opt)
	if err != nil {
		return err
	}
	if res.Outcome == loop.RunInterrupted {
		return finishRun(e, p, res)
	}
	q, err := queue.Load(ws.Path(loop.QueueFile))
	if err != nil {
		return err
	}
	var resolved, halted []string
	for _, is := range q.Issues {
		switch {
		case is.Status() == queue.StatusResolved:
			resolved = append(resolved, is.ID)
		case is.Bool(queue.FieldHalted, false):
			halted = append(halted, is.ID)
		}
	}
	if e.json {
		err = e.printJSON(map[string]any{
			"dir": root, "outcome": res.Outcome, "run_id": res.RunID, "loops": res.Loops,
			"resolved": nonNil(resolved), "halted": nonNil(halted),
			"queue": ws.Path(loop.QueueFile), "history": ws.Path(loop.HistoryFile),
			"analytics": ws.Path(loop.AnalyticsFile),
		})
	} else {
		p.end(res)
		err = demoEpilogue(e, ws, res)
	}
	if err != nil {
		return err
	}
	if res.Outcome != loop.RunHalted || len(resolved) != 1 || len(halted) != 1 {
		return fmt.Errorf("the demo did not go as scripted: run %s (%s), resolved %v, halted %v", res.Outcome, res.Reason, resolved, halted)
	}
	return nil
}

// demoDir returns the directory to build the demo in: dir, which must not
// exist or be empty, or a new temporary directory.
func demoDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "orchestrate-demo-")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return dir, os.MkdirAll(dir, 0o755)
	case err != nil:
		return "", err
	case len(entries) > 0:
		return "", fmt.Errorf("%s is not empty: the demo needs a new or empty directory", dir)
	}
	return dir, nil
}

// writeDemo writes the demo project in root, and the workspace: the
// demo's config.yaml and task.md, the example's queue and session state.
func writeDemo(root, wsDir string) error {
	err := fs.WalkDir(demoFiles, "demo", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := demoFiles.ReadFile(p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if path.Ext(p) == ".sh" {
			mode = 0o755
		}
		dst := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, "demo/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return fsx.WriteFile(dst, data, mode)
	})
	if err != nil {
		return err
	}
	return walkExample(func(rel string, data []byte) error {
		dst := filepath.Join(wsDir, filepath.FromSlash(rel))
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		return fsx.WriteFile(dst, data, 0o644)
	})
}

// demoEpilogue prints the status table and where to look.
func demoEpilogue(e *env, ws loop.Workspace, res *loop.RunResult) error {
	q, s, err := loadStatus(ws)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "\n$ orchestrate status")
	de := *e
	de.dir = ws.Dir
	if err := printStatus(&de, q, s, termWidth(e), false); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, `
Where to look, in %s%c:
  issue_queue.md    the issues: one resolved, one halted
  history.csv       one row per event of the run
  analytics.html    the report; open it in a browser (it works offline)
  runs/%s/
                    the prompts sent, the agent's and the gates' logs,
                    gate-results.json and summary.md

Go on by hand: cd %s
  orchestrate issue show ISSUE-…   an issue, its failure and its counts
  orchestrate issue retry ISSUE-…  a person's choice: its counts back to 0
  orchestrate run                  the loop again, on the open issues
`, ws.Dir, filepath.Separator, res.RunID, filepath.Dir(ws.Dir))
	return nil
}
