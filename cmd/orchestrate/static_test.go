package main

import (
	"debug/elf"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestBuildsAreStatic: make build, and the tests' own build that every
// scenario runs, make a static binary (no cgo): no C library loaded at
// each start, and the MCP server's 2 MB less at rest (TestMCPIdleMemory).
func TestBuildsAreStatic(t *testing.T) {
	t.Parallel()
	if make, err := exec.LookPath("make"); err == nil {
		out, err := exec.Command(make, "-n", "-C", "../..", "build").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "CGO_ENABLED=0 ") {
			t.Errorf("make -n build: %v\n%s\nwant a build with CGO_ENABLED=0", err, out)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	bin, err := exec.LookPath("orchestrate")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: linked with the C library, not static", bin)
		}
	}
}
