package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Several agents on one queue, with the real CLI: two Claude Code sessions
// at once under run --agents 2, each in its own worktree; and two sessions
// a person starts by hand in two linked worktrees, whose Stop hooks share
// the one queue.

// overlap notes when each conversation's first request came and its last
// went, to show that two agents worked at once.
type overlap struct {
	mu    sync.Mutex
	spans map[string][2]time.Time
}

func (o *overlap) note(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.spans[key]
	now := time.Now()
	if !ok {
		s[0] = now
	}
	s[1] = now
	o.spans[key] = s
}

// writesSlowly is an agent that writes path, waits for its twin to be at
// work too (at most a while), then says it is done.
func writesSlowly(o *overlap, key, path, content string) script {
	return func(c *conv) turn {
		o.note(key)
		if c.answered() {
			return say("I wrote " + path + ".")
		}
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			o.mu.Lock()
			n := len(o.spans)
			o.mu.Unlock()
			if n >= 2 {
				break
			}
		}
		return turn{Tools: []tool{write(path, content)}}
	}
}

// The two agents' gate: each issue's file, once its agent wrote it.
const agentsProject = "#!/bin/sh\nfor f in *.txt; do grep -q done \"$f\" || { echo \"$f is not done\"; exit 1; }; done\n"

var claimRow = regexp.MustCompile(`(?m)^[^,]*,[^,]*,[^,]*,claim,(ISSUE-[0-9-]+),,(\d+),`)

// Two real Claude Code sessions at once under run --agents 2: each claims
// its own issue, works in its own worktree, its gate passes there, and both
// are merged into main; no issue is claimed twice.
func TestRunTwoAgents(t *testing.T) {
	o := &overlap{spans: map[string][2]time.Time{}}
	m := newModel(t,
		route{"AGENTONE", writesSlowly(o, "one", "one.txt", "done\n")},
		route{"AGENTTWO", writesSlowly(o, "two", "two.txt", "done\n")},
	)
	p := newProject(t, m, map[string]string{"check.sh": agentsProject, ".gitignore": ".orchestrator/\n"})
	p.mustOrchestrate("init")
	p.config("agent:\n  profile: claude\ngates:\n  - name: check\n    command: sh check.sh\n")
	p.mustOrchestrate("issue", "add", "--summary", "AGENTONE: write one.txt saying done", "--auto-retry", "true")
	p.mustOrchestrate("issue", "add", "--summary", "AGENTTWO: write two.txt saying done", "--auto-retry", "true")

	out, code := p.orchestrate("run", "--agents", "2")
	if code != 0 {
		for _, c := range m.requests("AGENTONE") {
			t.Logf("request: first %.300q\nlast %.600q", c.first(), c.last())
		}
		t.Fatalf("orchestrate run --agents 2: exit %d\n%s", code, out)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if got := p.read(f); got != "done\n" {
			t.Errorf("%s on main = %q", f, got)
		}
	}
	log := p.git("log", "--format=%s", "main")
	if !strings.Contains(log, "AGENTONE") || !strings.Contains(log, "AGENTTWO") {
		t.Errorf("main's log:\n%s", log)
	}
	one, two := o.spans["one"], o.spans["two"]
	if one[0].IsZero() || two[0].IsZero() || !one[0].Before(two[1]) || !two[0].Before(one[1]) {
		t.Errorf("the two agents did not work at once: %v, %v", one, two)
	}
	// Each worked in a worktree, not in the checkout.
	for _, key := range []string{"AGENTONE", "AGENTTWO"} {
		for _, c := range m.requests(key) {
			if strings.Contains(c.all(), p.Dir+"/one.txt") || strings.Contains(c.all(), p.Dir+"/two.txt") {
				t.Errorf("%s wrote in the main checkout", key)
			}
		}
	}
	hist, err := os.ReadFile(p.path(".orchestrator/history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]int{}
	for _, m := range claimRow.FindAllStringSubmatch(string(hist), -1) {
		claims[m[1]+"@"+m[2]]++
	}
	if len(claims) != 2 {
		t.Errorf("claims: %v", claims)
	}
	for k, n := range claims {
		if n != 1 {
			t.Errorf("%s claimed %d times", k, n)
		}
	}
	if out := p.git("worktree", "list"); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
}

// Two Claude Code sessions a person starts by hand in two linked
// worktrees of one repository: each Stop hook finds the main worktree's
// queue, runs the gate in its own worktree, sends its own agent back with
// its own failure, and resolves its own issue.
func TestStopHooksInLinkedWorktrees(t *testing.T) {
	m := newModel(t, route{"LINKEDA", fixInSteps}, route{"LINKEDB", fixInSteps})
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	p.git("add", "-A")
	p.git("commit", "-qm", "orchestrate")
	dirs := map[string]string{}
	for _, name := range []string{"a", "b"} {
		dirs[name] = filepath.Join(filepath.Dir(p.Dir), "linked-"+name)
		p.git("worktree", "add", "-q", dirs[name])
	}
	var wg sync.WaitGroup
	outs := map[string]string{}
	codes := map[string]int{}
	var mu sync.Mutex
	for name, key := range map[string]string{"a": "LINKEDA", "b": "LINKEDB"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, code := p.claudeEdits(filepath.Join("..", "linked-"+name), key+": make check.sh pass")
			mu.Lock()
			outs[name], codes[name] = out, code
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, dir := range dirs {
		if codes[name] != 0 {
			t.Fatalf("claude in %s: exit %d\n%s", dir, codes[name], outs[name])
		}
		data, err := os.ReadFile(filepath.Join(dir, "state.txt"))
		if err != nil || string(data) != "fixed=2\n" {
			t.Errorf("%s/state.txt = %q, %v; want the fix its own feedback led to", dir, data, err)
		}
	}
	for _, key := range []string{"LINKEDA", "LINKEDB"} {
		if n := len(hookFeedback(m, key)); n != 1 {
			t.Errorf("%s got the hook's feedback %d times; want 1", key, n)
		}
	}
	// One queue, the main worktree's: an issue per session, both resolved;
	// the linked worktrees' own copies untouched.
	q := p.read(".orchestrator/issue_queue.md")
	if n := len(statusRow.FindAllString(q, -1)); n != 2 {
		t.Errorf("the main queue has %d issues; want 2:\n%s", n, q)
	}
	for _, st := range statusRow.FindAllStringSubmatch(q, -1) {
		if st[1] != "resolved" {
			t.Errorf("an issue is %s:\n%s", st[1], q)
		}
	}
	for _, dir := range dirs {
		if st := strings.TrimSpace(gitStatus(t, p, dir)); st != "?? state.txt" && st != "M state.txt" {
			t.Errorf("%s: git status %q: only state.txt should have changed", dir, st)
		}
	}
}

func gitStatus(t *testing.T, p *project, dir string) string {
	t.Helper()
	out, code := p.exec(dir, "", "git", "status", "--porcelain")
	if code != 0 {
		t.Fatalf("git status in %s: %s", dir, out)
	}
	return out
}
