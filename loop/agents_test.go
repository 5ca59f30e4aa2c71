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
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// agentsRepo makes a git repository on main with one commit, its
// workspace (ignored by git) with config, and an issue per summary.
func agentsRepo(t *testing.T, configOf func(Workspace) string, summaries ...string) Workspace {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // where the worktrees go
	gitIn(t, root, "init", "-q", "-b", "main")
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	config := configOf(w)
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{ConfigFile: config, filepath.Join("..", ".gitignore"): DefaultDir + "/\n", filepath.Join("..", "shared.txt"): "base\n"} {
		if err := os.WriteFile(w.Path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "init")
	for _, s := range summaries {
		if _, err := w.AddIssue(context.Background(), ruleNow, NewIssue{
			Fields:   map[string]string{queue.FieldAutoRetry: "true"},
			Sections: map[string]string{queue.SectionSummary: s},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// launches counts the agent launches per issue, from the agents' own log.
func launches(t *testing.T, w Workspace) map[string]int {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(w.Root(), "launches"))
	n := map[string]int{}
	for _, id := range strings.Fields(string(data)) {
		n[id]++
	}
	return n
}

// logLaunch is the start of an agent command that notes its issue in the
// repository's launches file (outside every worktree).
func logLaunch(w Workspace) string {
	return fmt.Sprintf(`id=${ORCHESTRATE_CLAIM%%%%:*}; echo "$id" >> %q; `, filepath.Join(w.Root(), "launches"))
}

func runAgents(t *testing.T, w Workspace, n int) *AgentsResult {
	t.Helper()
	res, err := w.RunAgents(context.Background(), AgentsOptions{Agents: n})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Four agents on four issues: each works in its own worktree, its gate
// sees its own work only, and each is merged into main in turn; nothing is
// left behind, every claim is released.
func TestAgentsMergeAll(t *testing.T) {
	trees := t.TempDir()
	w := agentsRepo(t, func(w Workspace) string {
		// Each agent works in a worktree of its own, not the checkout,
		// in agents.worktrees, with a temporary directory and a port of
		// its own.
		return "agents:\n  port_base: 3000\n  worktrees: " + trees + "\n" +
			"agent:\n  command: '" + logLaunch(w) + `test "$(git rev-parse --show-toplevel)" != ` + w.Root() + ` && echo "$id" > "$id.txt" && test -d "$TMPDIR" && echo "$PORT $PWD" >> ` + filepath.Join(w.Root(), "ports") + `'` + "\n" +
			"gates:\n  - name: own\n    command: 'ls ISSUE-*.txt'\n"
	}, "one", "two", "three", "four")
	res := runAgents(t, w, 4)
	ports, _ := os.ReadFile(filepath.Join(w.Root(), "ports"))
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(ports)), "\n") {
		port, dir, _ := strings.Cut(l, " ")
		if port < "3001" || port > "3004" || len(port) != 4 || !strings.HasPrefix(dir, trees+"/") {
			t.Errorf("an agent ran with PORT %q in %s; want 3001 to 3004, in %s", port, dir, trees)
		}
		seen[port] = true
	}
	if len(seen) < 2 {
		t.Errorf("the agents' ports: %q; want one each", ports)
	}
	if res.Outcome != RunPassed || len(res.Merged) != 4 {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	if got := gitIn(t, w.Root(), "rev-list", "--count", "main"); got != "5" {
		t.Errorf("main has %s commits, want 5", got)
	}
	for id, n := range launches(t, w) {
		if n != 1 {
			t.Errorf("%s launched %d times", id, n)
		}
		if _, err := os.Stat(filepath.Join(w.Root(), id+".txt")); err != nil {
			t.Errorf("%s's work is not in the checkout of main: %v", id, err)
		}
		is := loadIssue(t, w, id)
		if is.Status() != queue.StatusResolved || claim.Of(is).Holder != "" || claim.Of(is).Epoch != 1 {
			t.Errorf("%s: status %s, claim %+v", id, is.Status(), claim.Of(is))
		}
	}
	if out := gitIn(t, w.Root(), "worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
	if out := gitIn(t, w.Root(), "branch", "--list", "orchestrate/*"); out != "" {
		t.Errorf("branches left: %s", out)
	}
	counts := map[string]int{}
	for _, e := range historyOf(t, w) {
		counts[e.Event+"/"+e.Outcome]++
	}
	for k, want := range map[string]int{"claim/": 4, "release/": 4, "merge/pass": 4, "run_end/passed": 1, "resolve/": 4, "agent/ok": 4} {
		if counts[k] != want {
			t.Errorf("history has %d %s rows, want %d (%v)", counts[k], k, want, counts)
		}
	}
}

// The seed's rules hold with several agents as with one: the same failure
// three times halts an issue after exactly three launches (four with
// halt_after_identical: 4); a failure that changes every time is retried
// up to Max-Retries; the per-run cap stops every agent at exactly
// global_cap retries.
func TestAgentsBudgets(t *testing.T) {
	for _, tc := range []struct {
		name             string
		retry            string
		issues, agents   int
		gate             string
		launches         int // in all
		outcome          string
		totalAutoRetries int
	}{
		{"identical-3", "halt_after_identical: 3", 2, 2, "echo same failure; exit 1", 6, RunHalted, 4},
		{"identical-4", "halt_after_identical: 4", 2, 2, "echo same failure; exit 1", 8, RunHalted, 6},
		{"max-retries-4", "max_retries: 4", 1, 2, "echo failure $(wc -l < " + "LAUNCHES" + "); exit 1", 5, RunHalted, 4},
		{"cap-5", "global_cap: 5", 4, 4, "echo failure $(wc -l < LAUNCHES); exit 1", 9, RunCapReached, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var summaries []string
			for i := 0; i < tc.issues; i++ {
				summaries = append(summaries, fmt.Sprintf("issue %d", i))
			}
			w := agentsRepo(t, func(w Workspace) string {
				gate := strings.ReplaceAll(tc.gate, "LAUNCHES", filepath.Join(w.Root(), "launches"))
				return "retry:\n  " + tc.retry + "\nagent:\n  command: '" + logLaunch(w) + "echo \"$id\" > \"$id.txt\"'\n" +
					"gates:\n  - name: test\n    command: '" + gate + "'\n"
			}, summaries...)
			res := runAgents(t, w, tc.agents)
			total := 0
			for _, n := range launches(t, w) {
				total += n
			}
			if total != tc.launches || res.Outcome != tc.outcome {
				t.Errorf("%d launches, %s (%s); want %d, %s", total, res.Outcome, res.Reason, tc.launches, tc.outcome)
			}
			s, err := session.Load(w.Path(StateFile))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.TotalAutoRetries(); got != tc.totalAutoRetries {
				t.Errorf("total_auto_retries = %d, want %d", got, tc.totalAutoRetries)
			}
			// Work not merged is kept, and said where.
			if len(res.Left) != tc.issues {
				t.Errorf("worktrees reported: %v", res.Left)
			}
		})
	}
}

// runTwoMerging runs two agents until both issues are merged, and returns
// the result and each merge step ("ISSUE-… pass: …", "ISSUE-… fail: …").
func runTwoMerging(t *testing.T, w Workspace) (*AgentsResult, []string) {
	t.Helper()
	var mu sync.Mutex
	var merges []string
	res, err := w.RunAgents(context.Background(), AgentsOptions{Agents: 2, RunOptions: RunOptions{Step: func(s Step) {
		if s.Kind == StepMerge {
			mu.Lock()
			merges = append(merges, s.Issue+" "+s.Merge)
			mu.Unlock()
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != RunPassed || len(res.Merged) != 2 {
		t.Fatalf("RunAgents = %s %q; merges %q", res.Outcome, res.Reason, merges)
	}
	return res, merges
}

// Two agents change one line of one file: the second merge conflicts,
// which is a failure of its issue naming the file, sent back to its agent;
// its next attempt, rebased, merges.
func TestAgentsConflict(t *testing.T) {
	w := agentsRepo(t, func(w Workspace) string {
		// The first attempt of each changes shared.txt's line; a later one
		// starts again from main, and appends instead.
		agent := logLaunch(w) + `if [ "$ORCHESTRATE_LOOP" = 1 ]; then echo "$id" > shared.txt; else git reset -q --hard main && echo "$id" >> shared.txt; fi`
		return "agent:\n  command: '" + agent + "'\ngates:\n  - name: test\n    command: 'grep -q ISSUE shared.txt'\n"
	}, "first", "second")
	res, merges := runTwoMerging(t, w)
	loser := res.Merged[1]
	is := loadIssue(t, w, loser)
	if n := is.Int(queue.FieldRetryCount, 0); n != 1 {
		t.Errorf("%s: Retry-Count %d, want 1", loser, n)
		h, _ := os.ReadFile(w.Path(HistoryFile))
		t.Logf("merges %q\nhistory:\n%s", merges, h)
	}
	if got := fmt.Sprint(merges); !strings.Contains(got, loser+" fail: merge conflict rebasing onto main in shared.txt") {
		t.Errorf("merges: %s", got)
	}
	var conflict analytics.Event
	for _, e := range historyOf(t, w) {
		if e.Event == analytics.EventRecord && e.IssueID == loser {
			conflict = e
		}
	}
	if conflict.Gate != "merge" || conflict.Signature == "" {
		t.Errorf("the conflict's record row: %+v", conflict)
	}
	if data, _ := os.ReadFile(filepath.Join(w.Root(), "shared.txt")); strings.Count(string(data), "ISSUE") != 2 {
		t.Errorf("shared.txt on main = %q", data)
	}
}

// Two agents change one line of one file, and the loser's agent edits
// files only, never running git (a headless agent that may run only the
// gates' commands): its work is put onto main for it, the conflict marked
// in the file; left there, the markers are refused at the merge, though
// its gate passes; once it removes them, its work merges with both sides.
func TestAgentsConflictResolvedByEdits(t *testing.T) {
	w := agentsRepo(t, func(w Workspace) string {
		agent := logLaunch(w) + `case "$ORCHESTRATE_LOOP" in 1) echo "$id" > shared.txt ;; 2) ;; ` +
			`*) grep -Ev "^(<<<<<<<|=======|>>>>>>>)" shared.txt > shared.tmp; mv shared.tmp shared.txt ;; esac`
		return "agent:\n  command: '" + agent + "'\ngates:\n  - name: test\n    command: 'grep -q ISSUE shared.txt'\n"
	}, "first", "second")
	res, merges := runTwoMerging(t, w)
	loser := res.Merged[1]
	got := fmt.Sprint(merges)
	for _, want := range []string{
		loser + " fail: merge conflict rebasing onto main in shared.txt. Your work is now on main, not committed, with each conflict marked in its file",
		loser + " fail: conflict markers are left in shared.txt",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("merges: %s\nwant %q", got, want)
		}
	}
	data, _ := os.ReadFile(filepath.Join(w.Root(), "shared.txt"))
	if strings.Count(string(data), "ISSUE") != 2 || strings.Contains(string(data), "<<<<<<<") || strings.Contains(string(data), ">>>>>>>") {
		t.Errorf("shared.txt on main = %q; want both issues' lines, no marker", data)
	}
	if n := loadIssue(t, w, loser).Int(queue.FieldRetryCount, 0); n != 2 {
		t.Errorf("%s: Retry-Count %d, want 2", loser, n)
	}
}

// An agent's commit that changes the workspace directory is refused at
// merge, as a failure of its issue.
func TestAgentsWorkspaceChangeRefused(t *testing.T) {
	w := agentsRepo(t, func(Workspace) string { return "" }, "sneaky")
	gitIn(t, w.Root(), "rm", "-q", "--cached", ".gitignore")
	os.Remove(filepath.Join(w.Root(), ".gitignore"))
	gitIn(t, w.Root(), "add", DefaultDir)
	gitIn(t, w.Root(), "commit", "-qm", "track the workspace")
	cfg := "retry:\n  max_retries: 1\nagent:\n  command: '" + logLaunch(w) + "echo hand >> " + DefaultDir + "/issue_queue.md'\ngates:\n  - name: test\n    command: 'true'\n"
	os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644)
	gitIn(t, w.Root(), "commit", "-qam", "config")
	res := runAgents(t, w, 2)
	if len(res.Merged) != 0 {
		t.Fatalf("merged %v", res.Merged)
	}
	q, _ := queue.Load(w.Path(QueueFile))
	is := q.Issues[0]
	if d := is.Section(queue.SectionFailureDetails); d == nil || !strings.Contains(d.Body(), "the agent's commits change "+DefaultDir+"/, which is orchestrate's: "+DefaultDir+"/issue_queue.md") {
		t.Errorf("Failure Details: %v", d)
	}
}

// No git, or a detached HEAD: a clear error before anything starts.
func TestAgentsNeedGit(t *testing.T) {
	w := newTestWorkspace(t, "agent:\n  command: 'true'\ngates:\n  - name: t\n    command: 'true'\n")
	_, err := w.RunAgents(context.Background(), AgentsOptions{Agents: 2})
	if err == nil || !strings.Contains(err.Error(), "run --agents needs a git repository") {
		t.Errorf("RunAgents outside git: %v", err)
	}
}

// Claims.Next reads at a look the first open issues only; when none of them
// is ready (here: halted, and an approval request), the whole queue is
// read, and the first ready one past them is claimed. Claimed issues are
// always read: a holder gets back what it holds.
func TestClaimNextPastTheFirstLook(t *testing.T) {
	var q strings.Builder
	q.WriteString("# Issue Queue\n\n")
	for i := 1; i <= chooseOpen+4; i++ {
		fields := []string{"Status", "pending", "Priority", "critical", "Created", fmt.Sprintf("2026-01-01T00:00:%02dZ", i)}
		switch {
		case i <= chooseOpen:
			fields = append(fields, "Halted", "true")
		case i == chooseOpen+1:
			fields = append(fields, "Type", TypeApproval)
		case i == chooseOpen+2:
			fields[3] = "low"
		}
		q.WriteString(issueText(fmt.Sprintf("ISSUE-20260101-%03d", i), fields...))
	}
	w := ruleWorkspace(t, "", q.String())
	ctx := context.Background()
	c, err := w.Claims(nil).Next(ctx, ruleNow, "a@h/1", time.Minute, nil)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if want := fmt.Sprintf("ISSUE-20260101-%03d", chooseOpen+3); c.ID != want {
		t.Errorf("claimed %s, want %s (the first ready one by priority past the first look)", c.ID, want)
	}
	again, err := w.Claims(nil).Next(ctx, ruleNow, "a@h/1", time.Minute, nil)
	if err != nil || again == nil || again.ID != c.ID || again.Epoch != 1 {
		t.Errorf("claimed again: %+v, %v", again, err)
	}
}

// orchestrate abort and the sentinel stop every agent at its next decision
// point: no agent launches again, and no new issue is claimed.
func TestAgentsStopAtDecisionPoints(t *testing.T) {
	for _, tc := range []struct{ file, outcome string }{{AbortFile, RunAborted}, {SentinelFile, RunNothing}} {
		t.Run(tc.file, func(t *testing.T) {
			w := agentsRepo(t, func(w Workspace) string {
				return "agent:\n  command: '" + logLaunch(w) + "true'\ngates:\n  - name: never\n    command: 'echo no; exit 1'\n"
			}, "one", "two", "three")
			var once sync.Once
			res, err := w.RunAgents(context.Background(), AgentsOptions{Agents: 2, RunOptions: RunOptions{Step: func(s Step) {
				if s.Kind == StepCheck {
					once.Do(func() { os.WriteFile(w.Path(tc.file), nil, 0o644) })
				}
			}}})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, n := range launches(t, w) {
				total += n
			}
			if res.Outcome != tc.outcome || total > 3 || len(res.Worked) > 2 {
				t.Errorf("%s (%s): %d launches, %d issues worked; want %s, at most one more launch per agent, no third issue",
					res.Outcome, res.Reason, total, len(res.Worked), tc.outcome)
			}
		})
	}
}

// The same failure in two checkouts of one repository is one signature,
// whichever checkout's path the output names.
func TestSignatureAcrossCheckouts(t *testing.T) {
	w := agentsRepo(t, func(Workspace) string { return "" })
	linked := filepath.Join(t.TempDir(), "linked")
	gitIn(t, w.Root(), "worktree", "add", "-q", linked)
	code := 1
	sig := func(ws Workspace, path string) string {
		s, _ := ws.Signature(Failure{Output: []byte("--- FAIL: TestX\n    " + path + "/calc_test.go:12: want 5\n"), ExitCode: &code})
		return s
	}
	inMain, inLinked := w, w.InTree(linked)
	want := sig(inMain, w.Root())
	for _, got := range []string{sig(inMain, linked), sig(inLinked, linked), sig(inLinked, w.Root())} {
		if got != want {
			t.Errorf("signature %s, want %s: a checkout's path is not masked", got[:12], want[:12])
		}
	}
}

// A claim taken over while its agent works (a person reassigns the issue):
// the agent's next write is refused, it stops and leaves the claim to its
// new holder; the other agents go on and merge their work.
func TestAgentsTakeover(t *testing.T) {
	w := agentsRepo(t, func(w Workspace) string {
		return "agent:\n  command: '" + logLaunch(w) + "echo \"$id\" > \"$id.txt\"'\ngates:\n  - name: own\n    command: 'echo failing; exit 1'\n"
	}, "taken", "kept")
	taken := "ISSUE-20241213-001"
	res, err := w.RunAgents(context.Background(), AgentsOptions{Agents: 2, RunOptions: RunOptions{Step: func(s Step) {
		if s.Kind == StepAgent && s.Issue == taken && s.Loop == 1 {
			if _, err := w.Claims(nil).Claim(context.Background(), time.Now(), taken, "boss", 0, true); err != nil {
				t.Error(err)
			}
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var took *Worked
	for i := range res.Worked {
		if res.Worked[i].Issue == taken {
			took = &res.Worked[i]
		}
	}
	if took == nil || !took.TakenOver || len(res.Worked) != 2 {
		t.Fatalf("worked: %+v", res.Worked)
	}
	is := loadIssue(t, w, taken)
	if l := claim.Of(is); l.Holder != "boss" || l.Epoch != 2 || is.Int(queue.FieldRetryCount, 0) != 0 {
		t.Errorf("%s: claim %+v, Retry-Count %d: the new holder's claim, and nothing of the old one's counted", taken, l, is.Int(queue.FieldRetryCount, 0))
	}
	if n := launches(t, w)[taken]; n != 1 {
		t.Errorf("%s launched %d times after its takeover", taken, n)
	}
}

// A claim taken over while its work waits in the merge queue: the train
// asks the fence just before it merges, and that work is not merged.
func TestAgentsTakeoverBeforeMerge(t *testing.T) {
	w := agentsRepo(t, func(w Workspace) string {
		return "agent:\n  command: '" + logLaunch(w) + "echo \"$id\" > \"$id.txt\"'\ngates:\n  - name: own\n    command: 'ls ISSUE-*.txt'\n"
	}, "taken")
	taken := "ISSUE-20241213-001"
	res, err := w.RunAgents(context.Background(), AgentsOptions{Agents: 2, RunOptions: RunOptions{Step: func(s Step) {
		if s.Kind == StepQueued && s.Issue == taken {
			if _, err := w.Claims(nil).Claim(context.Background(), time.Now(), taken, "boss", 0, true); err != nil {
				t.Error(err)
			}
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Merged) != 0 || len(res.Worked) != 1 || !res.Worked[0].TakenOver {
		t.Errorf("merged %v, worked %+v", res.Merged, res.Worked)
	}
	if got := gitIn(t, w.Root(), "rev-list", "--count", "main"); got != "1" {
		t.Errorf("main has %s commits: work whose claim was taken over was merged", got)
	}
	if l := claim.Of(loadIssue(t, w, taken)); l.Holder != "boss" || l.Epoch != 2 {
		t.Errorf("claim %+v", l)
	}
}
