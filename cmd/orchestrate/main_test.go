package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script")

func TestMain(m *testing.M) {
	// A binary built with -race sleeps a second as it exits; the commands
	// these tests run need not.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(runMain(m))
}

// runMain builds the orchestrate that the scenarios and every test that
// runs orchestrate as a process use, once for the whole test process, and
// puts it first on PATH: the command as users run it (main, with its
// signal handling), built with the orchestrate_testhooks tag, whose fault
// hooks (ORCHESTRATE_NOW, ORCHESTRATE_KILL_AT_STEP, ORCHESTRATE_FAIL_WRITE)
// the tests drive. It is built without -race, whatever go test's flags,
// which makes the scenarios about three times cheaper: the packages' own
// tests run under -race; ORCHESTRATE_TEST_RACE=1 builds it with -race too.
func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "orchestrate-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-tags", "orchestrate_testhooks", "-o", filepath.Join(dir, "orchestrate")}
	cgo := "CGO_ENABLED=0" // static, as make build makes it
	if os.Getenv("ORCHESTRATE_TEST_RACE") == "1" {
		args, cgo = append(args, "-race"), "CGO_ENABLED=1" // the race detector needs cgo
	}
	build := exec.Command("go", append(args, ".")...)
	build.Env = append(os.Environ(), cgo)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building orchestrate for the tests:", err)
		return 1
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	waitingParallel()
	return m.Run()
}

// waitingParallel lets four tests per processor run at once (sixteen at
// most: each starts processes of its own), unless -parallel says how
// many: most of this package's tests wait on the processes they start (a
// gate's sleep, a lease running out, a killed run's group), not on the
// processor, and at go test's default of one per processor a short run
// spent most of its time waiting on them one by one.
func waitingParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(min(4*runtime.GOMAXPROCS(0), 16)))
	}
}

// TestScripts runs the command-line scenarios of testdata/script: each
// command as a user meets it, its output, its errors and its exit codes.
func TestScripts(t *testing.T) {
	// Beside the other tests that wait on processes, not after them.
	t.Parallel()
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
	for !w.AnalyticsCurrent() || refreshing(w) {
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
