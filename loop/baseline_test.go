package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TakeBaseline runs the gates once for a tree and keeps the result: the
// next call reads it back; a change of the gates' config takes a new one;
// a baseline whose gate timed out is used, not kept, as its results are
// not the tree's.
func TestTakeBaselineKeptOnceByTreeAndGates(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	gates := func(extra string) string {
		return "gates:\n  - name: tests\n    command: 'echo x >> " + count + "; exit 1'\n" + extra
	}
	w, _ := judgeWorkspace(t, gates(""))
	dir := t.TempDir()
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "x")
	}
	take := func(tree string) *BaseResults {
		t.Helper()
		b, err := w.TakeBaseline(context.Background(), time.Now, tree, dir)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := take("tree1"); !b.Taken || len(b.Reports) != 1 || b.Reports[0].Passing() {
		t.Fatalf("first baseline = %+v; want taken, the gate failing", b)
	}
	if b := take("tree1"); b.Taken || runs() != 1 {
		t.Errorf("second baseline of the same tree: taken %v, %d gate runs; want kept, 1 run", b.Taken, runs())
	}
	if err := os.WriteFile(w.Path(ConfigFile), []byte(gates("    timeout: 2m\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if b := take("tree1"); !b.Taken || runs() != 2 {
		t.Errorf("after a change of the gates: taken %v, %d gate runs; want a new one", b.Taken, runs())
	}
	slow := "gates:\n  - name: tests\n    command: 'echo x >> " + count + "; sleep 5'\n    timeout: 200ms\n"
	if err := os.WriteFile(w.Path(ConfigFile), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	if b := take("tree2"); !b.Taken || len(b.Reports) != 1 || !b.Reports[0].Whole || b.Reports[0].Passing() {
		t.Fatalf("a baseline whose gate timed out = %+v; want it taken, the gate failed whole", b)
	}
	if _, ok := w.KeptBaseline("tree2"); ok {
		t.Error("a baseline whose gate timed out was kept: every later run on the tree would judge against it")
	}
}
