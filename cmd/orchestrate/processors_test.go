package main

import (
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestProcessors: gate runs its Go code on one processor, unless
// GOMAXPROCS says how many; every other command keeps them all.
func TestProcessors(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	for _, c := range []struct {
		name, env string
		want      int
	}{
		{"gate", "", 1},
		{"gate", "3", 4}, // the person's GOMAXPROCS: the runtime read it at start
		{"run", "", 4},
		{"status", "", 4},
		{"mcp", "", 4},
	} {
		runtime.GOMAXPROCS(4)
		t.Setenv("GOMAXPROCS", c.env)
		processors(c.name)
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("%s with GOMAXPROCS=%q: %d processors; want %d", c.name, c.env, got, c.want)
		}
	}
}

// TestGateRunsOnOneProcessor: orchestrate gate, as a process, runs on one
// processor, and on the person's GOMAXPROCS when set; the runtime's own
// trace (GODEBUG=schedtrace) says how many, while a gate sleeps.
func TestGateRunsOnOneProcessor(t *testing.T) {
	t.Parallel()
	root := configWorkspace(t, "agent:\n  command: 'true'\ngates:\n  - name: nap\n    command: 'sleep 0.3'\n")
	traced := regexp.MustCompile(`(?m)^SCHED [^\n]*gomaxprocs=(\d+)`)
	for _, c := range []struct{ env, want string }{{"", "1"}, {"3", "3"}} {
		cmd := exec.Command("orchestrate", "gate", "--no-record")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GODEBUG=schedtrace=50", "GOMAXPROCS="+c.env)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("GOMAXPROCS=%q orchestrate gate: %v\n%s", c.env, err, stderr.String())
		}
		seen := traced.FindAllStringSubmatch(stderr.String(), -1)
		if len(seen) == 0 {
			t.Fatalf("GOMAXPROCS=%q: no scheduler trace on stderr:\n%s", c.env, stderr.String())
		}
		if last := seen[len(seen)-1][1]; last != c.want {
			t.Errorf("GOMAXPROCS=%q: orchestrate gate ran on %s processors; want %s", c.env, last, c.want)
		}
	}
}
