package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// smallPieces makes the pieces of the histories small for the test, so
// that a few rows make several.
func smallPieces(t *testing.T, size int64) {
	old := pieceSize
	pieceSize = size
	t.Cleanup(func() { pieceSize = old })
}

const historyHeader = "time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n"

// appendRows appends n rows to the history at path, named after who.
func appendRows(t *testing.T, path, who string, from, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := f.Stat(); fi.Size() == 0 {
		f.WriteString(historyHeader)
	}
	for i := from; i < from+n; i++ {
		fmt.Fprintf(f, "2026-01-02T10:%02d:%02d.000Z,run-%s,1,gate,,unit,,pass,0,%d,,\n", i/60%60, i%60, who, i)
	}
}

// share syncs the queue of r with the remote's as SyncQueue does, with
// host's history at path: it returns the version it leaves on the remote.
func share(t *testing.T, r *Remote, host, path string) Queue {
	t.Helper()
	ctx := context.Background()
	for range 10 {
		synced, err := r.SyncedQueue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := r.FetchQueue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		own, err := r.OwnHistory(ctx, synced, theirs, host, path)
		if err != nil {
			t.Fatal(err)
		}
		if theirs.Sha != "" && !own.Changed {
			if err := r.Synced(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			return theirs
		}
		q, err := r.PushQueue(ctx, theirs, []byte("# the queue\n"), own, "orchestrate: the queue, from "+host)
		if errors.Is(err, ErrLost) {
			continue
		}
		if err == nil {
			err = r.Synced(ctx, q) // as SyncQueue notes it, once its file holds q
		}
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	t.Fatal("every push lost")
	return Queue{}
}

// remotePieces lists host's pieces on the remote's queue: name, blob, and
// the blob's bytes.
func remotePieces(t *testing.T, bare, host string) (names, blobs []string, data []string) {
	t.Helper()
	if exec.Command("git", "-C", bare, "rev-parse", "-q", "--verify", QueueRef).Run() != nil {
		return nil, nil, nil
	}
	out := gitIn(t, bare, "ls-tree", QueueRef, HistoryDir+"/"+host+"/")
	for _, line := range strings.Split(out, "\n") {
		meta, path, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		f := strings.Fields(meta)
		names = append(names, filepath.Base(path))
		blobs = append(blobs, f[2])
		data = append(data, catBlob(t, bare, f[2]))
	}
	return names, blobs, data
}

func catBlob(t *testing.T, dir, blob string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "cat-file", "blob", blob).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// Three machines each share their history, append to it and share again,
// one after the other: the remote's queue holds a directory per host,
// whose pieces, concatenated, are that host's history.csv byte for byte;
// each piece is whole rows, and but the last reached the piece size. A
// machine's sync writes its own directory only: the others' trees are
// left as they were, and an append rewrites only the piece it lands in.
func TestHistoriesShared(t *testing.T) {
	smallPieces(t, 200)
	bare, m := machines(t, 3)
	hosts := []string{"m0-host", "m1-host", "m2-host"}
	paths := make([]string, 3)
	for i := range m {
		paths[i] = filepath.Join(t.TempDir(), "history.csv")
	}
	rows := []int{0, 0, 0}
	for round, n := range []int{3, 10, 1, 7} {
		for i := range m {
			appendRows(t, paths[i], hosts[i], rows[i], n+i)
			rows[i] += n + i
			var before []string
			_, before, _ = remotePieces(t, bare, hosts[i])
			others := map[string]string{}
			for j, h := range hosts {
				if j != i && round > 0 {
					others[h] = gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/"+h)
				}
			}
			share(t, m[i], hosts[i], paths[i])
			for h, tree := range others {
				if got := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/"+h); got != tree {
					t.Errorf("round %d: %s's sync changed %s's history: %s, was %s", round, hosts[i], h, got, tree)
				}
			}
			names, blobs, data := remotePieces(t, bare, hosts[i])
			checkPieces(t, paths[i], names, data)
			// The pieces that had reached their size are the same blobs.
			for k := 0; k+1 < len(before) && k < len(blobs); k++ {
				if blobs[k] != before[k] {
					t.Errorf("round %d: %s's piece %s rewritten by an append", round, hosts[i], names[k])
				}
			}
		}
	}
	if got := gitIn(t, bare, "ls-tree", "--name-only", QueueRef+":"+HistoryDir); got != strings.Join(hosts, "\n") {
		t.Errorf("the remote's histories: %q, want %q", got, hosts)
	}
	if got := gitIn(t, bare, "show", QueueRef+":"+QueueFile); got != "# the queue" {
		t.Errorf("the queue: %q", got)
	}
}

// checkPieces checks that the pieces are the history at path, cut as
// they are to be.
func checkPieces(t *testing.T, path string, names, data []string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(data, ""); got != string(want) {
		t.Errorf("the pieces of %s are not the file:\n%q\nwant\n%q", path, got, want)
	}
	for k, d := range data {
		if names[k] != fmt.Sprintf("%06d.csv", k) {
			t.Errorf("piece %d is named %s", k, names[k])
		}
		if !strings.HasSuffix(d, "\n") || k+1 < len(data) && (int64(len(d)) < pieceSize || int64(strings.LastIndexByte(d[:len(d)-1], '\n')+1) >= pieceSize) {
			t.Errorf("piece %s (%d bytes, piece size %d) does not end at the first row's end past the piece size", names[k], len(d), pieceSize)
		}
	}
}

// countGit puts on PATH a git that notes the command of each call, and
// runs the real one; calls returns the commands noted so far, a line
// each.
func countGit(t *testing.T) (calls func() string) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := fmt.Sprintf("#!/bin/sh\nprev=\nfor a; do case $a in -C) ;; -*) ;; *) { [ \"$prev\" = -C ] || [ \"$prev\" = -c ]; } || { echo \"$a\" >> %q; break; };; esac; prev=$a; done\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() string {
		b, _ := os.ReadFile(log)
		return string(b)
	}
}

