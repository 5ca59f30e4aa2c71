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
