package main

import (
	"bytes"
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
)

// claimWorkspace makes a workspace with n issues, and returns a function
// that runs orchestrate in it.
func claimWorkspace(t testing.TB, dir string, n int) (ws string, orch func(env []string, args ...string) (string, int)) {
	return claimWorkspaceEnv(t, dir, n, nil)
}

// claimWorkspaceEnv is claimWorkspace whose commands all have base in
// their environment.
func claimWorkspaceEnv(t testing.TB, dir string, n int, base []string) (ws string, orch func(env []string, args ...string) (string, int)) {
	bin := orchestrateBin(t)
	ws = filepath.Join(dir, ".orchestrator")
	cleanupAnalytics(t, ws)
	orch = func(env []string, args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(append(os.Environ(), base...), env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
		}
		return string(out), code
	}
	if out, code := orch(nil, "init"); code != 0 {
		t.Fatal(out)
	}
	var b strings.Builder
	b.WriteString("# Issue Queue\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "\n## ISSUE-20241213-%03d\n\n| Field | Value |\n|-------|-------|\n| Status | pending |\n| Priority | medium |\n\n### Summary\n\nissue %d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(ws, "issue_queue.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, orch
}

// claimRaces runs procs processes that each claim --next until nothing is
// ready, and returns every claim they were told they got.
func claimRaces(t testing.TB, orch func([]string, ...string) (string, int), procs int) []string {
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; ; i++ {
				// A fresh holder for each claim: claim --next would give a
				// holder back what it holds.
				// A machine that is busy enough makes a waiter lose the
				// lock for minutes: the races are about who gets what.
				out, code := orch([]string{"ORCHESTRATE_LOCK_TIMEOUT=30m"}, "claim", "--next", "--as", fmt.Sprintf("p%d-%d", p, i), "--json")
				if code == 10 {
					return
				}
				if code != 0 {
					t.Errorf("claim --next: exit %d: %s", code, out)
					return
				}
				mu.Lock()
				got = append(got, out)
				mu.Unlock()
			}
		}(p)
	}
	wg.Wait()
	return got
}

// Many processes claim at once: every issue is claimed exactly once, the
// claim each process was told of is the one in the queue, and nothing is
// lost. The races run in rounds on a fresh queue of up to 256 issues;
// ORCHESTRATE_CLAIM_RACES sets how many claims in all (default 64).
func TestClaimRaces(t *testing.T) {
	t.Parallel()
	total := 64
	if v, err := strconv.Atoi(os.Getenv("ORCHESTRATE_CLAIM_RACES")); err == nil {
		total = v
	}
	procs := 32
	if testing.Short() {
		total, procs = 16, 8
	}
	start := time.Now()
	claims := 0
	for round := 0; claims < total; round++ {
		n := min(total-claims, 256)
		ws, orch := claimWorkspace(t, t.TempDir(), n)
		got := claimRaces(t, orch, procs)
		checkClaims(t, ws, got, n)
		claims += len(got)
	}
	t.Logf("%d claims by %d processes in %v: 0 double claims, 0 lost", claims, procs, time.Since(start))
}

// checkClaims checks the claims got (claim --next --json outputs) against
// the queue of n issues in ws.
func checkClaims(t *testing.T, ws string, got []string, n int) {
	t.Helper()
	q, err := queue.Load(filepath.Join(ws, "issue_queue.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, out := range got {
		var id, holder string
		for _, line := range strings.Split(out, "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, `"id": "`); ok {
				id = strings.TrimSuffix(v, `",`)
			}
			if v, ok := strings.CutPrefix(line, `"holder": "`); ok {
				holder = strings.TrimSuffix(v, `",`)
			}
		}
		if prev, ok := seen[id]; ok {
			t.Errorf("%s claimed twice: by %s and %s", id, prev, holder)
		}
		seen[id] = holder
		is := q.Issue(id)
		if is == nil {
			t.Fatalf("claimed %q, not in the queue", id)
		}
		if l := claim.Of(is); l.Holder != holder || l.Epoch != 1 {
			t.Errorf("%s: the queue says %+v, its claimant was told %s at epoch 1", id, l, holder)
		}
	}
	if len(seen) != n || len(q.Issues) != n {
		t.Errorf("%d issues claimed of %d (%d in the queue)", len(seen), n, len(q.Issues))
	}
}

