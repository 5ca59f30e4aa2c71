package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
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

	"github.com/orchestrate-dev/orchestrate/queue"
)

// The kill trials attack the run as a hostile agent, a careless person and
// a broken machine would, all at once: each issue's agent is honest, or
// plants git hooks and a file system monitor, or swaps its worktree for a
// link to the person's checkout, or sets its counts back; the person saves
// the queue in place, slowly, in chunks, while the runs claim; and a run or
// one of its agents is killed at a random moment. After each trial nothing
// may be lost, claimed twice, launched past its budget, or escape.

// trialAttacks are what an issue's agent does in a trial.
var trialAttacks = []string{"honest", "hooks", "link", "tamper"}

// trialMaxRetries is each issue's Max-Retries in the trials: an issue is
// launched at most 1 + trialMaxRetries times.
const trialMaxRetries = 1

// trialAgent is the agent of every issue in the trials, as a script: it
// notes its launch in $LAUNCHES, then does what $ATTACKS/<its issue> says.
// A hooks agent plants a hook of each kind orchestrate's git could run and
// a file system monitor, each noting its name in $MARKS, then does the
// work. A link agent puts a link to the person's checkout in its
// worktree's place. A tamper agent sets back its own issue's Retry-Count
// and Launch-Count and the run's total_auto_retries through
// $ORCHESTRATOR_DIR, and fails: it writes under orchestrate's lock and the person's (as a
// program that writes the files safely does; one that writes them
// unlocked can undo any write, of the person's or of orchestrate's, as
// docs/many-agents.md says), so that the trials measure what orchestrate
// promises, not what no one can.
const trialAgent = `id=${ORCHESTRATE_CLAIM%%:*}
echo "$id" >> "$LAUNCHES"
root=$(dirname "$ORCHESTRATOR_DIR")
case $(cat "$ATTACKS/$id") in
honest)
	sleep 0.$(( $$ % 5 )); echo "$id" > "$id.txt";;
hooks)
	common=$(git rev-parse --path-format=absolute --git-common-dir) && mkdir -p "$common/hooks" || exit 3
	for h in post-checkout post-commit post-merge post-rewrite pre-rebase reference-transaction prepare-commit-msg pre-commit commit-msg pre-auto-gc pre-push post-index-change; do
		printf '#!/bin/sh\necho %s >> "%s"\n' "$h" "$MARKS" > "$common/hooks/$h" && chmod +x "$common/hooks/$h"
	done
	printf '#!/bin/sh\necho fsmonitor >> "%s"\nexit 1\n' "$MARKS" > "$common/fsmon" && chmod +x "$common/fsmon"
	git config core.fsmonitor "$common/fsmon"
	echo "$id" > "$id.txt";;
link)
	d=$PWD; cd / && rm -rf "$d" && ln -s "$root" "$d";;
tamper)
	flock "$ORCHESTRATOR_DIR/.lock" flock "$PERSON_LOCK" sh -c '
	sed -i -e "/^## $1\$/,/^## /{s/^\(| *Retry-Count *| *\)[0-9][0-9]*/\10/;s/^\(| *Launch-Count *| *\)[0-9][0-9]*/\10/}" "$ORCHESTRATOR_DIR/issue_queue.md"
	[ ! -f "$ORCHESTRATOR_DIR/session_state.md" ] || sed -i -e "s/^\(| *total_auto_retries *| *\)[0-9][0-9]*/\10/" "$ORCHESTRATOR_DIR/session_state.md"' sh "$id"
	sleep 0.$(( $$ % 3 ));;
esac
`

// trialConfig is the workspace's config of the trials: the agent above,
// and a gate that passes once the issue's file is in the worktree.
func trialConfig(script string) string {
	return "retry:\n  max_retries: " + strconv.Itoa(trialMaxRetries) + "\n" +
		"agent:\n  command: 'sh " + script + "'\n" +
		"gates:\n  - name: test\n    command: 'test -f \"$(git rev-parse --abbrev-ref HEAD | sed s,orchestrate/,,).txt\"'\n"
}

// trialCount is the number of trials: ORCHESTRATE_TRIALS, else short under
// -short and full otherwise.
func trialCount(short, full int) int {
	if v, err := strconv.Atoi(os.Getenv("ORCHESTRATE_TRIALS")); err == nil {
		return v
	}
	if testing.Short() {
		return short
	}
	return full
}

