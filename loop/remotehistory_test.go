package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// uniqueRows counts the rows of the workspaces' histories as one: a row
// that several hold counted as many times as the one that holds it most.
func uniqueRows(t *testing.T, ws ...Workspace) int64 {
	t.Helper()
	most := map[string]int{}
	for _, w := range ws {
		data, err := os.ReadFile(w.Path(HistoryFile))
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:] {
			n[line]++
			most[line] = max(most[line], n[line])
		}
	}
	var sum int64
	for _, n := range most {
		sum += int64(n)
	}
	return sum
}

// hostOf is the host name of the clone of w.
func hostOf(t *testing.T, w Workspace) string {
	t.Helper()
	return gitIn(t, w.Root(), "config", remote.HostConfig)
}

// sharedHistory is host's history on the remote: its pieces, concatenated.
func sharedHistory(t *testing.T, bare, host string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(gitIn(t, bare, "ls-tree", remote.QueueRef, remote.HistoryDir+"/"+host+"/"), "\n") {
		f := strings.Fields(line) // MODE blob ID\tNAME
		if len(f) != 4 {
			continue
		}
		blob := f[2]
		out, err := exec.Command("git", "-C", bare, "cat-file", "blob", blob).Output()
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

// Three machines each file an issue and sync, twice: every machine's
// history goes to the remote byte for byte, as its host's, rows that came
// with no change of the queue too, and every machine's page counts every
// row of all of them once: the row of the committed history that each
// clone holds, each machine's own.
func TestSyncQueueSharesHistories(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 3)
	for round := range 2 {
		for i, w := range ws {
			addIssue(t, w, ruleNow.Add(time.Duration(10*round+i+1)*time.Minute), fmt.Sprintf("machine %d, round %d", i, round))
			syncQueue(t, w, rs[i])
		}
	}
	// Rows and no change of the queue: the sync shares them.
	if err := ws[0].withLock(ctx, func() error {
		return ws[0].appendHistory(analytics.Event{Time: ruleNow.Add(time.Hour), Event: analytics.EventAbort})
	}); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		syncQueue(t, w, rs[i]) // the others' last rows, seen
		data, _ := os.ReadFile(w.Path(HistoryFile))
		if got := sharedHistory(t, bare, hostOf(t, w)); got != string(data) {
			t.Errorf("machine %d's history on the remote:\n%s\nwant its history.csv:\n%s", i, got, data)
		}
	}
	if got := strings.Fields(gitIn(t, bare, "ls-tree", "--name-only", remote.QueueRef+":"+remote.HistoryDir)); len(got) != 3 {
		t.Errorf("the remote holds the histories of %q, want 3", got)
	}
	want := uniqueRows(t, ws...)
	if want != 1+3*2+1 {
		t.Fatalf("the machines' histories hold %d rows, want 8", want)
	}
	for i, w := range ws {
		m, err := w.RefreshAnalyticsFrom(ctx, rs[i])
		if err != nil {
			t.Fatal(err)
		}
		if m.Rows != want || m.Duplicates != 2 || len(m.Sources) != 3 || m.Sources[0].Name != w.Path(HistoryFile) {
			t.Errorf("machine %d's page: %d rows, %d duplicates, from %+v; want %d rows, 2 duplicates, from its history.csv and 2 others", i, m.Rows, m.Duplicates, m.Sources, want)
		}
		for _, s := range m.Sources[1:] {
			if s.Name == "origin:"+remote.HistoryDir+"/"+hostOf(t, w) || !strings.HasPrefix(s.Name, "origin:history/") {
				t.Errorf("machine %d's page reads %s", i, s.Name)
			}
		}
		if page, _ := os.ReadFile(w.Path(AnalyticsFile)); !strings.Contains(string(page), fmt.Sprintf(", %d rows.", want)) {
			t.Errorf("machine %d's page does not say %d rows", i, want)
		}
	}
}

