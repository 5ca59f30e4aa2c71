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
