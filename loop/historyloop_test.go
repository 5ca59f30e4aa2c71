package loop

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestRunHistoryLoopsAndOrder: every row of a run but its start names its
// loop, and the rows of the run are in time order, with two gates that
// file, record and resolve issues at different times.
func TestRunHistoryLoopsAndOrder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := `agent:
  command: 'cat > /dev/null; echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n'
  resume_command: 'cat > /dev/null; echo $(( $(cat n 2>/dev/null || echo 0) + 1 )) > n'
gates:
  - {name: slow, command: 'sleep 0.05; test "$(cat n)" -ge 3 || { echo "slow: got $(cat n)"; exit 1; }'}
  - {name: quick, command: 'test "$(cat n)" -ge 2 || { echo "quick: got $(cat n)"; exit 1; }'}
`
	if err := os.WriteFile(w.Path(ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.Run(context.Background(), RunOptions{Task: "x"})
	if err != nil || res.Outcome != RunPassed || res.Loops != 3 {
		t.Fatalf("Run = %+v, %v; want passed after 3 loops", res, err)
	}
	rows := historyRows(t, w)
	var last time.Time
	kinds := map[string]bool{}
	for i, row := range rows[1:] {
		at, err := time.Parse(time.RFC3339Nano, row[0])
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(last) {
			t.Errorf("row %d (%s) at %s comes after a row at %s", i+2, row[3], row[0], last.Format(time.RFC3339Nano))
		}
		last = at
		kinds[row[3]] = true
		if row[3] != "run_start" && row[2] == "" {
			t.Errorf("row %d (%s, %s) names no loop", i+2, row[3], row[4])
		}
	}
	for _, k := range []string{"agent", "gate", "issue_add", "record", "resolve", "check", "retry_triggered", "run_end"} {
		if !kinds[k] {
			t.Errorf("the history has no %s row; the test does not test it", k)
		}
	}
}

// TestHookHistoryLoops: a Stop hook session's stops are its loops; each
// stop's history rows name it, as its gate logs do (unit.log, then
// unit.loop2.log, …).
func TestHookHistoryLoops(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := "gates:\n  - {name: unit, command: 'n=$(( $(cat " + root + "/n 2>/dev/null || echo 0) + 1 )); echo $n > " + root + "/n; test $n -ge 3 || { echo \"unit: got $n\"; exit 1; }'}\n"
	if err := os.WriteFile(w.Path(ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Now().UTC() }
	for stop, want := range []string{HookBlocked, HookBlocked, HookPassed} {
		res, err := w.StopHook(context.Background(), now, "s1")
		if err != nil || res.Outcome != want {
			t.Fatalf("stop %d: %+v, %v; want %s", stop+1, res, err, want)
		}
	}
	rows := historyRows(t, w)
	gates := 0
	for i, row := range rows[1:] {
		if row[2] == "" {
			t.Errorf("row %d (%s, %s) names no loop", i+2, row[3], row[4])
		}
		if row[3] == "gate" {
			gates++
			if row[2] != strconv.Itoa(gates) {
				t.Errorf("the gate row of stop %d names loop %s", gates, row[2])
			}
		}
	}
	if gates != 3 {
		t.Errorf("%d gate rows; want one a stop", gates)
	}
}

// historyRows reads the workspace's history.csv, its header first.
func historyRows(t *testing.T, w Workspace) [][]string {
	t.Helper()
	f, err := os.Open(w.Path(HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
