package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// remoteMachines makes a bare repository, the remote, and n clones of it,
// the machines, each with a workspace of the same issues (see
// claimWorkspace); orch[i] runs orchestrate on machine i. The commands
// leave no analytics refresh in the background: the tests are about the
// claims.
func remoteMachines(t testing.TB, n, issues int) (bare string, ws []string, orch []func(env []string, args ...string) (string, int)) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "remote.git")
	gitRun(t, "", "init", "-q", "--bare", bare)
	for i := 0; i < n; i++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		gitRun(t, "", "clone", "-q", bare, dir)
		w, o := claimWorkspaceEnv(t, dir, issues, []string{"ORCHESTRATE_NO_BACKGROUND=1"})
		ws, orch = append(ws, w), append(orch, o)
	}
	return bare, ws, orch
}

// remoteClaims reads the claims on the bare remote: by issue, its
// lease.
func remoteClaims(t testing.TB, bare string) map[string]claim.Lease {
	t.Helper()
	out := gitRun(t, bare, "for-each-ref", "--format=%(refname)", remote.Prefix)
	leases := map[string]claim.Lease{}
	for _, ref := range strings.Fields(out) {
		l := claim.Lease{Epoch: -1}
		for _, line := range strings.Split(gitRun(t, bare, "log", "-1", "--format=%B", ref), "\n") {
			name, v, _ := strings.Cut(line, ": ")
			switch name {
			case queue.FieldClaimedBy:
				l.Holder = v
			case queue.FieldLeaseEpoch:
				l.Epoch, _ = strconv.Atoi(v)
			}
		}
		leases[strings.TrimPrefix(ref, remote.Prefix)] = l
	}
	return leases
}

// Four machines (clones of one bare remote), two processes on each, claim
// --next --remote origin until nothing is ready: every issue is claimed
// exactly once, on the remote as its claimant was told, and in its
// machine's queue. The races run in rounds of up to 64 issues on a fresh
// remote; ORCHESTRATE_REMOTE_RACES sets how many claims in all (default
// 32).
func TestRemoteClaimRaces(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: races over git processes")
	}
	total := 32
	if v, err := strconv.Atoi(os.Getenv("ORCHESTRATE_REMOTE_RACES")); err == nil {
		total = v
	}
	const machines, procs = 4, 2
	start := time.Now()
	claims := 0
	for claims < total {
		n := min(total-claims, 64)
		bare, ws, orch := remoteMachines(t, machines, n)
		var mu sync.Mutex
		got := map[string]string{} // issue: "machine holder"
		var wg sync.WaitGroup
		for m := range machines {
			for p := range procs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						holder := fmt.Sprintf("m%dp%d-%d", m, p, i)
						out, code := orch[m]([]string{"ORCHESTRATE_LOCK_TIMEOUT=30m"}, "claim", "--next", "--as", holder, "--remote", "origin")
						if code == 10 {
							return
						}
						if code != 0 {
							t.Errorf("machine %d: claim --next --remote: exit %d: %s", m, code, out)
							return
						}
						// stdout's "claimed ID: …", among stderr's lines (a
						// wait for the lock).
						var id string
						for _, line := range strings.Split(out, "\n") {
							if rest, ok := strings.CutPrefix(line, "claimed "); ok {
								id, _, _ = strings.Cut(rest, ":")
							}
						}
						mu.Lock()
						if prev, ok := got[id]; ok {
							t.Errorf("%s claimed twice: by %s and %d %s", id, prev, m, holder)
						}
						got[id] = fmt.Sprintf("%d %s", m, holder)
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		checkRemoteClaims(t, bare, ws, got, n)
		claims += len(got)
	}
	t.Logf("%d claims by %d machines of %d processes in %v: 0 double claims, 0 lost", claims, machines, procs, time.Since(start))
}

// checkRemoteClaims checks the claims got (issue: "machine holder")
// against the remote and the machines' queues, of n issues.
func checkRemoteClaims(t *testing.T, bare string, ws []string, got map[string]string, n int) {
	t.Helper()
	onRemote := remoteClaims(t, bare)
	if len(got) != n || len(onRemote) != n {
		t.Errorf("%d issues claimed of %d (%d on the remote)", len(got), n, len(onRemote))
	}
	queues := make([]*queue.Queue, len(ws))
	for i, w := range ws {
		q, err := queue.Load(filepath.Join(w, "issue_queue.md"))
		if err != nil {
			t.Fatal(err)
		}
		queues[i] = q
	}
	for id, who := range got {
		m, name, _ := strings.Cut(who, " ")
		l := onRemote[id]
		if !strings.HasPrefix(l.Holder, name+"@") || l.Epoch != 1 {
			t.Errorf("%s: the remote says %+v; its claimant %s was told epoch 1", id, l, name)
		}
		i, _ := strconv.Atoi(m)
		if is := queues[i].Issue(id); is == nil || claim.Of(is).Holder != l.Holder {
			t.Errorf("%s: machine %d's queue does not mirror its claim by %s", id, i, l.Holder)
		}
	}
}

