package gate

import (
	"os"
	"path/filepath"
	"testing"
)

// An attempt read back from gate-results.json makes the same files again:
// a driver that adds its attempt to the cycle loses nothing of the earlier
// ones.
func TestReadAttemptsRoundTrip(t *testing.T) {
	r, logs := fixCycle(t)
	if err := WriteArtifacts(logs, r); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAttempts(filepath.Join(logs, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	back := &Report{ExecutionID: r.ExecutionID, MaxRetries: r.MaxRetries, Attempts: got}
	wantJSON, _ := r.JSON()
	gotJSON, err := back.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("gate-results.json read back and written again differs:\n--- got\n%s\n--- want\n%s", gotJSON, wantJSON)
	}
	if g, w := back.Markdown(), r.Markdown(); g != w {
		t.Errorf("summary.md from the attempts read back differs:\n--- got\n%s\n--- want\n%s", g, w)
	}
}

func TestReadAttemptsBad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ResultsFile)
	if _, err := ReadAttempts(path); !os.IsNotExist(err) {
		t.Errorf("missing file: err %v, want not exist", err)
	}
	os.WriteFile(path, []byte(`{"quality_gates": {"attempts": [{"attempt": 1, "timestamp": "yesterday"}]}}`), 0o644)
	if _, err := ReadAttempts(path); err == nil {
		t.Error("a bad timestamp read without error")
	}
	os.WriteFile(path, []byte(`{"quality_gates": `), 0o644)
	if _, err := ReadAttempts(path); err == nil {
		t.Error("truncated JSON read without error")
	}
}

// FuzzReadAttempts: any file reads back without a panic, and what reads
// back writes a gate-results.json that reads back the same.
func FuzzReadAttempts(f *testing.F) {
	f.Add([]byte(`{"execution_id": "r", "quality_gates": {"attempts": [{"attempt": 1, "timestamp": "2024-01-15T10:30:00Z", "passed": false, "duration_seconds": 1.5, "results": [{"name": "t", "passed": false, "duration_seconds": 1.5, "exit_code": 1, "output": "x", "outcome": "fail", "enforcement": "blocking", "output_bytes": 1, "fail_on": "P1", "findings": [{"priority": "P0", "file": "a.go", "line": 3, "issue": "i"}]}]}]}}`))
	f.Add([]byte(`{"quality_gates": {"attempts": [{"attempt": 2, "results": [{"name": "h", "outcome": "awaiting_approval", "approval": {"state": "pending", "issue": "ISSUE-20241213-001"}}]}]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), ResultsFile)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadAttempts(path)
		if err != nil {
			return
		}
		out, err := (&Report{Attempts: got}).JSON()
		if err != nil {
			return // a value JSON cannot hold (NaN seconds)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		again, err := ReadAttempts(path)
		if err != nil {
			t.Fatalf("gate-results.json written from what was read does not read back: %v\n%s", err, out)
		}
		out2, _ := (&Report{Attempts: again}).JSON()
		if string(out2) != string(out) {
			t.Fatalf("read back, written again, differs:\n%s\n---\n%s", out, out2)
		}
	})
}
