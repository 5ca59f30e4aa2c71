package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/remote"
)

// Agents on many machines, with the real CLI: two clones of one bare
// remote each run orchestrate run --agents 1 --remote origin at once, each
// with Claude Code as its agent; the claims, the queue and the merged work
// meet on the remote.

// issueHeading is the heading of the issue in the agent's prompt, its ID
// captured (the prompt's context names others: Claude Code adds the recent
// commits).
var issueHeading = regexp.MustCompile(`(?m)^## (ISSUE-[0-9]{8}-[0-9]{3,}):`)

// writesIssueFile is an agent that writes <its issue's ID>.txt (the ID read
// from its prompt): a draft first, then, told again (the gate's feedback,
// in its resumed session), done.
func writesIssueFile(c *conv) turn {
	if c.answered() {
		return say("I wrote the file.")
	}
	id := issueHeading.FindStringSubmatch(c.first())
	if id == nil {
		return say("My prompt names no issue.")
	}
	content := "draft\n"
	if c.calls() > 0 {
		content = "done\n"
	}
	return turn{Tools: []tool{write(id[1]+".txt", content)}}
}

// The gate of the machines' project: the file of the issue whose branch
// (orchestrate/<issue>) is checked out says done; it fails until the
// issue's agent wrote it so.
const issueFileCheck = "#!/bin/sh\nid=$(git rev-parse --abbrev-ref HEAD)\nid=${id#orchestrate/}\n" +
	"grep -qx done \"$id.txt\" || { echo \"$id.txt: $(cat \"$id.txt\" 2>&1), want done\"; exit 1; }\n"

// clone is a machine: a clone of bare in a directory of its own, with its
// own home, data directory and git identity, its agent CLI pointed at m.
func (p *project) clone(bare, name string, m *model) *project {
	p.t.Helper()
	root := filepath.Join(filepath.Dir(p.Dir), name)
	c := &project{t: p.t, Dir: filepath.Join(root, "repo"), Home: filepath.Join(root, "home")}
	if err := os.MkdirAll(c.Home, 0o755); err != nil {
		p.t.Fatal(err)
	}
	set := map[string]string{
		"HOME": c.Home, "XDG_CONFIG_HOME": filepath.Join(c.Home, ".config"), "XDG_DATA_HOME": filepath.Join(root, "data"),
		"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": name + "@example.com",
		"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": name + "@example.com",
		"ANTHROPIC_BASE_URL": m.URL,
	}
	for _, kv := range p.env {
		if k, _, _ := strings.Cut(kv, "="); set[k] == "" {
			c.env = append(c.env, kv)
		}
	}
	for k, v := range set {
		c.env = append(c.env, k+"="+v)
	}
	if out, code := c.exec(root, "", "git", "clone", "-q", bare, c.Dir); code != 0 {
		p.t.Fatalf("git clone: exit %d\n%s", code, out)
	}
	p.t.Cleanup(func() { waitAnalytics(c.path(".orchestrator")) })
	return c
}

// machines is a bare repository, the remote, whose main holds a project
// with files, the claude profile, the gate sh check.sh and n issues of
// summary, its config and queue committed (the rest of the workspace
// ignored); and two clones of it, the machines, each with a scripted model
// of its own that answers by script.
func machines(t *testing.T, files map[string]string, summary string, n int, do script) (seed *project, bare string, ms []*project, models []*model) {
	t.Helper()
	models = []*model{newModel(t, route{"## ISSUE-", do}), newModel(t, route{"## ISSUE-", do})}
	files[".gitignore"] = ".orchestrator/*\n!.orchestrator/config.yaml\n!.orchestrator/issue_queue.md\n"
	seed = newProject(t, models[0], files)
	seed.mustOrchestrate("init")
	seed.config("retry:\n  strategy: same\nagent:\n  profile: claude\ngates:\n  - name: check\n    command: sh check.sh\n")
	for range n {
		seed.mustOrchestrate("issue", "add", "--summary", summary, "--auto-retry", "true")
	}
	seed.git("add", "-A")
	seed.git("commit", "-qm", "the queue")
	if got := seed.git("ls-files", ".orchestrator"); got != ".orchestrator/config.yaml\n.orchestrator/issue_queue.md\n" {
		t.Fatalf("the workspace's files committed:\n%s", got)
	}
	bare = filepath.Join(filepath.Dir(seed.Dir), "remote.git")
	seed.git("init", "-q", "--bare", "-b", "main", bare)
	seed.git("push", "-q", bare, "main")
	return seed, bare, []*project{seed.clone(bare, "machine-a", models[0]), seed.clone(bare, "machine-b", models[1])}, models
}

