package main

import (
	"flag"
	"os"
	"strings"
	"testing"

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
		Setup: func(env *testscript.Env) error {
			env.Setenv("ORCHESTRATE_NOW", "2024-12-13T10:00:00Z")
			return nil
		},
	})
}
