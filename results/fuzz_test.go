package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// checkFuzzed checks what a report of any input holds: it never panics
// to get there, every failure has the gate, and every ID is one line.
func checkFuzzed(t *testing.T, rep Report) {
	t.Helper()
	for _, f := range rep.Failed {
		if f.Gate != "g" {
			t.Fatalf("failure %q of gate %q", f.ID, f.Gate)
		}
		if strings.ContainsAny(f.ID, "\n\r") {
			t.Fatalf("ID %q is not one line", f.ID)
		}
		if len(f.Block) > MaxBlock+len(cutNote)+1 {
			t.Fatalf("a block of %d bytes", len(f.Block))
		}
	}
	if len(rep.Failed) > MaxUnits {
		t.Fatalf("%d failures kept", len(rep.Failed))
	}
}

// seedCaptures adds the real captures of testdata/out to f's corpus.
func seedCaptures(f *testing.F, only string) {
	names, _ := filepath.Glob("testdata/out/" + only + "*.txt")
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzRead reads any output with every text reader.
func FuzzRead(f *testing.F) {
	seedCaptures(f, "")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzed(t, Read("g", data, signature.Options{}))
		r := NewReader("g", signature.Options{})
		r.Write(data)
		checkFuzzed(t, r.Report(true))
	})
}

// FuzzReadGoJSON reads any go test -json events.
func FuzzReadGoJSON(f *testing.F) {
	seedCaptures(f, "go-json")
	seedCaptures(f, "go-build-json")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzed(t, ReadGoJSON("g", data, signature.Options{}))
	})
}

// FuzzReadJUnit reads any XML.
func FuzzReadJUnit(f *testing.F) {
	f.Add([]byte(junitSample))
	f.Add([]byte(`<testsuite><testcase name="a"><error/></testcase></testsuite>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzzed(t, ReadJUnit("g", data, signature.Options{}))
		if rep, err := ReadReport("g", data, true, signature.Options{}); err == nil {
			checkFuzzed(t, rep)
		}
	})
}