// The page keeps to the remote it was made with: current while neither
// history.csv nor this clone's view of the remote moved, made again with
// the others' histories when either did, by every refresh; made without a
// remote, it is this clone's alone again.
func TestPageKeepsToItsRemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, ws, rs := sharedClones(t, 2)
	for i, w := range ws {
		addIssue(t, w, ruleNow.Add(time.Duration(i+1)*time.Minute), fmt.Sprintf("machine %d", i))
		syncQueue(t, w, rs[i])
	}
	syncQueue(t, ws[0], rs[0])
	m, err := ws[0].RefreshAnalyticsFrom(ctx, rs[0])
	if err != nil || m.Rows != 3 {
		t.Fatalf("the page of both: %v, %v; want 3 rows", m, err)
	}
	if !ws[0].AnalyticsCurrent() || ws[0].pageRemote() != "origin" {
		t.Errorf("after the page of both: current %v, of the remote %q", ws[0].AnalyticsCurrent(), ws[0].pageRemote())
	}
	addIssue(t, ws[1], ruleNow.Add(time.Hour), "machine 1, later")
	syncQueue(t, ws[1], rs[1])
	if !ws[0].AnalyticsCurrent() {
		t.Errorf("stale before this clone saw the remote move")
	}
	syncQueue(t, ws[0], rs[0])
	if ws[0].AnalyticsCurrent() {
		t.Errorf("current after this clone saw another machine's rows")
	}
	if wrote, err := ws[0].RefreshAnalytics(ctx, false); err != nil || !wrote {
		t.Fatalf("RefreshAnalytics: %v, %v", wrote, err)
	}
	if page, _ := os.ReadFile(ws[0].Path(AnalyticsFile)); !strings.Contains(string(page), ", 4 rows.") {
		t.Errorf("the page made again does not count the other machine's new row")
	}
	if m, err := ws[0].RefreshAnalyticsFrom(ctx, nil); err != nil || m.Rows != 2 || ws[0].pageRemote() != "" {
		t.Errorf("the page of this clone alone: %+v, %v, of the remote %q; want 2 rows, no remote", m, err, ws[0].pageRemote())
	}
	if !ws[0].AnalyticsCurrent() {
		t.Errorf("the page of this clone alone: stale")
	}
}

// A clone copied with its config has the host name of the one it was
// copied from: the copy's sync, its last sync the same as the original's,
// shares the copy's history under that name (all the original's rows are
// in it); the original's next sync finds its history written by another,
// takes a new name, says so, and shares its own under it. No row is lost,
// none is counted twice.
func TestCopiedClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare, ws, rs := sharedClones(t, 2)
	for i, w := range ws {
		addIssue(t, w, ruleNow.Add(time.Duration(i+1)*time.Minute), fmt.Sprintf("machine %d", i))
		syncQueue(t, w, rs[i])
	}
	copyDir := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", ws[1].Root(), copyDir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	copied := Workspace{Dir: filepath.Join(copyDir, DefaultDir)}
	rc, _ := remote.New(copyDir, "origin")
	host := hostOf(t, ws[1])
	addIssue(t, copied, ruleNow.Add(time.Hour), "the copy")
	syncQueue(t, copied, rc)
	var mu sync.Mutex
	var said []string
	ws[1].Notify = func(msg string) { mu.Lock(); said = append(said, msg); mu.Unlock() }
	addIssue(t, ws[1], ruleNow.Add(2*time.Hour), "the original")
	syncQueue(t, ws[1], rs[1])
	renamed := hostOf(t, ws[1])
	if renamed == host || len(said) != 1 || said[0] != fmt.Sprintf("warning: history/%s on origin: another clone has the host name %s: this clone is %s from now on (git config orchestrate.host)", host, host, renamed) {
		t.Errorf("the original: host %s (was %s), said %q", renamed, host, said)
	}
	copyData, _ := os.ReadFile(copied.Path(HistoryFile))
	origData, _ := os.ReadFile(ws[1].Path(HistoryFile))
	if sharedHistory(t, bare, host) != string(copyData) || sharedHistory(t, bare, renamed) != string(origData) {
		t.Errorf("the copy's and the original's histories are not each under its name")
	}
	syncQueue(t, ws[0], rs[0])
	m, err := ws[0].RefreshAnalyticsFrom(ctx, rs[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := uniqueRows(t, ws[0], ws[1], copied); m.Rows != want || want != 5 || len(m.Sources) != 3 {
		t.Errorf("the page: %d rows from %d histories; want %d (5) from 3: its own, the copy's, the original's", m.Rows, len(m.Sources), want)
	}
}

// A history that cannot be shared is a warning: the queue is synced.
func TestSyncQueueHistoryUnshared(t *testing.T) {
	t.Parallel()
	bare, ws, rs := sharedClones(t, 1)
	gitIn(t, ws[0].Root(), "config", remote.HostConfig, "no/slash")
	var said []string
	ws[0].Notify = func(msg string) { said = append(said, msg) }
	addIssue(t, ws[0], ruleNow.Add(time.Minute), "machine 0")
	syncQueue(t, ws[0], rs[0])
	if len(said) != 1 || !strings.HasPrefix(said[0], `warning: history.csv is not shared on origin: git config orchestrate.host "no/slash": want a file name`) {
		t.Errorf("said %q", said)
	}
	if q := gitIn(t, bare, "show", remote.QueueRef+":"+remote.QueueFile); !strings.Contains(q, "machine 0") {
		t.Errorf("the queue was not synced:\n%s", q)
	}
	if out := gitIn(t, bare, "ls-tree", remote.QueueRef); strings.Contains(out, remote.HistoryDir) {
		t.Errorf("a history shared under no name:\n%s", out)
	}
}
