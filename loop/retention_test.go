package loop

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestPruneRuns keeps the newest runs, the current one among them, and
// pins the count at its edge.
func TestPruneRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		keep int
		want []string
	}{
		{0, []string{"a", "b", "c", "cur", "d"}},
		{1, []string{"cur"}},
		{2, []string{"cur", "d"}},
		{3, []string{"c", "cur", "d"}},
		{5, []string{"a", "b", "c", "cur", "d"}},
	} {
		dir := t.TempDir()
		w := Workspace{Dir: dir}
		old := time.Now().Add(-time.Hour)
		// cur is the oldest of all by time: kept whatever its age.
		for i, name := range []string{"cur", "a", "b", "c", "d"} {
			p := filepath.Join(dir, RunsDir, name)
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "x.log"), nil, 0o644)
			at := old.Add(time.Duration(i) * time.Minute)
			os.Chtimes(p, at, at)
		}
		if err := w.pruneRuns(tt.keep, "cur"); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, RunsDir))
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("pruneRuns(%d) left %v; want %v", tt.keep, got, tt.want)
		}
	}
}

// TestPruneRunsLeavesALinkedRunsAlone: a runs/ that is a symbolic link is
// not followed, and what it points at keeps its files.
func TestPruneRunsLeavesALinkedRunsAlone(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	for _, name := range []string{"a", "b", "c"} {
		os.MkdirAll(filepath.Join(elsewhere, name), 0o755)
	}
	os.Symlink(elsewhere, filepath.Join(dir, RunsDir))
	if err := (Workspace{Dir: dir}).pruneRuns(1, "cur"); err == nil {
		t.Error("pruneRuns through a link: no error")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 3 {
		t.Errorf("%d entries left behind the link; want 3", len(entries))
	}
}

// The gates run outside any session gather their logs in runs/norun/:
// before loop next, the logs of the loops older than the keep newest go,
// and nothing else there does.
func TestPruneLoops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"tests.log", "tests.loop2.log", "tests.loop3.log", "tests.loop4.log", "lint.loop2.log", "notes.txt", "gate-results.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "kept.loop1.log"), 0o755) // not a file of orchestrate's
	pruneLoops(dir, 5, 3)                                 // loops 2, 3, 4 and the one about to be written
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"gate-results.json", "kept.loop1.log", "notes.txt", "tests.loop3.log", "tests.loop4.log"}
	if !slices.Equal(left, want) {
		t.Errorf("left %q; want %q", left, want)
	}
	pruneLoops(dir, 5, 0) // keep_runs: 0 keeps every loop
	if entries, _ := os.ReadDir(dir); len(entries) != len(want) {
		t.Errorf("keep 0 removed logs: %d left", len(entries))
	}
}

// A baseline is taken for each commit the work starts from: runs/baseline/
// keeps the keep_runs newest, each with its logs, and removes the others.
func TestPruneBaselines(t *testing.T) {
	t.Parallel()
	w := Workspace{Dir: t.TempDir()}
	dir := filepath.Join(w.Path(RunsDir), BaselineDir)
	old := time.Now().Add(-time.Hour)
	for i, key := range []string{"a", "b", "c"} {
		os.MkdirAll(filepath.Join(dir, key), 0o755)
		p := filepath.Join(dir, key+".json")
		if err := os.WriteFile(p, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, at, at)
	}
	w.pruneBaselines(2)
	for key, kept := range map[string]bool{"a": false, "b": true, "c": true} {
		_, errJSON := os.Stat(filepath.Join(dir, key+".json"))
		_, errDir := os.Stat(filepath.Join(dir, key))
		if (errJSON == nil) != kept || (errDir == nil) != kept {
			t.Errorf("baseline %s: json %v, logs %v; want kept %v", key, errJSON, errDir, kept)
		}
	}
}