// The round trips to the remote, counted by a git on PATH that notes each
// command that talks to one (fetch, push, ls-remote) and runs the real
// git: claim --next is a fetch and a push; renew, release, and a claim of
// one issue this clone saw last as it is, a push each. The test fails if
// they grow.
func TestRemoteClaimRoundTrips(t *testing.T) {
	t.Parallel()
	_, _, orch := remoteMachines(t, 1, 2)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	script := fmt.Sprintf("#!/bin/sh\nfor a; do case $a in fetch|push|ls-remote) echo \"$a\" >> %q; break;; -C) ;; -*) ;; *) { [ \"$prev\" = -C ] || [ \"$prev\" = -c ]; } || break;; esac; prev=$a; done\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "ORCHESTRATE_NOW=2024-12-13T10:00:00Z"}
	for _, c := range []struct {
		args  []string
		trips []string
	}{
		{[]string{"claim", "--next", "--as", "a"}, []string{"fetch", "push"}},
		{[]string{"renew", "ISSUE-20241213-001", "--epoch", "1", "--as", "a", "--lease", "20m"}, []string{"push"}},
		{[]string{"release", "ISSUE-20241213-001", "--epoch", "1"}, []string{"push"}},
		{[]string{"claim", "ISSUE-20241213-001", "--as", "a"}, []string{"push"}},
		{[]string{"claim", "ISSUE-20241213-002", "--as", "b"}, []string{"push"}},
	} {
		os.Remove(log)
		if out, code := orch[0](env, append(c.args, "--remote", "origin")...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, out)
		}
		b, _ := os.ReadFile(log)
		if got := strings.Fields(string(b)); !slices.Equal(got, c.trips) {
			t.Errorf("%s: round trips to the remote %q; want %q", strings.Join(c.args, " "), got, c.trips)
		}
	}
}

// The holder's process is killed (SIGKILL) while it holds its claim on the
// remote: another clone of this machine takes it over at once, at the
// next epoch (the holder is a process here, and it is gone). A holder
// paused past its
// lease (SIGSTOP) is taken over the same way, and its renewal, once it
// goes on, is refused (exit 11). ORCHESTRATE_REMOTE_KILL_TRIALS sets the
// number of trials of each (default 1).
func TestRemoteKillTrials(t *testing.T) {
	t.Parallel()
	trials := 1
	if v, err := strconv.Atoi(os.Getenv("ORCHESTRATE_REMOTE_KILL_TRIALS")); err == nil {
		trials = v
	}
	bin := orchestrateBin(t)
	bare, ws, orch := remoteMachines(t, 2, 1)
	const id = "ISSUE-20241213-001"
	epoch := 0
	for trial := 0; trial < 2*trials; trial++ {
		pause := trial%2 == 1
		// The holder: a shell (the claim's process) that claims, says so,
		// and waits to be killed, or stops itself and then renews.
		script := fmt.Sprintf(`O=%q; W=%q
"$O" --dir "$W" claim %s --as "old@$(hostname)/$$" --lease 2s --remote origin || exit 3
echo claimed > claimed
if [ %t = true ]; then kill -STOP $$; "$O" --dir "$W" renew %s --epoch %d --as "old@$(hostname)/$$" --remote origin; echo $? > renewed; exit 0; fi
sleep 60
`, bin, ws[0], id, pause, id, epoch+1)
		dir := filepath.Dir(ws[0])
		os.Remove(filepath.Join(dir, "claimed"))
		os.Remove(filepath.Join(dir, "renewed"))
		old := exec.Command("sh", "-c", script)
		old.Dir = dir
		start := time.Now()
		if err := old.Start(); err != nil {
			t.Fatal(err)
		}
		for _, err := os.Stat(filepath.Join(dir, "claimed")); err != nil; _, err = os.Stat(filepath.Join(dir, "claimed")) {
			time.Sleep(10 * time.Millisecond)
		}
		claimed := time.Now()
		if pause {
			waitState(t, old.Process.Pid, 'T')
		} else {
			old.Process.Signal(syscall.SIGKILL)
			old.Wait()
		}
		epoch++
		if l := remoteClaims(t, bare)[id]; !strings.HasPrefix(l.Holder, "old@") || l.Epoch != epoch {
			t.Fatalf("trial %d: the remote says %+v; want old's claim at epoch %d", trial, l, epoch)
		}
		// While the lease of a stopped holder lasts (at least a second
		// from start: 2s, to the second), the other clone is refused; a
		// holder of this machine that was killed is taken over at once.
		if pause {
			if out, code := orch[1](nil, "claim", id, "--as", "new", "--remote", "origin"); code != 11 && time.Since(start) < time.Second {
				t.Errorf("trial %d: a claim while the lease lasts: exit %d: %s", trial, code, out)
			}
			time.Sleep(time.Until(claimed.Add(2100 * time.Millisecond)))
		}
		out, code := orch[1](nil, "claim", id, "--as", "new", "--remote", "origin")
		epoch++
		if code != 0 || !strings.Contains(out, fmt.Sprintf(" at epoch %d ", epoch)) {
			t.Fatalf("trial %d: the takeover: exit %d: %s; want epoch %d", trial, code, out, epoch)
		}
		if pause {
			syscall.Kill(old.Process.Pid, syscall.SIGCONT)
			old.Wait()
			if b, _ := os.ReadFile(filepath.Join(dir, "renewed")); strings.TrimSpace(string(b)) != "11" {
				t.Errorf("trial %d: the old holder's renewal after the takeover exited %q; want 11 (refused)", trial, b)
			}
		}
		if l := remoteClaims(t, bare)[id]; !strings.HasPrefix(l.Holder, "new@") || l.Epoch != epoch {
			t.Errorf("trial %d: the remote says %+v; want new's claim at epoch %d", trial, l, epoch)
		}
		if out, code := orch[1](nil, "release", id, "--remote", "origin"); code != 0 {
			t.Fatalf("trial %d: release: exit %d: %s", trial, code, out)
		}
	}
	t.Logf("%d trials: a killed holder's and a paused holder's claims taken over after their lease, at the next epoch; the paused one's renewal refused", 2*trials)
}
