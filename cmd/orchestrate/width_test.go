package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

// runIn runs orchestrate's command line in-process in the workspace dir
// and returns its stdout, failing the test on an error.
func runIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), append([]string{"--dir", dir}, args...), strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("orchestrate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// TestStatusFitsWidth: at $COLUMNS 80 every line of status is at most 80
// columns, its long summary and a claim's long holder cut with an
// ellipsis; at 81 and more nothing that fits is cut; --wide shows both
// whole.
func TestStatusFitsWidth(t *testing.T) {
	t.Setenv("ORCHESTRATE_NO_BACKGROUND", "1")
	dir := t.TempDir() + "/.orchestrator"
	runIn(t, t.TempDir(), "init", "--dir", dir)
	long := "Quality gate tests failed: exit code 1; --- FAIL: TestOrdinal (0.00s) ordinals_test.go:12: want 11th"
	runIn(t, dir, "issue", "add", "--summary", long)
	runIn(t, dir, "issue", "add", "--summary", "short one", "--halted", "true")
	holder := "agent-with-a-very-long-name-for-the-work-it-does-on-this-machine"
	runIn(t, dir, "claim", "--next", "--as", holder)

	for _, cols := range []int{80, 100} {
		t.Setenv("COLUMNS", strconv.Itoa(cols))
		out := runIn(t, dir, "status")
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := runewidth.StringWidth(line); w > cols {
				t.Errorf("COLUMNS=%d: a line of %d columns:\n%s", cols, w, line)
			}
		}
		if !strings.Contains(out, "…") {
			t.Errorf("COLUMNS=%d: nothing cut:\n%s", cols, out)
		}
		if !strings.Contains(out, "short one") || !strings.Contains(out, "halted") {
			t.Errorf("COLUMNS=%d: a short summary or the Halted column lost:\n%s", cols, out)
		}
	}
	t.Setenv("COLUMNS", "80")
	out := runIn(t, dir, "status", "--wide")
	if !strings.Contains(out, long) || !strings.Contains(out, holder) {
		t.Errorf("--wide cut a summary or a holder:\n%s", out)
	}
	t.Setenv("COLUMNS", "")
	if out := runIn(t, dir, "status"); !strings.Contains(out, holder) || !strings.Contains(out, long[:59]+"…") {
		t.Errorf("with no width known, the holder is whole and the summary at its 60 characters:\n%s", out)
	}
}