// A holder paused past its lease (SIGSTOP) is taken over; once it goes on
// (SIGCONT), every change it makes with its old epoch is refused, and the
// queue keeps its successor's.
func TestPausedHolderFenced(t *testing.T) {
	t.Parallel()
	trials := 5
	if testing.Short() {
		trials = 2
	}
	ws, orch := claimWorkspace(t, t.TempDir(), 1)
	bin := orchestrateBin(t)
	dir := filepath.Dir(ws)
	refused := 0
	const writes = 4
	for trial := 0; trial < trials; trial++ {
		// The old holder: a shell that claims (its process is the holder,
		// named whole), stops itself, and, continued, tries its writes with
		// its claim.
		script := fmt.Sprintf(`set -u
O=%q; W=%q
out=$("$O" --dir "$W" claim ISSUE-20241213-001 --as "old@$(hostname)/$$" --lease 1s) || exit 3
epoch=$(echo "$out" | sed -n 's/.* at epoch \([0-9]*\) .*/\1/p')
echo "$epoch" > epoch
kill -STOP $$
export ORCHESTRATE_CLAIM=ISSUE-20241213-001:$epoch
"$O" --dir "$W" issue set ISSUE-20241213-001 Owner=old; echo $? >> codes
echo FAIL | "$O" --dir "$W" record ISSUE-20241213-001; echo $? >> codes
"$O" --dir "$W" release ISSUE-20241213-001 --epoch "$epoch"; echo $? >> codes
"$O" --dir "$W" issue resolve ISSUE-20241213-001; echo $? >> codes
`, bin, ws)
		os.Remove(filepath.Join(dir, "codes"))
		old := exec.Command("sh", "-c", script)
		old.Dir = dir
		var stderr bytes.Buffer
		old.Stderr = &stderr
		if err := old.Start(); err != nil {
			t.Fatal(err)
		}
		waitState(t, old.Process.Pid, 'T')
		// The lease lapses; the holder is stopped: a new holder takes it.
		time.Sleep(1100 * time.Millisecond)
		out, code := orch(nil, "claim", "ISSUE-20241213-001", "--as", "new")
		if code != 0 {
			t.Fatalf("trial %d: the takeover: exit %d: %s", trial, code, out)
		}
		before, _ := os.ReadFile(filepath.Join(ws, "issue_queue.md"))
		syscall.Kill(old.Process.Pid, syscall.SIGCONT)
		if err := old.Wait(); err != nil {
			t.Fatalf("trial %d: the old holder: %v\n%s", trial, err, stderr.String())
		}
		codes, _ := os.ReadFile(filepath.Join(dir, "codes"))
		for _, c := range strings.Fields(string(codes)) {
			if c == "11" {
				refused++
			} else {
				t.Errorf("trial %d: a write of the old holder exited %s, want 11 (refused)\n%s", trial, c, stderr.String())
			}
		}
		if after, _ := os.ReadFile(filepath.Join(ws, "issue_queue.md")); !bytes.Equal(before, after) {
			t.Errorf("trial %d: the old holder changed the queue", trial)
		}
		orch(nil, "release", "ISSUE-20241213-001")
	}
	if refused != trials*writes {
		t.Errorf("%d of %d writes refused", refused, trials*writes)
	}
	t.Logf("%d trials: %d of %d writes of a paused-then-resumed holder refused", trials, refused, trials*writes)
}

// waitState waits until process pid is in state (from /proc/pid/stat).
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Skip("no /proc:", err)
		}
		if i := bytes.LastIndexByte(data, ')'); i > 0 && i+2 < len(data) && data[i+2] == state {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never reached state %c", pid, state)
}

// Kill trials: run --agents 2 on three issues is killed (SIGKILL) at a
// random moment, the run process or one of its agents, while the agents
// attack it (trialAgent) and the person saves the queue in place; the
// next runs go on from there until nothing is left. After each trial no
// issue and no note of the person's is lost, no claim was given twice at
// one epoch, no issue was launched past 1 + Max-Retries, nothing escaped
// (main holds the work merged and nothing else, nothing an agent planted
// ran, the person's uncommitted edit is as it was), every issue whose
// agent did the work is merged once and resolved, and no claim, process
// or worktree is left. ORCHESTRATE_TRIALS sets the number of trials
// (default 4 under -short, 24 otherwise); ORCHESTRATE_TRIAL_SEED the
// seed of the first (trial i's is it plus i).
func TestAgentsKillTrials(t *testing.T) {
	t.Parallel()
	bin := orchestrateBin(t)
	runTrials(t, trialCount(4, 24), func(tr *trial, cfg string) {
		t := tr.t
		root, ws, data, base := agentsProject(t, bin, cfg, 3)
		orch := func(args ...string) *exec.Cmd {
			cmd := base(args...)
			cmd.Env = append(cmd.Env, tr.env...)
			return cmd
		}
		personEdit(t, root)
		path := filepath.Join(ws, "issue_queue.md")
		tr.assign(path)
		run := orch("run", "--agents", "2", "--lease", "3s")
		var out syncBuffer
		run.Stdout, run.Stderr = &out, &out
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		tr.startSaves(path)
		tr.kill(run, data, 1500*time.Millisecond)
		run.Wait()
		tr.outs = append(tr.outs, "the first run:\n"+out.String())
		runUntilDone(t, 8, func() (string, int) {
			cmd := orch("run", "--agents", "2", "--lease", "3s")
			out, _ := cmd.CombinedOutput()
			return string(out), cmd.ProcessState.ExitCode()
		})
		tr.saves.Wait()
		checkAfterKills(tr, root, ws, data)
	})
}

