package pool

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// agentsRepo makes a git repository on main with one commit, its
// workspace (ignored by git) with config, and an issue per summary.
func agentsRepo(t *testing.T, configOf func(loop.Workspace) string, summaries ...string) loop.Workspace {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // where the worktrees go
	gitIn(t, root, "init", "-q", "-b", "main")
	w := loop.Workspace{Dir: filepath.Join(root, loop.DefaultDir)}
	config := configOf(w)
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{loop.ConfigFile: config, filepath.Join("..", ".gitignore"): loop.DefaultDir + "/\n", filepath.Join("..", "shared.txt"): "base\n"} {
		if err := os.WriteFile(w.Path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "init")
	for _, s := range summaries {
		if _, err := w.AddIssue(context.Background(), testNow, loop.NewIssue{
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
func launches(t *testing.T, w loop.Workspace) map[string]int {
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
func logLaunch(w loop.Workspace) string {
	return fmt.Sprintf(`id=${ORCHESTRATE_CLAIM%%%%:*}; echo "$id" >> %q; `, filepath.Join(w.Root(), "launches"))
}

func runAgents(t *testing.T, w loop.Workspace, n int) *Result {
	t.Helper()
	res, err := Run(context.Background(), w, Options{Agents: n})
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
	w := agentsRepo(t, func(w loop.Workspace) string {
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
	if res.Outcome != loop.RunPassed || len(res.Merged) != 4 {
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
		{"identical-3", "halt_after_identical: 3", 2, 2, "echo same failure; exit 1", 6, loop.RunHalted, 4},
		{"identical-4", "halt_after_identical: 4", 2, 2, "echo same failure; exit 1", 8, loop.RunHalted, 6},
		{"max-retries-4", "max_retries: 4", 1, 2, "echo failure $(wc -l < " + "LAUNCHES" + "); exit 1", 5, loop.RunHalted, 4},
		{"cap-5", "global_cap: 5", 4, 4, "echo failure $(wc -l < LAUNCHES); exit 1", 9, loop.RunCapReached, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var summaries []string
			for i := 0; i < tc.issues; i++ {
				summaries = append(summaries, fmt.Sprintf("issue %d", i))
			}
			w := agentsRepo(t, func(w loop.Workspace) string {
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
			s, err := session.Load(w.Path(loop.StateFile))
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
func runTwoMerging(t *testing.T, w loop.Workspace) (*Result, []string) {
	t.Helper()
	var mu sync.Mutex
	var merges []string
	res, err := Run(context.Background(), w, Options{Agents: 2, RunOptions: loop.RunOptions{Step: func(s loop.Step) {
		if s.Kind == loop.StepMerge {
			mu.Lock()
			merges = append(merges, s.Issue+" "+s.Merge)
			mu.Unlock()
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != loop.RunPassed || len(res.Merged) != 2 {
		t.Fatalf("RunAgents = %s %q; merges %q", res.Outcome, res.Reason, merges)
	}
	return res, merges
}

// Two agents change one line of one file: the second merge conflicts,
// which is a failure of its issue naming the file, sent back to its agent;
// its next attempt, rebased, merges.
func TestAgentsConflict(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
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
		h, _ := os.ReadFile(w.Path(loop.HistoryFile))
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
	w := agentsRepo(t, func(w loop.Workspace) string {
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
	w := agentsRepo(t, func(loop.Workspace) string { return "" }, "sneaky")
	gitIn(t, w.Root(), "rm", "-q", "--cached", ".gitignore")
	os.Remove(filepath.Join(w.Root(), ".gitignore"))
	gitIn(t, w.Root(), "add", loop.DefaultDir)
	gitIn(t, w.Root(), "commit", "-qm", "track the workspace")
	cfg := "retry:\n  max_retries: 1\nagent:\n  command: '" + logLaunch(w) + "echo hand >> " + loop.DefaultDir + "/issue_queue.md'\ngates:\n  - name: test\n    command: 'true'\n"
	os.WriteFile(w.Path(loop.ConfigFile), []byte(cfg), 0o644)
	gitIn(t, w.Root(), "commit", "-qam", "config")
	res := runAgents(t, w, 2)
	if len(res.Merged) != 0 {
		t.Fatalf("merged %v", res.Merged)
	}
	q, _ := queue.Load(w.Path(loop.QueueFile))
	is := q.Issues[0]
	if d := is.Section(queue.SectionFailureDetails); d == nil || !strings.Contains(d.Body(), "the agent's commits change "+loop.DefaultDir+"/, which is orchestrate's: "+loop.DefaultDir+"/issue_queue.md") {
		t.Errorf("Failure Details: %v", d)
	}
}

// No git, or a detached HEAD: a clear error before anything starts.
func TestAgentsNeedGit(t *testing.T) {
	w := newTestWorkspace(t, "agent:\n  command: 'true'\ngates:\n  - name: t\n    command: 'true'\n")
	_, err := Run(context.Background(), w, Options{Agents: 2})
	if err == nil || !strings.Contains(err.Error(), "run --agents needs a git repository") {
		t.Errorf("RunAgents outside git: %v", err)
	}
}

// orchestrate abort and the sentinel stop every agent at its next decision
// point: no agent launches again, and no new issue is claimed.
func TestAgentsStopAtDecisionPoints(t *testing.T) {
	for _, tc := range []struct{ file, outcome string }{{loop.AbortFile, loop.RunAborted}, {loop.SentinelFile, loop.RunNothing}} {
		t.Run(tc.file, func(t *testing.T) {
			w := agentsRepo(t, func(w loop.Workspace) string {
				return "agent:\n  command: '" + logLaunch(w) + "true'\ngates:\n  - name: never\n    command: 'echo no; exit 1'\n"
			}, "one", "two", "three")
			var once sync.Once
			res, err := Run(context.Background(), w, Options{Agents: 2, RunOptions: loop.RunOptions{Step: func(s loop.Step) {
				if s.Kind == loop.StepCheck {
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

// An issue resolved, skipped or removed by hand while its agent works on
// it (its gates failed; a person saw to it meanwhile) is not launched on
// again: the agent's run ends, nothing to do, before its next launch, and
// the run goes on to the next issue.
func TestAgentsIssueResolvedMeanwhileNotLaunchedAgain(t *testing.T) {
	for _, tc := range []struct{ name, status, says string }{
		{"resolved", queue.StatusResolved, " is resolved in the queue"},
		{"skipped", queue.StatusSkipped, " is skipped in the queue"},
		{"removed", "", " is no longer in the queue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := agentsRepo(t, func(w loop.Workspace) string {
				return "retry:\n  max_retries: 3\nagent:\n  command: '" + logLaunch(w) + "true'\ngates:\n  - name: never\n    command: 'echo no; exit 1'\n"
			}, "one")
			var once sync.Once
			var closed string
			res, err := Run(context.Background(), w, Options{Agents: 1, RunOptions: loop.RunOptions{Step: func(s loop.Step) {
				if s.Kind == loop.StepCheck {
					once.Do(func() {
						path := w.Path(loop.QueueFile)
						edited := []byte("# Issue Queue\n")
						if tc.status != "" {
							data, _ := os.ReadFile(path)
							edited = regexp.MustCompile(`\| Status \| \w+ \|`).ReplaceAll(data, []byte("| Status | "+tc.status+" |"))
						}
						os.WriteFile(path, edited, 0o644)
						closed = s.Issue
					})
				}
			}}})
			if err != nil {
				t.Fatal(err)
			}
			if n := launches(t, w)[closed]; n != 1 || len(res.Worked) != 1 {
				t.Fatalf("%d launches on %q, %s by hand after the first; %d issues worked; want 1, 1", n, closed, tc.name, len(res.Worked))
			}
			if wk := res.Worked[0]; wk.Outcome != loop.RunNothing || !strings.Contains(wk.Reason, closed+tc.says) {
				t.Errorf("its agent's run: %s (%s); want %s, saying%s", wk.Outcome, wk.Reason, loop.RunNothing, tc.says)
			}
			if tc.status == "" {
				return
			}
			q, err := queue.Load(w.Path(loop.QueueFile))
			if err != nil {
				t.Fatal(err)
			}
			if is := q.Issue(closed); is == nil || is.Status() != tc.status || claim.Of(is).Holder != "" {
				t.Errorf("%s after the run: %v; want %s, no holder", closed, is, tc.status)
			}
		})
	}
}

// A claim taken over while its agent works (a person reassigns the issue):
// the agent's next write is refused, it stops and leaves the claim to its
// new holder; the other agents go on and merge their work.
func TestAgentsTakeover(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agent:\n  command: '" + logLaunch(w) + "echo \"$id\" > \"$id.txt\"'\ngates:\n  - name: own\n    command: 'echo failing; exit 1'\n"
	}, "taken", "kept")
	taken := "ISSUE-20241213-001"
	res, err := Run(context.Background(), w, Options{Agents: 2, RunOptions: loop.RunOptions{Step: func(s loop.Step) {
		if s.Kind == loop.StepAgent && s.Issue == taken && s.Loop == 1 {
			if _, err := w.Claims(nil).Claim(context.Background(), time.Now(), taken, "boss", 0, true); err != nil {
				t.Error(err)
			}
		}
	}}})
	if err != nil {
		t.Fatal(err)
	}
	var took *loop.Worked
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
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agent:\n  command: '" + logLaunch(w) + "echo \"$id\" > \"$id.txt\"'\ngates:\n  - name: own\n    command: 'ls ISSUE-*.txt'\n"
	}, "taken")
	taken := "ISSUE-20241213-001"
	res, err := Run(context.Background(), w, Options{Agents: 2, RunOptions: loop.RunOptions{Step: func(s loop.Step) {
		if s.Kind == loop.StepQueued && s.Issue == taken {
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

// testNow is when the tests' issues are filed.
var testNow = time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)

// newTestWorkspace is a workspace with config, outside git.
func newTestWorkspace(t *testing.T, config string) loop.Workspace {
	t.Helper()
	w := loop.Workspace{Dir: filepath.Join(t.TempDir(), loop.DefaultDir)}
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path(loop.ConfigFile), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

func loadIssue(t *testing.T, w loop.Workspace, id string) *queue.Issue {
	t.Helper()
	q, err := queue.Load(w.Path(loop.QueueFile))
	if err != nil {
		t.Fatal(err)
	}
	is := q.Issue(id)
	if is == nil {
		t.Fatalf("no %s in the queue", id)
	}
	return is
}

// historyOf reads history.csv: the text columns of each row, by the names
// of its header.
func historyOf(t *testing.T, w loop.Workspace) []analytics.Event {
	t.Helper()
	f, err := os.Open(w.Path(loop.HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("history.csv: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	var events []analytics.Event
	for _, r := range rows[1:] {
		events = append(events, analytics.Event{RunID: r[col["run_id"]], Event: r[col["event"]], IssueID: r[col["issue_id"]],
			Gate: r[col["gate"]], Outcome: r[col["outcome"]], Signature: r[col["signature"]], Detail: r[col["detail"]]})
	}
	return events
}

// Agents that wait for claims held elsewhere (another machine's, their
// leases not lapsed yet) say so once the wait reaches two seconds, not
// before, and once: what they wait for and until when. A wait that ended
// and begins again is said again.
func TestAgentsSayTheirWait(t *testing.T) {
	var said []string
	w := loop.Workspace{Notify: func(msg string) { said = append(said, msg) }}
	p := &pool{w: w}
	t0 := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	held := []string{"ISSUE-20241213-001 (a@another-machine/1, lease until 2024-12-13T10:00:30Z)"}
	until := t0.Add(30 * time.Second)
	for _, step := range []struct {
		at   time.Duration
		held []string
		want int
	}{
		{0, held, 0},
		{waitSaid - time.Millisecond, held, 0},
		{waitSaid, held, 1},
		{5 * time.Second, held, 1},
		{6 * time.Second, nil, 1},
		{7 * time.Second, held, 1},
		{7*time.Second + waitSaid, held, 2},
	} {
		p.sayWait(step.held, until, t0.Add(step.at))
		if len(said) != step.want {
			t.Fatalf("at %v: said %d times, want %d: %q", step.at, len(said), step.want, said)
		}
	}
	want := "warning: waiting for claims of another run or machine: " + held[0] + "; until 2024-12-13T10:00:30Z at the latest"
	if !strings.HasPrefix(said[0], want) {
		t.Errorf("said %q, want it to begin %q", said[0], want)
	}
}

// A gate that asks a person keeps the loop's own run of the gates before
// the train (see loop.ChecksOnLanding): the work waits for the person's
// approval, and is neither put on the train, where no approval
// is asked and the gate can only fail, nor sent back to its agent for it.
func TestAgentsHumanGateAskedBeforeTheTrain(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
		return "agents:\n  worktrees: " + t.TempDir() + "\n" +
			"agent:\n  command: '" + logLaunch(w) + `echo "$id" > "$id.txt"'` + "\n" +
			"gates:\n  - name: own\n    command: 'ls ISSUE-*.txt'\n  - name: sign-off\n    type: human\n    prompt: Read it\n"
	}, "one", "two")
	res := runAgents(t, w, 2)
	if len(res.Merged) != 0 {
		t.Errorf("merged %v before a person approved", res.Merged)
	}
	for id, n := range launches(t, w) {
		if n != 1 {
			t.Errorf("%s launched %d times; want once, its work waiting for the person", id, n)
		}
	}
	counts := map[string]int{}
	for _, e := range historyOf(t, w) {
		counts[e.Event+"/"+e.Outcome]++
	}
	// One request, or one per agent when both ask at once.
	if counts["approval/requested"] < 1 || counts["merge/fail"] != 0 || counts["retry_triggered/"] != 0 {
		t.Errorf("history: %v; want an approval requested, no merge failed, no retry", counts)
	}
}

// An attempt whose gates fail where they first run, on the train, is a
// failed attempt as one in its worktree is: its commit is undone, its
// changes left to the next attempt, and the issue lands as one commit,
// with no merge failure in the history. Left, each failed attempt's commit
// landed too, with the one that passed.
func TestAgentsFailedAttemptLandsAsOneCommit(t *testing.T) {
	w := agentsRepo(t, func(w loop.Workspace) string {
		tries := filepath.Join(w.Root(), "tries")
		// The first launch on an issue writes its file wrong; the next
		// writes it right.
		return "agents:\n  worktrees: " + t.TempDir() + "\n" +
			"agent:\n  command: '" + logLaunch(w) + `if grep -qx "$id" ` + tries + `; then echo done > "$id.txt"; else echo "$id" >> ` + tries + `; echo wrong > "$id.txt"; fi'` + "\n" +
			"gates:\n  - name: done\n    command: 'for f in ISSUE-*.txt; do grep -qx done \"$f\" || { echo \"$f: not done\"; exit 1; }; done'\n"
	}, "one", "two")
	res := runAgents(t, w, 2)
	if res.Outcome != loop.RunPassed || len(res.Merged) != 2 {
		t.Fatalf("RunAgents = %s %q, merged %v", res.Outcome, res.Reason, res.Merged)
	}
	for id, n := range launches(t, w) {
		if n != 2 {
			t.Errorf("%s launched %d times; want 2", id, n)
		}
		if n := strings.Count(gitIn(t, w.Root(), "log", "--format=%s", "main"), id+":"); n != 1 {
			t.Errorf("%s is in %d commits on main; want 1:\n%s", id, n, gitIn(t, w.Root(), "log", "--format=%s", "main"))
		}
	}
	for _, e := range historyOf(t, w) {
		if e.Event == "merge" && e.Outcome == "fail" {
			t.Errorf("a merge failure in the history: %+v", e)
		}
	}
}
