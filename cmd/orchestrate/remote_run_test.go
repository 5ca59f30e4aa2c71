package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// remoteProject makes a bare repository, the remote, whose main branch
// holds a workspace with config and issues issues (its queue committed),
// and n clones of it, the machines; orch[i] makes a command that runs
// orchestrate on machine i, with a data directory of its own.
func remoteProject(t *testing.T, config string, issues, n int) (bare string, clones []string, orch []func(args ...string) *exec.Cmd) {
	t.Helper()
	bin := orchestrateBin(t)
	bare = filepath.Join(t.TempDir(), "remote.git")
	gitRun(t, "", "init", "-q", "--bare", "-b", "main", bare)
	seed, _, _, _ := agentsProject(t, bin, config, issues)
	// The queue and the config are committed, the rest of the workspace not.
	os.WriteFile(filepath.Join(seed, ".gitignore"), []byte(".orchestrator/*\n!.orchestrator/config.yaml\n!.orchestrator/issue_queue.md\n"), 0o644)
	gitRun(t, seed, "add", ".")
	gitRun(t, seed, "commit", "-qm", "the queue")
	gitRun(t, seed, "push", "-q", bare, "main")
	for i := 0; i < n; i++ {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("m%d", i))
		gitRun(t, "", "clone", "-q", bare, dir)
		gitRun(t, dir, "config", "user.name", fmt.Sprintf("machine %d", i))
		gitRun(t, dir, "config", "user.email", "m@example.com")
		data := t.TempDir()
		clones = append(clones, dir)
		orch = append(orch, func(args ...string) *exec.Cmd {
			cmd := exec.Command(bin, append([]string{"--dir", filepath.Join(dir, ".orchestrator")}, args...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data, "ORCHESTRATE_NO_BACKGROUND=1")
			return cmd
		})
	}
	return bare, clones, orch
}

// checkHistories checks the histories the machines' runs shared beside
// the queue: each machine's history.csv is on the remote as its host's,
// byte for byte, its syncs and the others' at once notwithstanding; and
// each machine's page, once it fetched the shared queue, counts every row
// of every machine once, and reads no history twice.
func checkHistories(t *testing.T, bare string, clones []string, orch []func(args ...string) *exec.Cmd) {
	t.Helper()
	most := map[string]int{}
	hosts := map[string]bool{}
	for i, dir := range clones {
		host := gitRun(t, dir, "config", remote.HostConfig)
		hosts[host] = true
		data, err := os.ReadFile(filepath.Join(dir, ".orchestrator", "history.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var shared strings.Builder
		for _, line := range strings.Split(gitRun(t, bare, "ls-tree", remote.QueueRef, remote.HistoryDir+"/"+host+"/"), "\n") {
			f := strings.Fields(line) // MODE blob ID\tNAME
			if len(f) != 4 {
				continue
			}
			blob := f[2]
			piece, err := exec.Command("git", "-C", bare, "cat-file", "blob", blob).Output()
			if err != nil {
				t.Fatal(err)
			}
			shared.Write(piece)
		}
		if shared.String() != string(data) {
			t.Errorf("machine %d's history on the remote (%s) is not its history.csv", i, host)
		}
		n := map[string]int{}
		for _, row := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:] {
			n[row]++
			most[row] = max(most[row], n[row])
		}
	}
	if len(hosts) != len(clones) {
		t.Errorf("%d host names for %d machines", len(hosts), len(clones))
	}
	var want int64
	for _, n := range most {
		want += int64(n)
	}
	for i, dir := range clones {
		gitRun(t, dir, "fetch", "-q", "origin", "+"+remote.QueueRef+":refs/orchestrate/remote/origin/queue")
		out, err := orch[i]("analytics", "--remote", "origin", "--json").Output()
		if err != nil {
			t.Fatalf("machine %d: analytics --remote: %v", i, err)
		}
		var rep struct {
			Rows      int64
			Histories []struct{ Name string }
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Rows != want || len(rep.Histories) != len(clones) {
			t.Errorf("machine %d's page: %d rows from %d histories; want %d from %d\n%s", i, rep.Rows, len(rep.Histories), want, len(clones), out)
		}
		for _, h := range rep.Histories {
			if h.Name == "origin:history/"+gitRun(t, dir, "config", remote.HostConfig) {
				t.Errorf("machine %d reads its own history on the remote", i)
			}
		}
	}
}

// remoteQueue is the shared queue on the bare remote.
func remoteQueue(t *testing.T, bare string) *queue.Queue {
	t.Helper()
	return queue.Parse([]byte(gitRun(t, bare, "show", remote.QueueRef+":"+remote.QueueFile)))
}

// Four machines (clones of one bare remote) each run --agents 2 --remote
// origin at once on eight issues: every issue is worked by one agent,
// merged onto the remote's main exactly once, resolved in the shared
// queue, its claim released, within its budget; no run fails.
func TestRemoteRunAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: four machines' runs over git")
	}
	cfg := "retry:\n  max_retries: 4\nagent:\n  command: 'id=${ORCHESTRATE_CLAIM%%:*}; echo \"$id\" > \"$id.txt\"'\n" +
		"gates:\n  - name: test\n    command: 'test -f \"$(git rev-parse --abbrev-ref HEAD | sed s,orchestrate/,,).txt\"'\n"
	const machines, issues = 4, 8
	bare, clones, orch := remoteProject(t, cfg, issues, machines)
	var wg sync.WaitGroup
	outs := make([]string, machines)
	codes := make([]int, machines)
	for i := range machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := orch[i]("run", "--agents", "2", "--remote", "origin", "--lease", "6s")
			out, _ := cmd.CombinedOutput()
			outs[i], codes[i] = string(out), cmd.ProcessState.ExitCode()
		}()
	}
	wg.Wait()
	for i := range machines {
		if codes[i] != 0 && codes[i] != exitNothing {
			t.Errorf("machine %d: exit %d\n%s", i, codes[i], outs[i])
		}
	}
	checkRemoteDone(t, bare, issues, 4)
	checkHistories(t, bare, clones, orch)
	checkPassedOnce(t, bare, outs)
	if t.Failed() {
		for i := range machines {
			t.Logf("machine %d:\n%s", i, outs[i])
		}
	}
}

