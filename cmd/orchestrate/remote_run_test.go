package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orchestrate-dev/orchestrate/claim/remote"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// remoteProject makes a bare repository, the remote, whose main branch
// holds a workspace with config and issues issues (its queue committed),
// and n clones of it, the machines; orch[i] makes a command that runs
// orchestrate on machine i, with a data directory of its own.
func remoteProject(t *testing.T, config string, issues, n int) (bare string, clones []string, orch []func(args ...string) *exec.Cmd) {
	t.Helper()
	t.Setenv("ORCHESTRATE_NO_BACKGROUND", "1")
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
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+data)
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
	q := remoteQueue(t, bare)
	log := gitRun(t, bare, "log", "--format=%s", "main")
	for _, is := range q.Issues {
		if got := is.Field(queue.FieldStatus); got == nil || got.Value != queue.StatusResolved {
			t.Errorf("%s on the remote's queue: %v, want resolved", is.ID, got)
		}
		if n := strings.Count(log, is.ID+":"); n != 1 {
			t.Errorf("%s merged %d times onto the remote's main:\n%s", is.ID, n, log)
		}
		if files := gitRun(t, bare, "ls-tree", "--name-only", "main", is.ID+".txt"); files != is.ID+".txt" {
			t.Errorf("%s: its work is not on the remote's main", is.ID)
		}
	}
	if len(q.Issues) != issues {
		t.Errorf("the remote's queue has %d issues, want %d", len(q.Issues), issues)
	}
	for id, l := range remoteClaims(t, bare) {
		if l.Holder != "" {
			t.Errorf("%s still claimed on the remote by %s", id, l.Holder)
		}
	}
	checkHistories(t, bare, clones, orch)
	if t.Failed() {
		for i := range machines {
			t.Logf("machine %d:\n%s", i, outs[i])
		}
	}
}
