package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// forgeRecord writes in the repository dir a commit of msg on tree, with
// parents, committed at date (another machine's clock), and returns it.
func forgeRecord(t *testing.T, dir, tree, msg string, date time.Time, parents ...string) string {
	t.Helper()
	args := []string{"-C", dir, "commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	d := fmt.Sprintf("@%d +0000", date.Unix())
	return gitInput(t, msg, []string{"GIT_AUTHOR_DATE=" + d, "GIT_COMMITTER_DATE=" + d}, args...)
}

// gitInput runs git with stdin and the environment env added, as t@t,
// and returns its stdout.
func gitInput(t *testing.T, stdin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), append([]string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}, env...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// A claim ref on the remote that holds what orchestrate does not write
// (a message without its fields, a commit with a parent or with files, a
// tree, a blob, a tag) is neither free nor held: claim --next skips its
// issue and says so on one line; claim, renew and release of that issue
// fail with one line (exit 1) and change nothing, neither the queue nor
// the ref. Once deleted as the line says, the issue is claimed.
func TestRemoteClaimBadRecords(t *testing.T) {
	t.Parallel()
	bare, ws, orch := remoteMachines(t, 1, 2)
	const id = "ISSUE-20241213-001"
	ref := remote.Ref(id)
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	env := []string{"ORCHESTRATE_NOW=" + now.Format(time.RFC3339)}
	held := remote.Message(id, claim.Lease{Holder: "b1@elsewhere/1", Since: now, Epoch: 1, Until: now.Add(time.Hour)})
	empty := gitRun(t, bare, "mktree")
	good := forgeRecord(t, bare, empty, held, now)
	blob := gitInput(t, held, nil, "-C", bare, "hash-object", "-w", "--stdin")
	files := gitInput(t, "100644 blob "+blob+"\tclaim\n", nil, "-C", bare, "mktree")
	gitInput(t, "", nil, "-C", bare, "tag", "-a", "-m", held, "a-tag", good)
	queueFile := filepath.Join(ws[0], "issue_queue.md")
	for i, c := range []struct{ name, obj, what string }{
		{"a hand-made commit", forgeRecord(t, bare, empty, "hand made\n", now), "no Lease-Epoch line"},
		{"an epoch not a number", forgeRecord(t, bare, empty, strings.Replace(held, "Lease-Epoch: 1", "Lease-Epoch: one", 1), now), `Lease-Epoch "one" is not a non-negative integer`},
		{"no Lease-Until", forgeRecord(t, bare, empty, held[:strings.Index(held, "Lease-Until")], now), "no Lease-Until line"},
		{"a parent", forgeRecord(t, bare, empty, held, now, good), "a commit with a parent; a claim has none"},
		{"files", forgeRecord(t, bare, files, held, now), "a commit with files; a claim's tree is empty"},
		{"a tree", empty, "a tree, not a commit"},
		{"a blob", blob, "a blob, not a commit"},
		{"a tag", gitRun(t, bare, "rev-parse", "a-tag"), "a tag, not a commit"},
	} {
		gitRun(t, bare, "update-ref", ref, c.obj)
		line := "orchestrate: " + ref + " on origin: not a claim orchestrate wrote (" + c.what + "); %s: delete it with git push origin --delete " + ref
		out, code := orch[0](env, "claim", "--next", "--as", fmt.Sprintf("a%d", i), "--remote", "origin")
		if code != 0 || !strings.Contains(out, fmt.Sprintf(line, "skipped")+"\n") || !strings.Contains(out, "claimed ISSUE-20241213-002:") {
			t.Errorf("%s: claim --next: exit %d:\n%s\nwant ISSUE-20241213-002 claimed, and the line\n%s", c.name, code, out, fmt.Sprintf(line, "skipped"))
		}
		if out, code := orch[0](env, "release", "ISSUE-20241213-002", "--remote", "origin"); code != 0 {
			t.Fatalf("%s: release: exit %d: %s", c.name, code, out)
		}
		before, err := os.ReadFile(queueFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"claim", id, "--as", "a"},
			{"claim", id, "--as", "a", "--force"},
			{"renew", id, "--epoch", "1", "--as", "b1"},
			{"release", id},
			{"release", id, "--epoch", "1"},
		} {
			out, code := orch[0](env, append(args, "--remote", "origin")...)
			if want := fmt.Sprintf(line, "nothing changed") + "\n"; code != 1 || out != want {
				t.Errorf("%s: %s: exit %d:\n%s\nwant exit 1 and\n%s", c.name, strings.Join(args, " "), code, out, want)
			}
		}
		if after, _ := os.ReadFile(queueFile); string(after) != string(before) {
			t.Errorf("%s: the queue changed", c.name)
		}
		if got := gitRun(t, bare, "rev-parse", ref); got != c.obj {
			t.Errorf("%s: the ref moved to %s", c.name, got)
		}
	}
	// The line's way out: the ref deleted, the issue is claimed.
	gitRun(t, filepath.Dir(ws[0]), "push", "-q", "origin", "--delete", ref)
	if out, code := orch[0](env, "claim", id, "--as", "a", "--remote", "origin"); code != 0 || !strings.Contains(out, "claimed "+id+": ") {
		t.Errorf("claim after the ref was deleted: exit %d: %s", code, out)
	}
}

