package main

import (
	"runtime"
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