// agentsProject makes a git repository on main with one commit, its
// workspace (ignored by git) with config and issues open issues, and a
// data directory for the worktrees; orch makes an orchestrate command in
// it.
func agentsProject(t testing.TB, bin, config string, issues int) (root, ws, data string, orch func(args ...string) *exec.Cmd) {
	t.Helper()
	root, data = t.TempDir(), t.TempDir()
	// What a run killed with SIGKILL left working there (a git of its
	// own, not yet done) is stopped before the directories are removed,
	// not left to write into them while they are.
	t.Cleanup(func() { stopWorkingIn(root, data) })
	gitRun(t, root, "init", "-q", "-b", "main")
	ws = filepath.Join(root, ".orchestrator")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".orchestrator/\n"), 0o644)
	gitRun(t, root, "add", ".")
	gitRun(t, root, "commit", "-qm", "init")
	os.WriteFile(filepath.Join(ws, "config.yaml"), []byte(config), 0o644)
	cleanupAnalytics(t, ws)
	orch = func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
		return cmd
	}
	for i := 0; i < issues; i++ {
		if out, err := orch("issue", "add", "--summary", fmt.Sprintf("issue %d", i), "--auto-retry", "true").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	return root, ws, data, orch
}

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// agentPIDs are the processes working in the worktrees under data.
func agentPIDs(data string) []int { return workingIn(filepath.Join(data, "orchestrate")) }

// workingIn are the processes whose working directory is one of dirs or
// below it (none where there is no /proc).
func workingIn(dirs ...string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(cwd+"/", d+"/") }) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopWorkingIn kills the processes working in dirs, and waits (10 s at
// most) until none is left.
func stopWorkingIn(dirs ...string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pids := workingIn(dirs...)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// checkAfterKills checks a trial of TestAgentsKillTrials once nothing is
// left to do.
func checkAfterKills(tr *trial, root, ws, data string) {
	t := tr.t
	t.Helper()
	tr.checkPlanted()
	path := filepath.Join(ws, "issue_queue.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr.checkQueue(path, text)
	tr.checkBudget()
	tr.checkHistory(filepath.Join(ws, "history.csv"))
	tr.checkBranch(root, 2, ".gitignore", "person.txt")
	tr.checkCheckout(root)
	q := queue.Parse(text)
	for _, is := range q.Issues {
		if tr.merges(is.ID) && is.Status() != queue.StatusResolved {
			t.Errorf("%s (%s) is %s", is.ID, tr.attacks[is.ID], is.Status())
		}
		// A run killed just after it found an issue out of launches
		// leaves that issue's claim: stuck, the issue is claimed no more
		// (its holder's death is seen once a person retries it).
		if l := claim.Of(is); l.Holder != "" && (is.Status() != queue.StatusStuck || !tr.killed) {
			t.Errorf("%s (%s) is %s, still claimed: %+v", is.ID, tr.attacks[is.ID], is.Status(), l)
		}
	}
	if out := safeGit(t, root, "worktree", "list"); strings.Contains(out, "\n") {
		t.Logf("worktrees left:\n%s", out)
	}
	if pids := agentPIDs(data); len(pids) > 0 {
		t.Errorf("processes left in the worktrees: %v", pids)
	}
}

// TestLeaseFloor: run --agents takes a lease of claim.MinLease, 3s, and
// refuses one just under it.
func TestLeaseFloor(t *testing.T) {
	if claim.MinLease != 3*time.Second {
		t.Errorf("claim.MinLease = %v; want 3s", claim.MinLease)
	}
	if err := checkAgentFlags(2, 3*time.Second, nil); err != nil {
		t.Errorf("checkAgentFlags(2, 3s) = %v; want nil", err)
	}
	err := checkAgentFlags(2, 3*time.Second-time.Millisecond, nil)
	if want := "--lease 2.999s: want 3s or more"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("checkAgentFlags(2, 2.999s) = %v; want %q", err, want)
	}
}