// A sync when the history did not change runs no git but the listing of
// the version's histories, writes nothing and changes nothing; a row torn at the end (an append in progress, a crash) is not
// shared until it is whole.
func TestHistoryUnchanged(t *testing.T) {
	smallPieces(t, 100)
	ctx := context.Background()
	bare, m := machines(t, 1)
	path := filepath.Join(t.TempDir(), "history.csv")
	appendRows(t, path, "a", 0, 5)
	q := share(t, m[0], "a", path)
	objects := gitIn(t, m[0].dir, "count-objects")
	synced, _ := m[0].SyncedQueue(ctx)
	calls := countGit(t)
	own, err := m[0].OwnHistory(ctx, synced, q, "a", path)
	if err != nil {
		t.Fatal(err)
	}
	if own.Changed || own.Tree == "" {
		t.Errorf("unchanged history: %+v", own)
	}
	if got := calls(); got != "ls-tree\n" {
		t.Errorf("an unchanged history: git %q; want its listing alone", got)
	}
	if got := gitIn(t, m[0].dir, "count-objects"); got != objects {
		t.Errorf("an unchanged history wrote objects: %s, was %s", got, objects)
	}
	whole, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("2026-01-02T11:00:00.000Z,run-a,1,ga")
	f.Close()
	own, err = m[0].OwnHistory(ctx, synced, q, "a", path)
	if err != nil || own.Changed {
		t.Errorf("a torn last row changed the history shared: %+v, %v", own, err)
	}
	os.WriteFile(path, append(whole, "2026-01-02T11:00:00.000Z,run-a,1,gate,,unit,,pass,0,1,,\n"...), 0o644)
	share(t, m[0], "a", path)
	names, _, data := remotePieces(t, bare, "a")
	checkPieces(t, path, names, data)
}

// A history.csv replaced by another (moved away to start a new one) is
// shared whole again, longer than the one shared or shorter; a missing
// one leaves what was shared.
func TestHistoryReplaced(t *testing.T) {
	smallPieces(t, 100)
	bare, m := machines(t, 1)
	path := filepath.Join(t.TempDir(), "history.csv")
	appendRows(t, path, "old", 0, 20)
	share(t, m[0], "a", path)
	for _, n := range []int{30, 2} {
		os.Remove(path)
		appendRows(t, path, fmt.Sprint("new", n), 0, n)
		share(t, m[0], "a", path)
		names, _, data := remotePieces(t, bare, "a")
		checkPieces(t, path, names, data)
	}
	tree := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/a")
	os.Remove(path)
	share(t, m[0], "a", path)
	if got := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/a"); got != tree {
		t.Errorf("a missing history.csv changed the one shared")
	}
}