// passedLine is a run's line of an issue whose work passed.
var passedLine = regexp.MustCompile(`(ISSUE-\d{8}-\d+): done: passed`)

// checkPassedOnce checks that no issue was worked to a pass twice across
// the machines' runs (outs): a resolved issue is never claimed again. On
// failure, the shared queue's history on the remote bare (each commit
// says which machine pushed it) and the claims are logged.
func checkPassedOnce(t *testing.T, bare string, outs []string) {
	t.Helper()
	where := map[string][]int{}
	for i, out := range outs {
		for _, m := range passedLine.FindAllStringSubmatch(out, -1) {
			where[m[1]] = append(where[m[1]], i)
		}
	}
	twice := false
	for id, ms := range where {
		if len(ms) > 1 {
			twice = true
			t.Errorf("%s passed %d times, on machines %v", id, len(ms), ms)
		}
	}
	if twice {
		out, _ := exec.Command("git", "-C", bare, "log", "-p", remote.QueueRef).CombinedOutput()
		t.Logf("the shared queue's history:\n%s", out)
		out, _ = exec.Command("git", "-C", bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/orchestrate/claims/").CombinedOutput()
		t.Logf("the claims:\n%s", out)
	}
}

// Kill trials across machines: two clones of one bare remote each run
// --agents 2 --remote origin on three issues, while the agents attack
// the runs (trialAgent) and the person saves the first clone's queue in
// place; one of the runs, chosen at random, or one of its agents, is
// killed (SIGKILL) at a random moment; then both run again until nothing
// is left. After each trial no issue and no note of the person's is lost
// (in its clone's queue and in the shared one), no claim was given twice
// at one epoch, no issue was launched past 1 + Max-Retries by the two
// machines together, nothing escaped (the remote's main holds the work
// merged and nothing else, nothing an agent planted ran, each person's
// uncommitted edit is as it was), every issue whose agent did the work is
// merged once and resolved in the shared queue, and no claim is held.
// ORCHESTRATE_TRIALS sets the number of trials (default 4, none under
// -short); ORCHESTRATE_TRIAL_SEED the seed of the first.
func TestRemoteRunKillTrials(t *testing.T) {
	t.Parallel()
	trials := trialCount(0, 4)
	if trials == 0 {
		t.Skip("-short: machines' runs killed over git")
	}
	runTrials(t, trials, func(tr *trial, cfg string) {
		bare, clones, base := remoteProject(tr.t, cfg, 3, 2)
		remoteTrial(tr, bare, clones, base)
	})
}

// remoteTrial is one trial of TestRemoteRunKillTrials on the machines
// remoteProject made.
func remoteTrial(tr *trial, bare string, clones []string, base []func(args ...string) *exec.Cmd) {
	t := tr.t
	// The person's file, committed on the remote's main, then changed
	// on each machine without a commit.
	personEdit(t, clones[0])
	gitRun(t, clones[0], "push", "-q", "origin", "main")
	gitRun(t, clones[1], "pull", "-q", "--ff-only")
	os.WriteFile(filepath.Join(clones[1], "person.txt"), []byte("the person's edit, not committed\n"), 0o644)
	run := func(i int) *exec.Cmd {
		cmd := base[i]("run", "--agents", "2", "--remote", "origin", "--lease", "3s")
		cmd.Env = append(cmd.Env, tr.env...)
		return cmd
	}
	tr.assign(filepath.Join(clones[0], ".orchestrator", "issue_queue.md"))
	first := []*exec.Cmd{run(0), run(1)}
	firstOut := []*syncBuffer{{}, {}}
	for i, c := range first {
		c.Stdout, c.Stderr = firstOut[i], firstOut[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	// One person saves: two saving the text above the first issue on two
	// machines is a conflict the sync reports and leaves to them.
	tr.startSaves(filepath.Join(clones[0], ".orchestrator", "issue_queue.md"))
	tr.queues = append(tr.queues, filepath.Join(clones[1], ".orchestrator", "issue_queue.md"))
	k := tr.rng.Intn(2)
	tr.kill(first[k], dataOf(first[k]), 2500*time.Millisecond)
	for i, c := range first {
		c.Wait()
		tr.outs = append(tr.outs, fmt.Sprintf("machine %d, first run:\n%s", i, firstOut[i].String()))
	}
	// Both go on until nothing is left to do, and once more after the
	// person's last save: the run that shares it.
	saved := false
	for round := 0; ; round++ {
		if round == 10 {
			t.Fatal("still work left after 10 rounds")
		}
		var wg sync.WaitGroup
		outs, codes := make([]string, 2), make([]int, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := run(i)
				out, _ := c.CombinedOutput()
				outs[i], codes[i] = string(out), c.ProcessState.ExitCode()
			}()
		}
		wg.Wait()
		for i := range 2 {
			tr.outs = append(tr.outs, fmt.Sprintf("machine %d, round %d:\n%s", i, round, outs[i]))
		}
		done := 0
		for i, code := range codes {
			switch {
			case code == exitNothing || code == exitPerson && strings.Contains(outs[i], " 0 of 0 issues worked"):
				done++
			case code != 0 && code != exitPerson && code != exitGateFailed:
				t.Fatalf("round %d: machine %d: exit %d\n%s", round, i, code, outs[i])
			}
		}
		if done == 2 && saved {
			break
		}
		if done == 2 {
			tr.saves.Wait()
			saved = true
		}
	}
	checkRemoteTrial(tr, bare, clones)
}

// dataOf is the data directory (XDG_DATA_HOME) of a machine's command.
func dataOf(cmd *exec.Cmd) string {
	for _, e := range cmd.Env {
		if v, ok := strings.CutPrefix(e, "XDG_DATA_HOME="); ok {
			return v
		}
	}
	return ""
}

// checkRemoteTrial checks a trial of TestRemoteRunKillTrials once nothing
// is left to do.
func checkRemoteTrial(tr *trial, bare string, clones []string) {
	t := tr.t
	tr.checkPlanted()
	shared := []byte(safeGit(t, bare, "show", remote.QueueRef+":"+remote.QueueFile) + "\n")
	var histories []string
	for _, dir := range clones {
		path := filepath.Join(dir, ".orchestrator", "issue_queue.md")
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		tr.checkQueue(path, text)
		tr.checkCheckout(dir)
		histories = append(histories, filepath.Join(dir, ".orchestrator", "history.csv"))
		for _, note := range tr.notes[path] {
			if !bytes.Contains(shared, []byte(note)) {
				tr.tally.lostEdits++
				t.Errorf("the shared queue lost the person's edit %q, made in %s", note, dir)
			}
		}
	}
	tr.checkQueue(bare+":"+remote.QueueRef, shared)
	tr.checkBudget()
	tr.checkHistory(histories...)
	tr.checkBranch(bare, 3, ".gitignore", ".orchestrator/config.yaml", ".orchestrator/issue_queue.md", "person.txt")
	for _, is := range queue.Parse(shared).Issues {
		if tr.merges(is.ID) && is.Status() != queue.StatusResolved {
			t.Errorf("%s (%s) is %s in the shared queue", is.ID, tr.attacks[is.ID], is.Status())
		}
	}
	// A run killed once an issue was out of launches leaves its claim:
	// the issue is claimed no more (its holder's death is seen once a
	// person retries it).
	q := queue.Parse(shared)
	for id, l := range remoteClaims(t, bare) {
		if is := q.Issue(id); l.Holder != "" && (!tr.killed || is == nil || is.Int(queue.FieldLaunchCount, 0) < 1+trialMaxRetries) {
			t.Errorf("%s still claimed on the remote by %s", id, l.Holder)
		}
	}
}

// checkRemoteDone checks the bare remote once the machines are done with
// n issues: each resolved in the shared queue within its budget (at most
// budget retries), its work merged onto main exactly once, its claim
// released.
func checkRemoteDone(t *testing.T, bare string, n, budget int) {
	t.Helper()
	q := remoteQueue(t, bare)
	log := gitRun(t, bare, "log", "--format=%s", "main")
	for _, is := range q.Issues {
		if got := is.Field(queue.FieldStatus); got == nil || got.Value != queue.StatusResolved {
			t.Errorf("%s on the remote's queue: %v, want resolved", is.ID, got)
		}
		if r := is.Int(queue.FieldRetryCount, 0); r > budget {
			t.Errorf("%s: %d retries, past its budget of %d", is.ID, r, budget)
		}
		if c := strings.Count(log, is.ID+":"); c != 1 {
			t.Errorf("%s merged %d times onto the remote's main:\n%s", is.ID, c, log)
		}
		if files := gitRun(t, bare, "ls-tree", "--name-only", "main", is.ID+".txt"); files != is.ID+".txt" {
			t.Errorf("%s: its work is not on the remote's main", is.ID)
		}
	}
	if len(q.Issues) != n {
		t.Errorf("the remote's queue has %d issues, want %d", len(q.Issues), n)
	}
	for id, l := range remoteClaims(t, bare) {
		if l.Holder != "" {
			t.Errorf("%s still claimed on the remote by %s", id, l.Holder)
		}
	}
}

// countLines counts each line of text.
func countLines(text string) map[string]int {
	n := map[string]int{}
	for _, l := range strings.Fields(text) {
		n[l]++
	}
	return n
}

// A machine killed while it works on an issue leaves its work on the
// remote: the machine that takes the issue over after the lease starts from
// it. The first machine's agent writes half of the fix, fails its gate,
// and hangs in its next launch, where it is killed; the second's agent
// (TAKER) only finishes a half it finds, never starts one.
func TestRemoteTakeoverTakesUpWork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: machines' runs over git")
	}
	cfg := "retry:\n  max_retries: 2\nagent:\n  command: 'id=${ORCHESTRATE_CLAIM%%:*}; " +
		"if [ -f \"$id.part\" ]; then [ -z \"$HANG\" ] || sleep 60; echo done > \"$id.txt\"; elif [ -z \"$TAKER\" ]; then echo half > \"$id.part\"; fi'\n" +
		"gates:\n  - name: test\n    command: 'test -f \"$(git rev-parse --abbrev-ref HEAD | sed s,orchestrate/,,).txt\"'\n"
	bare, _, orch := remoteProject(t, cfg, 1, 2)
	first := orch[0]("run", "--agents", "1", "--remote", "origin", "--lease", "3s")
	first.Env = append(first.Env, "HANG=1")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once its half is kept on the remote, in its second launch.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(gitRun(t, bare, "for-each-ref", "--format=%(refname)", remote.WorkPrefix), remote.WorkPrefix) {
		if time.Now().After(deadline) {
			first.Process.Kill()
			t.Fatal("the first machine kept no work on the remote")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	second := orch[1]("run", "--agents", "1", "--remote", "origin", "--lease", "3s")
	second.Env = append(second.Env, "TAKER=1")
	out, _ := second.CombinedOutput()
	if code := second.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the second machine: exit %d\n%s", code, out)
	}
	checkRemoteDone(t, bare, 1, 2)
	q := remoteQueue(t, bare)
	id := q.Issues[0].ID
	if files := gitRun(t, bare, "ls-tree", "--name-only", "main", id+".part"); files != id+".part" {
		t.Errorf("the first machine's half is not on the remote's main:\n%s", out)
	}
	if refs := gitRun(t, bare, "for-each-ref", remote.WorkPrefix); refs != "" {
		t.Errorf("the work kept for a takeover is left once merged: %s", refs)
	}
}
