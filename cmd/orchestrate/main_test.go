package main

import (
	"flag"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script")

func TestMain(m *testing.M) {
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