// runAll runs orchestrate run --agents 1 --remote origin on every machine
// at once, and checks that each exits 0 or 10 (nothing left to claim). It
// returns their outputs.
func runAll(t *testing.T, ms []*project) []string {
	t.Helper()
	outs, codes := make([]string, len(ms)), make([]int, len(ms))
	var wg sync.WaitGroup
	for i, mc := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], codes[i] = mc.orchestrate("run", "--agents", "1", "--remote", "origin", "--lease", "30s")
		}()
	}
	wg.Wait()
	for i := range ms {
		if codes[i] != 0 && codes[i] != 10 {
			t.Errorf("machine %d: exit %d; want 0 or 10", i, codes[i])
		}
	}
	return outs
}

// logMachines logs, for a failed test, what each machine printed and the
// requests its model got.
func logMachines(t *testing.T, outs []string, models []*model) {
	t.Helper()
	if t.Failed() {
		for i := range outs {
			t.Logf("machine %d:\n%s\n%s", i, outs[i], models[i].dump(600))
		}
	}
}

// Two machines, clones of one bare remote, each run --agents 1 --remote
// origin at once with the real Claude Code on four issues: each issue is
// worked by one machine only, merged onto the remote's main exactly once,
// resolved in the shared queue, its claim released; both runs end well.
func TestClaudeTwoMachines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two machines' runs with the real CLI")
	}
	const issues = 4
	_, bare, ms, models := machines(t, map[string]string{"check.sh": issueFileCheck}, "write this issue's file saying done", issues, writesIssueFile)
	outs := runAll(t, ms)
	ids := wantLanded(t, ms[0], bare, issues)
	for _, id := range ids {
		if got, code := ms[0].exec(ms[0].Dir, "", "git", "-C", bare, "show", "main:"+id+".txt"); code != 0 || got != "done\n" {
			t.Errorf("%s.txt on the remote's main: %q (exit %d); want done", id, got, code)
		}
	}
	wantWorkedOnce(t, models, ids)
	logMachines(t, outs, models)
}

// wantLanded checks the bare remote: the shared queue has n issues, every
// one resolved, its commit on main exactly once, its claim released. It
// returns the issues' IDs.
func wantLanded(t *testing.T, p *project, bare string, n int) []string {
	t.Helper()
	q := queue.Parse([]byte(p.git("-C", bare, "show", remote.QueueRef+":"+remote.QueueFile)))
	if len(q.Issues) != n {
		t.Errorf("the shared queue has %d issues; want %d", len(q.Issues), n)
	}
	log := p.git("-C", bare, "log", "--format=%s", "main")
	var ids []string
	for _, is := range q.Issues {
		ids = append(ids, is.ID)
		if st := is.Field(queue.FieldStatus); st == nil || st.Value != queue.StatusResolved {
			t.Errorf("%s in the shared queue: status %v; want resolved", is.ID, st)
		}
		if k := strings.Count(log, is.ID+":"); k != 1 {
			t.Errorf("%s is on the remote's main %d times; want once:\n%s", is.ID, k, log)
		}
		rec := p.git("-C", bare, "log", "-1", "--format=%B", remote.Ref(is.ID))
		if !regexp.MustCompile(`(?m)^` + queue.FieldClaimedBy + `: *$`).MatchString(rec) {
			t.Errorf("%s's claim on the remote is not released:\n%s", is.ID, rec)
		}
	}
	return ids
}

// wantWorkedOnce checks that each issue's prompt came to one machine's
// model only, and that every machine worked some issue.
func wantWorkedOnce(t *testing.T, models []*model, ids []string) {
	t.Helper()
	worked := make([]int, len(models))
	for _, id := range ids {
		var by []int
		for i, m := range models {
			if len(m.requests("## "+id+":")) > 0 {
				by = append(by, i)
				worked[i]++
			}
		}
		if len(by) != 1 {
			t.Errorf("%s was worked by machines %v; want exactly one", id, by)
		}
	}
	for i, n := range worked {
		if n == 0 {
			t.Errorf("machine %d worked no issue: %v", i, worked)
		}
	}
}