// runTrials runs trials trials of one, side by side (they wait on their
// runs and kills more than they work), each with its seed, its tally
// summed into the whole at its end, and the command that replays it
// should it fail; the whole is logged once they are all done.
func runTrials(t *testing.T, trials int, one func(tr *trial, config string)) {
	seed := trialSeed()
	tally := &trialTally{attacks: map[string]int{}}
	var mu sync.Mutex
	start := time.Now()
	t.Cleanup(func() { t.Logf("%v in %v", tally, time.Since(start).Round(time.Second)) })
	name := t.Name()
	for i := range trials {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			own := &trialTally{attacks: map[string]int{}}
			defer func() {
				mu.Lock()
				tally.add(own)
				mu.Unlock()
			}()
			tr, cfg := newTrial(t, seed+int64(i), own)
			defer tr.replay(name)
			one(tr, cfg)
		})
	}
}

// trialSeed is the seed of the first trial, ORCHESTRATE_TRIAL_SEED or the
// clock; trial i's is the first's plus i, so that a failing trial is
// replayed alone with its own seed and ORCHESTRATE_TRIALS=1.
func trialSeed() int64 {
	if v, err := strconv.ParseInt(os.Getenv("ORCHESTRATE_TRIAL_SEED"), 10, 64); err == nil {
		return v
	}
	return time.Now().UnixNano()
}

// trialTally sums what the trials found.
type trialTally struct {
	trials, lostIssues, lostEdits, doubleClaims, overBudget, escapes int
	saves, runKills, agentKills                                      int
	attacks                                                          map[string]int
}

// add sums o into c.
func (c *trialTally) add(o *trialTally) {
	c.trials += o.trials
	c.lostIssues += o.lostIssues
	c.lostEdits += o.lostEdits
	c.doubleClaims += o.doubleClaims
	c.overBudget += o.overBudget
	c.escapes += o.escapes
	c.saves += o.saves
	c.runKills += o.runKills
	c.agentKills += o.agentKills
	for a, n := range o.attacks {
		c.attacks[a] += n
	}
}

func (c *trialTally) String() string {
	return fmt.Sprintf("%d trials: %d lost issues, %d lost hand edits, %d double claims, %d launches past 1 + Max-Retries, %d escapes; "+
		"%d in-place saves, %d runs and %d agents killed, agents: %d honest, %d planting hooks, %d swapping their worktree for a link, %d setting back their counts",
		c.trials, c.lostIssues, c.lostEdits, c.doubleClaims, c.overBudget, c.escapes,
		c.saves, c.runKills, c.agentKills, c.attacks["honest"], c.attacks["hooks"], c.attacks["link"], c.attacks["tamper"])
}

// trial is one trial's attacks and what they left: its random choices
// (all from its seed), the files the agents note in, and the person's
// saves.
type trial struct {
	t       *testing.T
	seed    int64
	rng     *rand.Rand
	tally   *trialTally
	dir     string            // the files below
	attacks map[string]string // by issue, what its agent does
	env     []string          // what the agents read: LAUNCHES, ATTACKS, MARKS, PERSON_LOCK
	killed  bool              // a run was killed
	saves   sync.WaitGroup
	mu      sync.Mutex
	notes   map[string][]string // by queue file, the notes the person's saves put in
	queues  []string            // the queue files, shown when the trial fails
	outs    []string            // what the runs said, shown when the trial fails
}

