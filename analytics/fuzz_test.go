package analytics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadHistory feeds arbitrary bytes to readHistory and Compute: they may reject
// the input, but never panic or loop, and every row they accept carries an event name.
func FuzzReadHistory(f *testing.F) {
	basic, err := os.ReadFile(filepath.Join("testdata", "basic.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(basic)
	f.Add([]byte(""))
	f.Add([]byte(headerLine))
	f.Add([]byte(headerLine + `2026-01-01T00:00:00Z,r,1,record,I,"a gate, torn`))
	f.Add([]byte(headerLine + "2026-01-01T00:00:00Z,,,check,,,,exhausted,,,,\"A, B;C\"\n"))
	f.Add([]byte(strings.ReplaceAll(headerLine, ",", ",x,")))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := 0
		err := readHistory(strings.NewReader(string(data)), func(e Event) error {
			if e.Event == "" {
				t.Fatalf("row %d has no event name", rows+1)
			}
			rows++
			return nil
		}, nil)
		m, cerr := Compute(strings.NewReader(string(data)))
		if (err == nil) != (cerr == nil) {
			t.Fatalf("readHistory error %v, Compute error %v; want both or neither", err, cerr)
		}
		if cerr != nil {
			return
		}
		if m.Rows != int64(rows) {
			t.Fatalf("Compute counted %d rows, readHistory %d", m.Rows, rows)
		}
		if m.AutonomousFixRate < 0 || m.AutonomousFixRate > 1 {
			t.Fatalf("AutonomousFixRate = %v", m.AutonomousFixRate)
		}
	})
}
