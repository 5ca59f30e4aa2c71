package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/signature"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/golden")

// genRoot is where testdata/gen.sh's projects were, as its captures say.
const genRoot = "/tmp/results-gen"

// genOptions normalizes the captures' paths: each project's directory was
// its runner's working directory.
func genOptions() signature.Options {
	opt := signature.Options{Workdir: genRoot}
	for _, d := range []string{"go", "py", "js", "node", "rust"} {
		opt.Roots = append(opt.Roots, genRoot+"/"+d)
	}
	return opt
}

// captures returns the exit code of each capture of testdata/out, by name.
func captures(t *testing.T) map[string]int {
	t.Helper()
	data, err := os.ReadFile("testdata/out/exit.tsv")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, code, _ := strings.Cut(l, "\t")
		codes[name], _ = strconv.Atoi(code)
	}
	return codes
}

// TestGolden reads each real capture of testdata/out (testdata/gen.sh
// made them) and compares the report with testdata/golden/NAME.json.
func TestGolden(t *testing.T) {
	for name, code := range captures(t) {
		t.Run(name, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata/out", name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader("tests", genOptions())
			r.Write(out)
			rep := r.Report(code != 0)
			checkReport(t, rep)
			got, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata/golden", name+".json")
			if *update {
				if err := os.MkdirAll("testdata/golden", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./results -run TestGolden -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report of %s differs from %s (-update rewrites it):\n%s", name, golden, got)
			}
		})
	}
}

// checkReport checks what every report holds: each failure has the gate,
// a one-line ID, and the signature Sign gives it alone.
func checkReport(t *testing.T, rep Report) {
	t.Helper()
	if rep.Whole && len(rep.Failed) > 1 {
		t.Errorf("a whole report with %d failures", len(rep.Failed))
	}
	for _, f := range rep.Failed {
		if f.Gate != rep.Gate || f.Gate == "" {
			t.Errorf("failure %q of gate %q in the report of %q", f.ID, f.Gate, rep.Gate)
		}
		if strings.ContainsAny(f.ID, "\n\r") {
			t.Errorf("ID %q is not one line", f.ID)
		}
		if rep.Whole != (f.ID == "") {
			t.Errorf("ID %q in a report with Whole %v", f.ID, rep.Whole)
		}
		if sig, _ := Sign([]Failed{f}, genOptions()); sig != f.Signature {
			t.Errorf("%s: signature %s, Sign gives %s", f.Unit, f.Signature, sig)
		}
	}
}
