package e2e

import (
	"encoding/csv"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/analytics"
)

// The scenarios: the real Claude Code CLI, driven by a scripted model,
// with orchestrate as its Stop hook, its driver (orchestrate run) and its
// review gate.

// A Go project whose test fails until Add adds.
var calcProject = map[string]string{
	"go.mod":  "module calc\n\ngo 1.22\n",
	"calc.go": "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n",
	"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
		"\tif got := Add(2, 3); got != 5 {\n\t\tt.Fatalf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
}

const calcFixed = "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n"

// orchestrate run with the configuration orchestrate init writes: the agent
// runs the project's check (allowed), edits the file (allowed), the fix lands,
// the run exits 0, and history.csv has what the agent reported of its use.
func TestRunWithInitDefaults(t *testing.T) {
	m := newModel(t, route{"FIXCALC", fixCalc})
	p := newProject(t, m, calcProject)
	p.mustOrchestrate("init")
	runFixCalc(t, p, m, "claude")
	// One launch, one usage row: three model turns of the scripted usage.
	us := p.usage()
	if len(us) != 1 {
		t.Fatalf("usage rows = %+v; want 1", us)
	}
	u := us[0]
	if !uuidRe.MatchString(u.Session) || u.Turns != 3 || u.InputTokens != 3*usageIn || u.OutputTokens != 3*usageOut || u.CostUSD <= 0 {
		t.Errorf("usage = %+v; want a session UUID, 3 turns, %d input and %d output tokens, a cost", u, 3*usageIn, 3*usageOut)
	}
}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// reviewerRoute answers every reviewer: nothing found. It records nothing
// itself: the model keeps every request.
var reviewerRoute = route{"You are reviewing a change", func(c *conv) turn { return say("no findings") }}

// fixInSteps is an agent that writes state.txt with fixed=1, then, each time
// it is told more (the next prompt, the Stop hook's feedback), fixed=2, 3 …
func fixInSteps(c *conv) turn {
	if c.answered() {
		return say("I changed state.txt.")
	}
	return turn{Tools: []tool{write("state.txt", "fixed="+strconv.Itoa(c.calls()+1)+"\n")}}
}

// check.sh passes once state.txt says fixed=2.
var stepsProject = map[string]string{
	"state.txt": "fixed=0\n",
	"check.sh":  "#!/bin/sh\ngrep -qx fixed=2 state.txt || { echo \"state.txt: $(cat state.txt), want fixed=2\"; exit 1; }\n",
}

// A review gate whose reviewers are Claude Code, read-only.
const reviewGates = `
gates:
  - name: check
    command: sh check.sh
  - name: review
    type: review
    command: 'claude -p --no-session-persistence --tools Read,Grep,Glob -- "$ORCHESTRATE_REVIEW_PROMPT"'
`

// The same, with reviewers whose conversations are saved: after a review,
// the most recent conversation in the directory is a reviewer's.
const savedReviewGates = `
gates:
  - name: check
    command: sh check.sh
  - name: review
    type: review
    command: 'claude -p --tools Read,Grep,Glob -- "$ORCHESTRATE_REVIEW_PROMPT"'
`