// The clocks of two machines further apart than the margin (10 s): a
// record on the remote written (its committer time, or its Claimed-At)
// ahead of this machine's clock stops claim ID, with one line and exit 1,
// and nothing changed; claim --next skips its issue, says so on that line,
// and claims the next; at the margin or a second under it, the claim is
// made. A renewal and a release go on, and say so. A
// release that replaced a record this machine wrote ahead of the
// releaser's clock is seen here as this machine's clock ahead.
func TestRemoteClaimClockSkew(t *testing.T) {
	t.Parallel()
	bare, ws, orch := remoteMachines(t, 2, 2)
	const id1, id2 = "ISSUE-20241213-001", "ISSUE-20241213-002"
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	env := []string{"ORCHESTRATE_NOW=" + now.Format(time.RFC3339)}
	empty := gitRun(t, bare, "mktree")
	clone := filepath.Dir(ws[0])
	queueFile := filepath.Join(ws[0], "issue_queue.md")
	skewLine := func(id string, s int) string {
		return fmt.Sprintf("orchestrate: clock skew: the claim of %s on origin was written %ds ahead of this machine's clock (more than the margin of 10s); set the clocks right (NTP)\n", id, s)
	}
	// put makes the remote's claim of id2 a record of holder's, claimed
	// at since, written at written: this clone saw no record before it.
	put := func(holder string, since, written time.Time) {
		t.Helper()
		gitRun(t, clone, "update-ref", "-d", "refs/orchestrate/remote/origin/claims/"+id2)
		msg := remote.Message(id2, claim.Lease{Holder: holder, Since: since, Epoch: 1, Until: since.Add(time.Hour)})
		gitRun(t, bare, "update-ref", remote.Ref(id2), forgeRecord(t, bare, empty, msg, written))
	}
	for i, c := range []struct {
		name           string
		since, written time.Duration // after now
		ahead          int           // the skew said, 0: none
	}{
		{"written a second under the margin ahead", 0, 9 * time.Second, 0},
		{"written at the margin ahead", 0, 10 * time.Second, 0},
		{"written a second over the margin ahead", 0, 11 * time.Second, 11},
		{"claimed a second over the margin ahead", 11 * time.Second, 0, 11},
		{"written 95s ahead", 0, 95 * time.Second, 95},
	} {
		put("b1@elsewhere/1", now.Add(c.since), now.Add(c.written))
		out, code := orch[0](env, "claim", "--next", "--as", fmt.Sprintf("a%d", i), "--remote", "origin")
		if c.ahead == 0 {
			if code != 0 || !strings.Contains(out, "claimed "+id1+":") {
				t.Errorf("%s: claim --next: exit %d: %s; want %s claimed", c.name, code, out, id1)
			}
			if out, code := orch[0](env, "release", id1, "--remote", "origin"); code != 0 {
				t.Fatalf("%s: release: exit %d: %s", c.name, code, out)
			}
			continue
		}
		before, _ := os.ReadFile(queueFile)
		if out, code := orch[0](env, "claim", id2, "--as", "p", "--force", "--remote", "origin"); code != 1 || out != skewLine(id2, c.ahead) {
			t.Errorf("%s: claim --force: exit %d:\n%s", c.name, code, out)
		}
		if after, _ := os.ReadFile(queueFile); string(after) != string(before) {
			t.Errorf("%s: claim --force: the queue changed", c.name)
		}
		// claim --next skips the issue, says so, and claims the next.
		want := strings.TrimSuffix(skewLine(id2, c.ahead), "\n") + "; " + remote.Ref(id2) + " skipped\n"
		if code != 0 || !strings.HasPrefix(out, want) || !strings.Contains(out, "claimed "+id1+":") {
			t.Errorf("%s: claim --next: exit %d:\n%s\nwant exit 0, %s claimed, after\n%s", c.name, code, out, id1, want)
		}
		if got := remoteClaims(t, bare); len(got) != 2 || got[id2].Holder != "b1@elsewhere/1" {
			t.Errorf("%s: the remote's claim of %s changed: %+v", c.name, id2, got)
		}
		if out, code := orch[0](env, "release", id1, "--remote", "origin"); code != 0 {
			t.Fatalf("%s: release: exit %d: %s", c.name, code, out)
		}
	}

	// This process's own claim, written 95s ahead: its renewal goes on,
	// and says so; so does a release.
	holder := claim.Holder("a1", os.Getpid())
	put(holder, now, now.Add(95*time.Second))
	out, code := orch[0](env, "renew", id2, "--epoch", "1", "--as", "a1", "--remote", "origin")
	if code != 0 || !strings.HasPrefix(out, "orchestrate: warning: "+strings.TrimPrefix(skewLine(id2, 95), "orchestrate: ")) || !strings.Contains(out, "\nrenewed "+id2+": ") {
		t.Errorf("renew of a record written ahead: exit %d:\n%s", code, out)
	}
	put(holder, now, now.Add(95*time.Second))
	if out, code := orch[0](env, "release", id2, "--remote", "origin"); code != 0 || !strings.Contains(out, "warning: clock skew: ") || !strings.Contains(out, "released "+id2+": ") {
		t.Errorf("release of a record written ahead: exit %d:\n%s", code, out)
	}

	// Machine 0's clock 95s ahead: machine 1 sees its claim ahead, and
	// releases it; machine 0 sees the release, written before its own
	// record, which it replaced.
	ahead := []string{"ORCHESTRATE_NOW=" + now.Add(95*time.Second).Format(time.RFC3339)}
	if out, code := orch[0](ahead, "claim", id1, "--as", "a1", "--remote", "origin"); code != 0 {
		t.Fatalf("claim 95s ahead: exit %d: %s", code, out)
	}
	if out, code := orch[1](env, "release", id1, "--remote", "origin"); code != 0 || !strings.HasPrefix(out, "orchestrate: warning: "+strings.TrimPrefix(skewLine(id1, 95), "orchestrate: ")) {
		t.Errorf("machine 1's release: exit %d:\n%s", code, out)
	}
	want := "orchestrate: clock skew: the claim of " + id1 + " on origin was written 95s before the one this machine wrote, which it replaced: this machine's clock is ahead (more than the margin of 10s); set the clocks right (NTP)\n"
	if out, code := orch[0](ahead, "claim", "--next", "--as", "a2", "--remote", "origin"); code != 1 || out != want {
		t.Errorf("machine 0's claim --next: exit %d:\n%s\nwant exit 1 and\n%s", code, out, want)
	}
}
