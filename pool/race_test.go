package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// A person who commits to the branch faster than the gates run: the
// branch moves between the car's gates and its fast-forward. One race
// fewer than maxLostRaces, the car still goes onto the commits, is checked
// again, and lands checked. At maxLostRaces, it lands without a check when
// the commits change none of its files, and leaves with a BusyError, its
// work not merged, when they change one of them; a commit before every
// fast-forward, even those made without gates, makes it leave after
// 2*maxLostRaces. Each lost race is said. With no bound, the train lost
// all 100 races, and ran the gates 101 times.
func TestTrainLostRaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		moves   int  // the commits the person makes, one at each fast-forward
		overlap bool // each changes the car's file (another line of it)
		merged  bool
		checked int  // the person's commits the car's last check saw
		always  bool // a commit even before a fast-forward made without gates
	}{
		{"one race fewer", maxLostRaces - 1, false, true, maxLostRaces - 1, false},
		{"at the bound", 100, false, true, maxLostRaces - 1, false},
		{"its file, one race fewer", maxLostRaces - 1, true, true, maxLostRaces - 1, false},
		{"its file, at the bound", 100, true, false, maxLostRaces - 1, false},
		{"every fast-forward", 100, false, false, maxLostRaces - 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, repo := trainRepo(t, "base.txt")
			ctx := context.Background()
			shared := filepath.Join(root, "shared.txt")
			lines := "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
			os.WriteFile(shared, []byte(lines), 0o644)
			gitIn(t, root, "add", ".")
			gitIn(t, root, "commit", "-qm", "shared")
			// The car changes the last line of shared.txt.
			tree := carTree(t, repo, "A", "shared.txt", strings.Replace(lines, "9\n", "nine\n", 1), "A")
			made := 0
			person := func() {
				made++
				if tc.overlap {
					data, _ := os.ReadFile(shared)
					os.WriteFile(shared, []byte(fmt.Sprintf("one %d\n", made)+strings.SplitN(string(data), "\n", 2)[1]), 0o644)
				} else {
					os.WriteFile(filepath.Join(root, fmt.Sprintf("person%d.txt", made)), []byte("p\n"), 0o644)
				}
				gitIn(t, root, "add", ".")
				gitIn(t, root, "commit", "-qm", fmt.Sprintf("person %d", made))
			}
			person() // before it boards: its first boarding is checked
			start := gitIn(t, root, "rev-parse", "main")

			var mu sync.Mutex
			var said []string
			var seen []int // the person's commits under each check
			tr := &train{repo: repo, land: &localBranch{repo: repo, branch: "main"},
				warn: func(err error) { mu.Lock(); said = append(said, err.Error()); mu.Unlock() }}
			tr.beforeAdvance = func(carried bool) {
				if made <= tc.moves && (!carried || tc.always) {
					person()
				}
			}
			c := &car{tree: tree,
				check: func(context.Context) (*loop.GateRun, error) {
					n := gitIn(t, tree.Dir, "rev-list", "--count", "--grep=^person", "HEAD")
					var k int
					fmt.Sscan(n, &k)
					mu.Lock()
					seen = append(seen, k-1)
					mu.Unlock()
					return &loop.GateRun{Evaluation: &gate.Evaluation{Passed: true}}, nil
				},
				record: func(context.Context, *loop.GateRun) error { t.Error("a failure recorded"); return nil }}
			r := tr.merge(ctx, c)

			mu.Lock()
			defer mu.Unlock()
			lost := min(tc.moves, maxLostRaces)
			if len(seen) != lost+1-boolInt(tc.moves >= maxLostRaces) || seen[len(seen)-1] != tc.checked {
				t.Errorf("checks saw %v of the person's commits; want %d checks, the last one seeing %d", seen, lost+1-boolInt(tc.moves >= maxLostRaces), tc.checked)
			}
			// Each lost race is said; the last, when the car leaves, by its error.
			if tc.always {
				lost = 2 * maxLostRaces // carried each time from the bound on, in vain
			}
			if n := lost - boolInt(!tc.merged); len(said) != n || !strings.Contains(said[n-1], fmt.Sprintf("(race %d lost", n)) {
				t.Errorf("said %q; want %d lines, the last one of race %d", said, n, n)
			}
			log := gitIn(t, root, "log", "--format=%s", "main")
			if !tc.merged {
				var busy *BusyError
				if !errors.As(r.err, &busy) || r.merged != "" {
					t.Fatalf("merge = %+v; want a BusyError", r)
				}
				if tc.always && (busy.Lost != 2*maxLostRaces || busy.Files != nil) {
					t.Errorf("%v: want it after %d races, none of its files changed", busy, 2*maxLostRaces)
				}
				if !tc.always && (busy.Lost != maxLostRaces || strings.Join(busy.Files, ",") != "shared.txt") {
					t.Errorf("%v: want it after %d races, naming shared.txt", busy, maxLostRaces)
				}
				if strings.Contains(log, "A\n") || !strings.Contains(r.err.Error(), "its work stays on "+tree.Branch) {
					t.Errorf("main's log:\n%s\nerror: %v", log, r.err)
				}
				return
			}
			if r.merged == "" || r.err != nil {
				t.Fatalf("merge = %+v (%v); want merged", r, r.err)
			}
			want := fmt.Sprintf("A\nperson %d\n", lost+1)
			if !strings.HasPrefix(log, want) || gitIn(t, root, "rev-parse", "main") == start {
				t.Errorf("main's log:\n%s\nwant it to start %q", log, want)
			}
			if got := gitIn(t, root, "show", "main:shared.txt"); !strings.HasSuffix(got, "nine") {
				t.Errorf("shared.txt on main:\n%s", got)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
