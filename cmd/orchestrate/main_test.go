package main

import (
	"flag"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script")

func TestMain(m *testing.M) {
	// A binary built with -race sleeps a second as it exits; the commands
	// these tests run (this binary, as orchestrate) need not.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	// The command as users run it: main, with its signal handling, which
	// TestRunInterrupted sends SIGINT to.
	testscript.Main(m, map[string]func(){"orchestrate": main})
}

// TestScripts runs the command-line scenarios of testdata/script: each
// command as a user meets it, its output, its errors and its exit codes.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"analytics-current": cmdAnalyticsCurrent,
			"workflow-run":      cmdWorkflowRun,
			"junit":             cmdJUnit,
			"sarif":             cmdSARIF,
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("ORCHESTRATE_NOW", "2024-12-13T10:00:00Z")
			// The commands leave orchestrate analytics --if-stale at work
			// in the background: the work directory waits for them.
			env.Defer(func() { waitAllAnalytics(env.WorkDir) })
			return nil
		},
	})
}

// cmdAnalyticsCurrent: analytics-current DIR waits until the page of the
// workspace DIR shows its history and no process is making it, which the
// commands leave to a process in the background: it fails if that does
// not happen within a minute.
func cmdAnalyticsCurrent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: analytics-current DIR")
	}
	w := loop.Workspace{Dir: ts.MkAbs(args[0])}
	deadline := time.Now().Add(time.Minute)
	for !w.AnalyticsCurrent() || w.AnalyticsRefreshing() {
		if time.Now().After(deadline) {
			ts.Fatalf("%s: analytics.html still not current after a minute", args[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// orchestrateBin is the orchestrate on PATH (the test binary itself, as
// testscript's Main puts it there), for tests that run it as a process; the
// test is skipped without one.
func orchestrateBin(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("orchestrate")
	if err != nil {
		tb.Skip("orchestrate is not on PATH:", err)
	}
	return bin
}