// newTrial makes trial i's files and the agent's script.
func newTrial(t *testing.T, seed int64, tally *trialTally) (*trial, string) {
	tr := &trial{t: t, seed: seed, rng: rand.New(rand.NewSource(seed)), tally: tally, dir: t.TempDir(),
		attacks: map[string]string{}, notes: map[string][]string{}}
	os.Mkdir(filepath.Join(tr.dir, "attacks"), 0o755)
	script := filepath.Join(tr.dir, "agent.sh")
	if err := os.WriteFile(script, []byte(trialAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	tr.env = []string{"LAUNCHES=" + filepath.Join(tr.dir, "launches"), "ATTACKS=" + filepath.Join(tr.dir, "attacks"),
		"MARKS=" + filepath.Join(tr.dir, "marks"), "PERSON_LOCK=" + filepath.Join(tr.dir, "person.lock")}
	tally.trials++
	return tr, trialConfig(script)
}

// assign gives each issue of the queue at path an attack at random.
func (tr *trial) assign(path string) {
	q, err := queue.Load(path)
	if err != nil {
		tr.t.Fatal(err)
	}
	for _, is := range q.Issues {
		a := trialAttacks[tr.rng.Intn(len(trialAttacks))]
		tr.attacks[is.ID] = a
		tr.tally.attacks[a]++
		if err := os.WriteFile(filepath.Join(tr.dir, "attacks", is.ID), []byte(a+"\n"), 0o644); err != nil {
			tr.t.Fatal(err)
		}
	}
}

// ids are the issues of the trial, in order.
func (tr *trial) ids() []string {
	var ids []string
	for id := range tr.attacks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// merges is whether the issue's agent does the work.
func (tr *trial) merges(id string) bool {
	return tr.attacks[id] == "honest" || tr.attacks[id] == "hooks"
}

// personEdit commits the person's file in root, then changes it without
// committing: the change must stay as it is.
func personEdit(t *testing.T, root string) {
	t.Helper()
	os.WriteFile(filepath.Join(root, "person.txt"), []byte("committed\n"), 0o644)
	gitRun(t, root, "add", "person.txt")
	gitRun(t, root, "commit", "-qm", "the person's file")
	os.WriteFile(filepath.Join(root, "person.txt"), []byte("the person's edit, not committed\n"), 0o644)
}

// startSaves has the person save the queue at path in place, one to three
// times, each at a random moment of the next two seconds: it opens the
// file to write it, reads it, puts a note of its own above the first issue,
// and writes it back from the start in chunks of 16 to 128 bytes, a pause
// of up to 30 ms after each, as a program that writes in place does.
func (tr *trial) startSaves(path string) {
	tr.queues = append(tr.queues, path)
	n := 1 + tr.rng.Intn(3)
	for k := range n {
		at := time.Duration(tr.rng.Intn(2000)) * time.Millisecond
		rng := rand.New(rand.NewSource(tr.rng.Int63()))
		note := fmt.Sprintf("A note the person typed (seed %d, save %d of %s).", tr.seed, k, filepath.Base(filepath.Dir(filepath.Dir(path))))
		tr.saves.Add(1)
		tr.tally.saves++
		go func() {
			defer tr.saves.Done()
			time.Sleep(at)
			if err := tr.save(path, note, rng); err != nil {
				tr.t.Errorf("the person's save: %v", err)
				return
			}
			tr.mu.Lock()
			tr.notes[path] = append(tr.notes[path], note)
			tr.mu.Unlock()
		}()
	}
}

// save is one save in place of the queue at path.
func (tr *trial) save(path, note string, rng *rand.Rand) error {
	lock, err := os.OpenFile(filepath.Join(tr.dir, "person.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	data = slices.Concat([]byte(note+"\n\n"), data)
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	for len(data) > 0 {
		n := min(len(data), 16+rng.Intn(113))
		if _, err := f.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		time.Sleep(time.Duration(rng.Intn(30)) * time.Millisecond)
	}
	return f.Close()
}

// kill kills (SIGKILL) the run, or one of the agents working under data,
// at a random moment of the next within.
func (tr *trial) kill(run *exec.Cmd, data string, within time.Duration) {
	time.Sleep(time.Duration(tr.rng.Int63n(int64(within))))
	if tr.rng.Intn(2) == 0 {
		run.Process.Signal(syscall.SIGKILL)
		tr.tally.runKills++
		tr.killed = true
	} else if pids := agentPIDs(data); len(pids) > 0 {
		syscall.Kill(pids[tr.rng.Intn(len(pids))], syscall.SIGKILL)
		tr.tally.agentKills++
	}
}

// safeGit runs git in dir with every hook and the file system monitor
// off: the test's own git must not run what an agent planted.
func safeGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitRun(t, dir, append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}, args...)...)
}

// checkPlanted counts an escape for each program an agent planted that
// ran: the marks file is read before any git of the test's.
func (tr *trial) checkPlanted() {
	if ran, _ := os.ReadFile(filepath.Join(tr.dir, "marks")); len(ran) > 0 {
		tr.tally.escapes++
		tr.t.Errorf("what an agent planted ran: %q", strings.Fields(string(ran)))
	}
}

// checkQueue checks the queue at path: every issue of the trial in it
// once, nothing else, no problem, every note of the person's saves in it.
func (tr *trial) checkQueue(path string, data []byte) {
	q := queue.Parse(data)
	var ids []string
	for _, is := range q.Issues {
		ids = append(ids, is.ID)
	}
	slices.Sort(ids)
	if len(q.Problems) > 0 || !slices.Equal(ids, tr.ids()) {
		tr.tally.lostIssues += max(1, len(tr.attacks)-len(ids))
		tr.t.Errorf("%s: issues %v, problems %v; want %v and none", path, ids, q.Problems, tr.ids())
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, note := range tr.notes[path] {
		if !bytes.Contains(data, []byte(note)) {
			tr.tally.lostEdits++
			tr.t.Errorf("%s: the person's edit %q is lost", path, note)
		}
	}
}

// checkBudget checks that no issue was launched past 1 + Max-Retries,
// whichever machine launched it. One exception is counted apart, and
// does not fail the trial: an agent that sets back its counts in a run
// that is killed before it puts them back (it does once the agent exits)
// leaves the next run counts of 0, and gets launches past its budget
// (TestCountsSetBackThenRunKilled).
func (tr *trial) checkBudget() {
	data, _ := os.ReadFile(filepath.Join(tr.dir, "launches"))
	for id, n := range countLines(string(data)) {
		if n > 1+trialMaxRetries {
			tr.tally.overBudget++
			tr.t.Errorf("%s (%s) launched %d times, past 1 + Max-Retries = %d", id, tr.attacks[id], n, 1+trialMaxRetries)
		}
	}
}

// checkHistory counts each issue claimed twice at one epoch in the
// histories given.
func (tr *trial) checkHistory(histories ...string) {
	epochs := map[string]string{}
	for _, path := range histories {
		hist, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(hist), "\n") {
			f := strings.Split(line, ",")
			if len(f) > 6 && f[3] == "claim" {
				k := f[4] + "@" + f[6]
				if prev, ok := epochs[k]; ok {
					tr.tally.doubleClaims++
					tr.t.Errorf("%s claimed twice at epoch %s (%s, then %s)", f[4], f[6], prev, path)
				}
				epochs[k] = path
			}
		}
	}
}

// checkBranch checks the branch main in dir holds nothing but the work
// merged: the commits before the trial (before of them), then one commit
// of each issue whose agent does the work, its file alone, and no file
// but those.
func (tr *trial) checkBranch(dir string, before int, files ...string) {
	log := safeGit(tr.t, dir, "log", "--format=%s", "main")
	subjects := strings.Split(log, "\n")
	want := slices.Clone(files)
	for _, id := range tr.ids() {
		n := strings.Count(log, id+":")
		if tr.merges(id) {
			want = append(want, id+".txt")
		}
		if tr.merges(id) && n != 1 {
			tr.t.Errorf("%s (%s) merged %d times", id, tr.attacks[id], n)
		}
		if !tr.merges(id) && n != 0 {
			tr.tally.escapes++
			tr.t.Errorf("%s (%s) merged %d times: its agent did not do the work", id, tr.attacks[id], n)
		}
	}
	got := strings.Fields(safeGit(tr.t, dir, "ls-tree", "-r", "--name-only", "main"))
	slices.Sort(want)
	if !slices.Equal(got, want) || len(subjects) > before+len(want)-len(files) {
		tr.tally.escapes++
		tr.t.Errorf("main holds %v in %d commits; want %v in at most %d:\n%s", got, len(subjects), want, before+len(want)-len(files), log)
	}
}

// checkCheckout checks the person's checkout at root: its uncommitted
// edit as it was, nothing else changed, its workspace there.
func (tr *trial) checkCheckout(root string) {
	data, _ := os.ReadFile(filepath.Join(root, "person.txt"))
	status := safeGit(tr.t, root, "status", "--porcelain", "--", "person.txt")
	if string(data) != "the person's edit, not committed\n" || status != "M person.txt" {
		tr.tally.escapes++
		tr.t.Errorf("the person's checkout: person.txt %q, status %q; want the edit, not committed", data, status)
	}
	if _, err := os.Stat(filepath.Join(root, ".orchestrator", "issue_queue.md")); err != nil {
		tr.tally.escapes++
		tr.t.Errorf("the checkout lost its queue: %v", err)
	}
}

// replay waits for the person's saves, and says, once the trial failed,
// how to run it again, with the queues as they are.
func (tr *trial) replay(test string) {
	tr.saves.Wait()
	if tr.t.Failed() {
		for _, out := range tr.outs {
			tr.t.Log(out)
		}
		for _, path := range tr.queues {
			// Each workspace's queue, the launches it counted apart and
			// its history: what each machine saw and did, in order.
			for _, name := range []string{filepath.Base(path), ".launches", "history.csv"} {
				data, _ := os.ReadFile(filepath.Join(filepath.Dir(path), name))
				tr.t.Logf("%s:\n%s", filepath.Join(filepath.Dir(path), name), data)
			}
		}
		tr.t.Errorf("replay this trial: ORCHESTRATE_TRIAL_SEED=%d ORCHESTRATE_TRIALS=1 go test -run '^%s$' ./cmd/orchestrate", tr.seed, test)
	}
}

// runUntilDone runs run() until it says nothing is left (exit 10, or 11
// when what is left waits for a person and it worked on nothing), at most rounds times; an exit
// other than 0, 10, 11 (issues exhausted) or 12 (not merged) fails the
// trial.
func runUntilDone(t *testing.T, rounds int, run func() (string, int)) {
	t.Helper()
	for i := 0; ; i++ {
		out, code := run()
		if code == exitNothing || code == exitPerson && strings.Contains(out, " 0 of 0 issues worked") {
			return
		}
		if i == rounds || (code != 0 && code != exitPerson && code != exitGateFailed) {
			t.Fatalf("run %d: exit %d:\n%s", i, code, out)
		}
	}
}
