package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUnixOnly cross-compiles the command: Windows stops at compile time with
// a message saying orchestrate is Unix-only, before any other error, and the
// Unix systems build.
func TestUnixOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the command")
	}
	// Each build compiles the standard library for its system: they run
	// beside the other tests rather than after them.
	t.Parallel()
	build := func(goos string) (string, error) {
		cmd := exec.Command("go", "build", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("windows", func(t *testing.T) {
		t.Parallel()
		out, err := build("windows")
		if err == nil {
			t.Fatal("GOOS=windows go build succeeded; want a compile error saying orchestrate is Unix-only")
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < 2 || !strings.Contains(lines[1], "orchestrate_is_Unix_only__") {
			t.Errorf("GOOS=windows go build: the first error does not say orchestrate is Unix-only:\n%s", out)
		}
	})
	for _, goos := range []string{"darwin", "freebsd"} {
		t.Run(goos, func(t *testing.T) {
			t.Parallel()
			if out, err := build(goos); err != nil {
				t.Errorf("GOOS=%s go build: %v\n%s", goos, err, out)
			}
		})
	}
}