// A resumed agent continues its own conversation, exactly that one, while a
// review gate runs Claude Code reviewers in the same directory (the most
// recent conversation there is a reviewer's). The reviewers get no edit
// tools, are told to review only, and never trigger the gates through the
// Stop hook that init --claude installs.
func TestResumeOwnSessionWithReviewers(t *testing.T) {
	m := newModel(t, route{"STEPS", fixInSteps}, reviewerRoute)
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config("retry:\n  strategy: same\nagent:\n  profile: claude\n" + savedReviewGates)
	p.git("add", "-A")
	p.git("commit", "-qm", "orchestrate")

	out, code := p.orchestrate("run", "--task", "STEPS: make check.sh pass")
	if code != 0 {
		t.Fatalf("orchestrate run: exit %d\n%s", code, out)
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q", got)
	}
	hist := p.history()
	var agents []string
	for _, row := range hist {
		if row["event"] == analytics.EventAgent {
			agents = append(agents, strings.SplitN(row["detail"], ":", 2)[0])
		}
	}
	if strings.Join(agents, ",") != "fresh,resumed" {
		t.Errorf("agents = %q; want fresh, then resumed", agents)
	}
	us := p.usage()
	if len(us) != 2 || us[0].Session == "" || us[1].Session != us[0].Session {
		t.Errorf("usage rows = %+v; want two, of one session", us)
	}
	// The resumed launch sent the first launch's conversation: its prompt
	// and its write of fixed=1, then the resume prompt.
	reqs := m.requests("STEPS")
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.all(), `"content":"fixed=1\n"`) || !strings.Contains(last.all(), "fixed=1, want fixed=2") {
		t.Errorf("the resumed agent's last request does not hold its first conversation and the feedback:\n%s", tail(last.all(), 3000))
	}
	// Reviewers: one per loop that had a diff, each its own conversation,
	// read-only tools, told to review only, never the agent's conversation.
	revs := m.requests("You are reviewing a change")
	if len(revs) != 2 {
		t.Errorf("%d reviewer requests; want 2 (one per loop; a Stop hook that ran the gates would make more)", len(revs))
	}
	for _, c := range revs {
		for _, tl := range c.Tools {
			if tl.Name == "Write" || tl.Name == "Edit" || tl.Name == "Bash" || tl.Name == "NotebookEdit" {
				t.Errorf("a reviewer was offered %s", tl.Name)
			}
		}
		if !strings.Contains(c.first(), "This is a review only") || strings.Contains(c.all(), "STEPS") || c.turns() != 0 {
			t.Errorf("a reviewer's conversation is not a fresh review-only one:\n%s", tail(c.all(), 2000))
		}
	}
}

