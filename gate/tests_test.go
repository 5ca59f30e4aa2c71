package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestsFromOutput reads a gate's test-level results from its whole
// output, its middle too, which Result.Output drops.
func TestTestsFromOutput(t *testing.T) {
	dir := t.TempDir()
	g := gateOf("tests", `printf -- '--- FAIL: TestA (0.00s)\n    a_test.go:3: bad\n'; head -c 200000 /dev/zero | tr '\0' x; printf '\nFAIL\texample.com/m\t0.01s\n'; exit 1`)
	r, err := Run(context.Background(), g, Options{RepoRoot: dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Omitted == 0 {
		t.Fatal("the output was kept whole: the test needs a longer one")
	}
	rep := r.Tests
	if rep == nil || rep.Runner != "go" || len(rep.Failed) != 1 || rep.Failed[0].ID != "example.com/m TestA" || rep.Failed[0].Gate != "tests" {
		t.Fatalf("Tests = %+v", rep)
	}
}

// TestTestsFromReportFile reads a report file the gate writes, and reads
// the output when the file is missing, saying why in the gate's log.
func TestTestsFromReportFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	event := `{"Action":"fail","Package":"example.com/m","Test":"TestB"}`
	g := gateOf("tests", "echo '"+event+"' > out.json; echo unreadable; exit 1")
	g.WorkingDir, g.Report = "sub", "out.json"
	r, err := Run(context.Background(), g, Options{RepoRoot: dir}, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.Tests; rep == nil || rep.Runner != "go-json" || len(rep.Failed) != 1 || rep.Failed[0].ID != "example.com/m TestB" {
		t.Fatalf("Tests = %+v", r.Tests)
	}

	g = gateOf("tests", "printf -- '--- FAIL: TestC (0.00s)\\nFAIL\\texample.com/m\\t0.1s\\n'; exit 1")
	g.Report = "missing.xml"
	log := filepath.Join(dir, "tests.log")
	r, err = Run(context.Background(), g, Options{RepoRoot: dir}, log)
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.Tests; rep == nil || rep.Runner != "go" || len(rep.Failed) != 1 || rep.Failed[0].ID != "example.com/m TestC" {
		t.Fatalf("Tests = %+v", r.Tests)
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), "the report missing.xml was not read") {
		t.Errorf("the log does not say why the report was not read:\n%s", data)
	}
}