// Two clones with one host name: the second to sync finds a history under
// its name that its last sync did not leave there, and is told so, as is
// a clone that never synced; neither overwrites the other's.
func TestHostTaken(t *testing.T) {
	ctx := context.Background()
	bare, m := machines(t, 2)
	p0, p1 := filepath.Join(t.TempDir(), "h.csv"), filepath.Join(t.TempDir(), "h.csv")
	appendRows(t, p0, "zero", 0, 3)
	appendRows(t, p1, "one", 0, 4)
	share(t, m[0], "same", p0)
	tree := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/same")
	theirs, err := m[1].FetchQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	synced, _ := m[1].SyncedQueue(ctx)
	if _, err := m[1].OwnHistory(ctx, synced, theirs, "same", p1); !errors.Is(err, ErrHostTaken) {
		t.Fatalf("a clone that never synced, its host name taken: %v", err)
	} else if want := "history/same on origin: written by another clone with the same host name"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	share(t, m[1], "other", p1)
	appendRows(t, p0, "zero", 3, 1)
	share(t, m[0], "same", p0) // its own, as it left it
	appendRows(t, p1, "one", 4, 1)
	theirs, _ = m[1].FetchQueue(ctx)
	synced, _ = m[1].SyncedQueue(ctx)
	if _, err := m[1].OwnHistory(ctx, synced, theirs, "same", p1); !errors.Is(err, ErrHostTaken) {
		t.Errorf("a clone that synced, its host name taken: %v", err)
	}
	if got := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir+"/same"); got == tree {
		t.Errorf("m0's second sync did not share its history")
	}
}

// Host names: none until one is given; a given one is the machine's
// hostname and random letters, and stays; one that cannot name a file is
// refused.
func TestHost(t *testing.T) {
	ctx := context.Background()
	_, m := machines(t, 1)
	if h, err := m[0].Host(ctx); h != "" || err != nil {
		t.Fatalf("Host of a new clone: %q, %v", h, err)
	}
	h, err := m[0].NewHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^`+regexp.QuoteMeta(hostBase())+`-[0-9a-f]{8}$`).MatchString(h) || CheckHost(h) != nil {
		t.Errorf("NewHost: %q", h)
	}
	if got, err := m[0].Host(ctx); got != h || err != nil {
		t.Errorf("Host after NewHost: %q, %v; want %q", got, err, h)
	}
	if got := gitIn(t, m[0].dir, "config", HostConfig); got != h {
		t.Errorf("git config %s: %q", HostConfig, got)
	}
	gitIn(t, m[0].dir, "config", HostConfig, "a/b")
	if _, err := m[0].Host(ctx); err == nil || err.Error() != `git config orchestrate.host "a/b": want a file name: letters, digits, ., _ and -, at most 100` {
		t.Errorf("a host name with a slash: %v", err)
	}
	for name, ok := range map[string]bool{"ci-runner.7_a-1f2e3d4c": true, "": false, ".hidden": false, "..": false, "a b": false,
		"a/b": false, strings.Repeat("x", 100): true, strings.Repeat("x", 101): false, "é": false} {
		if err := CheckHost(name); (err == nil) != ok {
			t.Errorf("CheckHost(%q) = %v", name, err)
		}
	}
}

// This clone's view of the remote's histories, after a fetch: every host,
// in order, each read back whole through one git process, piece after
// piece. A push with no host of its own keeps the histories as they were.
func TestSeenHistories(t *testing.T) {
	smallPieces(t, 64)
	ctx := context.Background()
	bare, m := machines(t, 3)
	want := map[string]string{}
	for i, host := range []string{"b-host", "a-host"} {
		path := filepath.Join(t.TempDir(), "history.csv")
		appendRows(t, path, host, 0, 5+i*3)
		share(t, m[i], host, path)
		data, _ := os.ReadFile(path)
		want[host] = string(data)
	}
	hs, err := m[2].SeenHistories(ctx)
	if err != nil || hs.Sha != "" || len(hs.Hosts) != 0 {
		t.Errorf("before a fetch: %+v, %v", hs, err)
	}
	theirs, err := m[2].FetchQueue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir)
	if _, err := m[2].PushQueue(ctx, theirs, []byte("# changed\n"), Own{}, "test"); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, bare, "rev-parse", QueueRef+":"+HistoryDir); got != before {
		t.Errorf("a push with no history of its own changed the histories")
	}
	hs, err = m[2].SeenHistories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	if len(hs.Hosts) != 2 || hs.Hosts[0].Host != "a-host" || hs.Hosts[1].Host != "b-host" || len(hs.Hosts[0].Pieces) < 3 {
		t.Fatalf("hosts: %+v", hs.Hosts)
	}
	for _, h := range hs.Hosts {
		got, err := io.ReadAll(hs.Reader(h))
		if err != nil || string(got) != want[h.Host] {
			t.Errorf("%s read back: %q, %v; want %q", h.Host, got, err, want[h.Host])
		}
	}
	if err := hs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