// mustOrchestrate runs orchestrate and fails the test on a non-zero exit.
func (p *project) mustOrchestrate(args ...string) string {
	p.t.Helper()
	out, code := p.orchestrate(args...)
	if code != 0 {
		p.t.Fatalf("orchestrate %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// config replaces the workspace's config.yaml.
func (p *project) config(yaml string) {
	p.t.Helper()
	p.write(".orchestrator/config.yaml", yaml)
	if out, code := p.orchestrate("validate"); code != 0 {
		p.t.Fatalf("orchestrate validate: exit %d\n%s", code, out)
	}
}

// history returns history.csv's rows, by column name.
func (p *project) history() []map[string]string {
	p.t.Helper()
	recs, err := csv.NewReader(strings.NewReader(p.read(".orchestrator/history.csv"))).ReadAll()
	if err != nil || len(recs) == 0 {
		p.t.Fatalf("history.csv: %v", err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for i, k := range recs[0] {
			if i < len(rec) {
				row[k] = rec[i]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// usage returns the usage rows of history.csv.
func (p *project) usage() []analytics.Usage {
	p.t.Helper()
	var out []analytics.Usage
	for _, row := range p.history() {
		if row["event"] != analytics.EventUsage {
			continue
		}
		u, err := analytics.ParseUsage(row["detail"])
		if err != nil {
			p.t.Fatalf("usage row %q: %v", row["detail"], err)
		}
		out = append(out, u)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// claudeEdits runs the CLI headless in dir as a person would, with edits
// accepted, the prompt as its argument.
func (p *project) claudeEdits(dir, prompt string, allowed ...string) (string, int) {
	p.t.Helper()
	args := []string{"-p", "--permission-mode", "acceptEdits", "--output-format", "json"}
	if len(allowed) > 0 {
		args = append(args, "--allowedTools")
		args = append(args, allowed...)
	}
	return p.claude(dir, prompt, args...)
}

// hookFeedback returns the requests of conversations matching match whose
// last message is the Stop hook's feedback on check.sh.
func hookFeedback(m *model, match string) []*conv {
	var out []*conv
	for _, c := range m.requests(match) {
		if strings.Contains(c.last(), "want fixed=2") && !c.answered() {
			out = append(out, c)
		}
	}
	return out
}

// The Stop hook: the agent says it is done, the gate fails, the hook sends
// it back with the feedback, it fixes the file, the gate passes, the issue
// is resolved and the agent stops.
func TestStopHookFixes(t *testing.T) {
	m := newModel(t, route{"HOOKFIX", fixInSteps}, reviewerRoute)
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	out, code := p.claudeEdits(".", "HOOKFIX: make check.sh pass")
	hookFixes(t, p, m, out, code)
}

// The Stop hook when the agent never fixes it: the same failure three
// times halts the issue, and the hook lets the agent stop.
func TestStopHookHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", neverFixes})
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	out, code := p.claudeEdits(".", "NEVER: make check.sh pass")
	hookHalts(t, p, m, out, code)
}

// No recursion through reviewers: the Stop hook runs a review gate whose
// reviewers are Claude Code in the same repository, with the same Stop hook;
// their stops never run the gates again.
func TestStopHookReviewersDoNotRecurse(t *testing.T) {
	m := newModel(t, route{"REVIEWED", fixInSteps}, reviewerRoute)
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config(reviewGates)
	p.git("add", "-A")
	p.git("commit", "-qm", "orchestrate")

	out, code := p.claudeEdits(".", "REVIEWED: make check.sh pass")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	// Two stops of the agent, one reviewer each; a reviewer's own stop
	// that ran the gates would launch more.
	if revs := m.requests("You are reviewing a change"); len(revs) != 2 {
		t.Errorf("%d reviewer requests; want 2", len(revs))
	}
	for _, c := range m.requests("You are reviewing a change") {
		if strings.Contains(c.all(), "Quality Gate") {
			t.Errorf("a reviewer got gate feedback:\n%s", tail(c.all(), 2000))
		}
	}
	if got := p.read("state.txt"); got != "fixed=2\n" {
		t.Errorf("state.txt = %q", got)
	}
}

// The hook knows its place: the agent cd's into a subdirectory (Claude
// Code's cwd follows it), and the Stop hook still finds the workspace and
// runs the gates.
func TestStopHookFromSubdirectory(t *testing.T) {
	m := newModel(t, route{"SUBDIR", func(c *conv) turn {
		switch {
		case c.calls() == 0:
			return turn{Tools: []tool{bash("cd sub")}}
		case c.answered():
			return say("Done.")
		}
		return turn{Tools: []tool{write("../state.txt", "fixed="+strconv.Itoa(c.calls())+"\n")}}
	}})
	files := map[string]string{"sub/README": "a subdirectory\n"}
	for k, v := range stepsProject {
		files[k] = v
	}
	p := newProject(t, m, files)
	p.mustOrchestrate("init", "--claude")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")

	out, code := p.claudeEdits(".", "SUBDIR: make check.sh pass", "Bash(cd *)")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	if n := len(hookFeedback(m, "SUBDIR")); n == 0 {
		reqs := m.requests("SUBDIR")
		t.Errorf("from a subdirectory, the Stop hook never sent the gate's feedback: it did not find the workspace; state.txt = %q; the last request:\n%s", p.read("state.txt"), tail(reqs[len(reqs)-1].all(), 1500))
	}
}

// A session that changed nothing stops at once: no gate runs, no issue is
// filed, even while a gate fails.
func TestStopHookUnchangedSession(t *testing.T) {
	m := newModel(t, route{"QUESTION", func(c *conv) turn { return say("42.") }})
	p := newProject(t, m, stepsProject)
	p.mustOrchestrate("init", "--claude")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")

	out, code := p.claudeEdits(".", "QUESTION: what is six times seven?")
	if code != 0 {
		t.Fatalf("claude: exit %d\n%s", code, out)
	}
	if n := len(hookFeedback(m, "QUESTION")); n != 0 {
		t.Errorf("a session that changed nothing got the gates' feedback %d times", n)
	}
	if q := p.read(".orchestrator/issue_queue.md"); strings.Contains(q, "## ISSUE-") {
		t.Errorf("a session that changed nothing filed an issue:\n%s", q)
	}
}