// await waits until n conversations are at work, at most d.
func (o *overlap) await(n int, d time.Duration) {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		o.mu.Lock()
		k := len(o.spans)
		o.mu.Unlock()
		if k >= n {
			return
		}
	}
}

func read(path string) tool { return tool{"Read", map[string]any{"file_path": path}} }

// lastTool is the name of the last tool the model called in c.
func lastTool(c *conv) string {
	name := ""
	for _, m := range c.Messages {
		for _, bl := range m.blocks() {
			if bl.Type == "tool_use" {
				name = bl.Name
			}
		}
	}
	return name
}

// told is the text of the messages after the model's last answer (the
// CLI may add its own notes after the feedback or the tool's result).
func told(c *conv) string {
	var b strings.Builder
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			b.Reset()
			continue
		}
		b.WriteString(m.text())
	}
	return b.String()
}

// numbered is a line of the Read tool's result: its number, then its text.
var numbered = regexp.MustCompile(`^\s*\d+(?:→|\t)(.*)$`)

// resolved is a file the Read tool showed, without its conflict markers:
// both sides kept.
func resolved(shown string) string {
	var b strings.Builder
	for _, line := range strings.Split(shown, "\n") {
		m := numbered.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[1], "<<<<<<<") || m[1] == "=======" || strings.HasPrefix(m[1], ">>>>>>>") {
			continue
		}
		b.WriteString(m[1] + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// notesLine is an agent that notes its issue done at the end of notes.txt,
// a file every issue's work changes at the same place: its first write
// waits (a while at most) until the other machine's agent is at work too,
// so that both change the file at once and the second merge conflicts.
// Told its work is back with the conflict marked, it reads the file and
// writes it again without the markers, both sides kept.
func notesLine(o *overlap) script {
	return func(c *conv) turn {
		id := issueHeading.FindStringSubmatch(c.first())
		if id == nil {
			return say("My prompt names no issue.")
		}
		o.note(id[1])
		switch {
		case !c.answered() && strings.Contains(told(c), "each conflict marked in its file"):
			return turn{Tools: []tool{read("notes.txt")}}
		case c.answered() && lastTool(c) == "Read":
			return turn{Tools: []tool{write("notes.txt", resolved(told(c)))}}
		case c.answered():
			return say("Done.")
		}
		o.await(2, 20*time.Second)
		return turn{Tools: []tool{write("notes.txt", "notes\n"+id[1]+" done\n")}}
	}
}

// The gate of the notes project: notes.txt notes the issue whose branch
// (orchestrate/<issue>) is checked out.
const notesCheck = "#!/bin/sh\nid=$(git rev-parse --abbrev-ref HEAD)\nid=${id#orchestrate/}\n" +
	"grep -qx \"$id done\" notes.txt || { echo \"notes.txt does not note $id\"; exit 1; }\n"

// Two machines whose agents change one line of one file at once: the
// second to land conflicts with the first's work on the remote's main; its
// work is put back onto the remote's main with the conflict marked in the
// file, which a headless Claude Code (allowed the gate's command only, no
// git) resolves by editing it; both land, resolved, with both lines.
func TestClaudeTwoMachinesConflict(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two machines' runs with the real CLI")
	}
	o := &overlap{spans: map[string][2]time.Time{}}
	files := map[string]string{"notes.txt": "notes\n", "check.sh": notesCheck}
	_, bare, ms, models := machines(t, files, "note this issue done in notes.txt", 2, notesLine(o))
	outs := runAll(t, ms)
	ids := wantLanded(t, ms[0], bare, 2)
	notes := ms[0].git("-C", bare, "show", "main:notes.txt")
	for _, id := range ids {
		if !strings.Contains(notes, "\n"+id+" done\n") {
			t.Errorf("notes.txt on the remote's main does not note %s:\n%s", id, notes)
		}
	}
	if strings.Contains(notes, "<<<<<<<") || strings.Contains(notes, ">>>>>>>") {
		t.Errorf("notes.txt on the remote's main holds conflict markers:\n%s", notes)
	}
	if !strings.Contains(strings.Join(outs, "\n"), "merge fail: merge conflict rebasing onto origin/main in notes.txt") {
		t.Error("no merge conflicted: the two agents did not work at once")
	}
	wantWorkedOnce(t, models, ids)
	logMachines(t, outs, models)
}
