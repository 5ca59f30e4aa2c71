package gate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/findings"

	"github.com/orchestrate-dev/orchestrate/config"
)

// gitRepo makes a repository with a commit and a change to review: main.go
// changed, new.go untracked, junk.log ignored, and a change in
// .orchestrator/, which the review leaves out.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("main.go", "package main\n\nfunc main() {}\n")
	write(".gitignore", "*.log\n")
	write(".orchestrator/issue_queue.md", "# Queue\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	write("main.go", "package main\n\nfunc main() { changed() }\n")
	write("new.go", "package main\n\nfunc changed() {}\n")
	write("junk.log", "ignored\n")
	write(".orchestrator/issue_queue.md", "# Queue\n\n## ISSUE-20241213-001\n")
	return dir
}

// script writes an executable shell script into a directory of its own,
// outside the repository, and returns its path.
func script(t *testing.T, name, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func reviewGate(name, command string) config.Gate {
	return config.Gate{Name: name, Type: config.TypeReview, Command: command, Timeout: 20 * time.Second,
		Enforcement: config.Blocking, FailOn: "P1", DiffBase: "HEAD"}
}

func dims(names ...string) []config.Dimension {
	var out []config.Dimension
	for _, n := range names {
		out = append(out, config.Dimension{Name: n, Prompt: "Look at " + n + "."})
	}
	return out
}

func evalOne(t *testing.T, g config.Gate, opts Options) Result {
	t.Helper()
	ev, err := Evaluate(context.Background(), []config.Gate{g}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Results[0]
}

// TestReviewThresholds: findings at fail_on or worse fail the gate; the
// others are reported and pass.
func TestReviewThresholds(t *testing.T) {
	repo := gitRepo(t)
	reviewer := script(t, "reviewer", `cat >/dev/null; echo "{\"priority\": \"$PRIO\", \"file\": \"main.go\", \"line\": 3, \"issue\": \"a $PRIO finding\"}"`)
	for failOn := findings.P0; failOn <= findings.P3; failOn++ {
		for prio := findings.P0; prio <= findings.P3; prio++ {
			g := reviewGate("review", reviewer)
			g.FailOn, g.Env = failOn.String(), map[string]string{"PRIO": prio.String()}
			r := evalOne(t, g, Options{RepoRoot: repo, DiffExclude: []string{".orchestrator"}})
			want, code := Pass, 0
			if prio <= failOn {
				want, code = Fail, 1
			}
			if r.Outcome != want || r.ExitCode != code || r.Review == nil || len(r.Review.Findings) != 1 {
				t.Errorf("fail_on %s, a %s finding: %s (exit %d, %q), review %+v; want %s", failOn, prio, r.Outcome, r.ExitCode, r.Err, r.Review, want)
				continue
			}
			if want == Fail && r.Err != fmt.Sprintf("1 finding at %s or worse (1 %s)", failOn, prio) && !(failOn == findings.P0 && r.Err == "1 finding at P0 (1 P0)") {
				t.Errorf("fail_on %s, a %s finding: Err = %q", failOn, prio, r.Err)
			}
			if !strings.Contains(r.Output, "### "+prio.String()+" "+prio.Title()+"\n- main.go:3 - a "+prio.String()+" finding\n") {
				t.Errorf("fail_on %s, a %s finding: Output = %q", failOn, prio, r.Output)
			}
		}
	}
}

// TestReviewDimensions: one reviewer per dimension, in parallel, each with
// its prompt; the findings merged and deduplicated; the diff on stdin with
// new files and without the workspace.
func TestReviewDimensions(t *testing.T) {
	repo := gitRepo(t)
	seen := t.TempDir()
	reviewer := script(t, "reviewer", fmt.Sprintf(`
cat > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.diff
printf '%%s' "$ORCHESTRATE_REVIEW_PROMPT" > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.prompt
echo "$1 $ORCHESTRATE_REVIEW_BASE $ORCHESTRATE_REVIEW_FAIL_ON $ORCHESTRATE_REVIEW_DIFF" > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.args
# Wait (5s at most) for the other reviewers: they run at once.
touch %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.here
i=0
while [ "$(ls %[1]s/*.here | wc -l)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
ls %[1]s/*.here | wc -l | tr -d ' ' > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.count
case "$ORCHESTRATE_REVIEW_DIMENSION" in
correctness)
	echo '{"priority": "P2", "file": "main.go", "line": 3, "issue": "Off by one", "suggestion": "use <"}'
	echo '{"priority": "P3", "file": "main.go", "line": 1, "issue": "naming"}' ;;
security)
	printf '### P0 Critical\n- main.go:3 - off by one.\n  Suggestion: check the bound\n\n### P1 Major\n- new.go:3 - the new function is empty\n' ;;
performance)
	echo 'no findings' ;;
esac
`, seen))
	g := reviewGate("code_review", reviewer+" {{dimension}}")
	g.Dimensions = dims("correctness", "security", "performance")
	g.Prompt = "Mind the API."
	logDir := t.TempDir()
	r := evalOne(t, g, Options{RepoRoot: repo, LogDir: logDir, DiffExclude: []string{".orchestrator"}})
	if r.Outcome != Fail || r.Err != "2 findings at P1 or worse (1 P0, 1 P1)" {
		t.Fatalf("outcome %s %q; want fail with 2 findings\n%s", r.Outcome, r.Err, r.Output)
	}
	want := []findings.Finding{
		{Priority: findings.P0, File: "main.go", Line: 3, Issue: "Off by one", Suggestion: "use <", Dimensions: []string{"correctness", "security"}},
		{Priority: findings.P1, File: "new.go", Line: 3, Issue: "the new function is empty", Dimensions: []string{"security"}},
		{Priority: findings.P3, File: "main.go", Line: 1, Issue: "naming", Dimensions: []string{"correctness"}},
	}
	if !reflect.DeepEqual(r.Review.Findings, want) {
		t.Errorf("findings =\n  %+v\nwant\n  %+v", r.Review.Findings, want)
	}
	var counts []string
	for _, rv := range r.Review.Reviewers {
		counts = append(counts, fmt.Sprintf("%s:%s:%d", rv.Name, rv.Outcome, rv.Findings))
		if _, err := os.Stat(rv.LogPath); err != nil {
			t.Errorf("reviewer %s: no log: %v", rv.Name, err)
		}
	}
	if want := []string{"correctness:pass:2", "security:pass:2", "performance:pass:0"}; !reflect.DeepEqual(counts, want) {
		t.Errorf("reviewers = %q; want %q", counts, want)
	}
	for _, d := range []string{"correctness", "security", "performance"} {
		diff, _ := os.ReadFile(filepath.Join(seen, d+".diff"))
		if !strings.Contains(string(diff), "+func main() { changed() }") || !strings.Contains(string(diff), "b/new.go") ||
			strings.Contains(string(diff), ".orchestrator") || strings.Contains(string(diff), "junk.log") {
			t.Errorf("reviewer %s got the diff\n%s\nwant main.go's change and new.go, not .orchestrator/ nor junk.log", d, diff)
		}
		prompt, _ := os.ReadFile(filepath.Join(seen, d+".prompt"))
		for _, s := range []string{"for " + d + " problems", "Look at " + d + ".", "Mind the API.", "fails on findings at P1 or worse", `{"priority": "P1", "file": "path/to/file.go"`, "no findings"} {
			if !strings.Contains(string(prompt), s) {
				t.Errorf("reviewer %s: prompt has no %q:\n%s", d, s, prompt)
			}
		}
		if n, _ := os.ReadFile(filepath.Join(seen, d+".count")); string(n) != "3\n" {
			t.Errorf("reviewer %s saw %q reviewers running; want 3: they run in parallel", d, n)
		}
		args, _ := os.ReadFile(filepath.Join(seen, d+".args"))
		if want := d + " HEAD P1 " + filepath.Join(logDir, "code_review.diff") + "\n"; string(args) != want {
			t.Errorf("reviewer %s: $1, base, fail_on, diff = %q; want %q", d, args, want)
		}
	}
	logText, _ := os.ReadFile(r.LogPath)
	for _, s := range []string{`review gate "code_review": the diff against HEAD`, "reviewer security: 2 findings", "code_review.reviewer-security.log", "outcome: fail: 2 findings", "### P0 Critical"} {
		if !strings.Contains(string(logText), s) {
			t.Errorf("gate log has no %q:\n%s", s, logText)
		}
	}

	// The feedback groups them by priority, in seed 003's form.
	d := NewFeedback(&Evaluation{Results: []Result{r}}, FeedbackInput{Attempt: 1, MaxAttempts: 3})
	text, err := RenderFeedback("", d)
	if err != nil {
		t.Fatal(err)
	}
	wantText := `❌ code_review
Error: 2 findings at P1 or worse (1 P0, 1 P1)

### P0 Critical
- main.go:3 - Off by one
  Suggestion: use <

### P1 Major
- new.go:3 - the new function is empty

### P3 Suggestion (optional: these do not fail the review)
- main.go:1 - naming

Please fix`
	if !strings.Contains(text, wantText) {
		t.Errorf("feedback =\n%s\nwant it to hold\n%s", text, wantText)
	}
}

// TestReviewSynthesis: the synthesis gets every finding as JSON lines and
// its output is the final set.
func TestReviewSynthesis(t *testing.T) {
	repo := gitRepo(t)
	seen := t.TempDir()
	reviewer := script(t, "reviewer", `cat >/dev/null
echo "{\"priority\": \"P1\", \"file\": \"main.go\", \"line\": 3, \"issue\": \"from $ORCHESTRATE_REVIEW_DIMENSION\"}"`)
	synthesis := script(t, "synthesis", fmt.Sprintf(`cat > %[1]s/in.jsonl
echo "$ORCHESTRATE_REVIEW_DIMENSION" > %[1]s/dimension
printf '%%s' "$ORCHESTRATE_REVIEW_PROMPT" > %[1]s/prompt
echo '{"priority": "P2", "file": "main.go", "line": 3, "issue": "merged: one problem"}'`, seen))
	g := reviewGate("r", reviewer)
	g.Dimensions, g.Synthesis = dims("correctness", "security"), synthesis
	r := evalOne(t, g, Options{RepoRoot: repo, LogDir: t.TempDir()})
	if r.Outcome != Pass || len(r.Review.Findings) != 1 || r.Review.Findings[0].Issue != "merged: one problem" {
		t.Fatalf("outcome %s %q, findings %+v; want a pass with the synthesis' one P2", r.Outcome, r.Err, r.Review.Findings)
	}
	in, _ := os.ReadFile(filepath.Join(seen, "in.jsonl"))
	want := `{"priority":"P1","file":"main.go","line":3,"issue":"from correctness","dimensions":["correctness"]}
{"priority":"P1","file":"main.go","line":3,"issue":"from security","dimensions":["security"]}
`
	if string(in) != want {
		t.Errorf("synthesis stdin =\n%s\nwant\n%s", in, want)
	}
	if dim, _ := os.ReadFile(filepath.Join(seen, "dimension")); string(dim) != "synthesis\n" {
		t.Errorf("synthesis dimension = %q", dim)
	}
	if p, _ := os.ReadFile(filepath.Join(seen, "prompt")); !strings.Contains(string(p), "Merge the findings") {
		t.Errorf("synthesis prompt = %q", p)
	}
	if names := r.Review.Reviewers; len(names) != 3 || names[2].Name != "synthesis" {
		t.Errorf("reviewers = %+v", names)
	}

	// Nothing found: no synthesis to run.
	os.Remove(filepath.Join(seen, "in.jsonl"))
	quiet := script(t, "quiet", "cat >/dev/null; echo no findings")
	g.Command = quiet
	r = evalOne(t, g, Options{RepoRoot: repo})
	if r.Outcome != Pass || len(r.Review.Reviewers) != 2 {
		t.Errorf("no findings: %s, reviewers %+v; want a pass without synthesis", r.Outcome, r.Review.Reviewers)
	}
	if _, err := os.Stat(filepath.Join(seen, "in.jsonl")); err == nil {
		t.Errorf("the synthesis ran on no findings")
	}

	// A synthesis that prints garbage is an error too.
	g.Command, g.Synthesis = reviewer, script(t, "bad", "cat >/dev/null; echo I merged them all, trust me")
	r = evalOne(t, g, Options{RepoRoot: repo})
	if r.Outcome != Errored || !strings.HasPrefix(r.Err, "synthesis printed no findings: neither JSON findings nor markdown") {
		t.Errorf("garbage synthesis: %s %q; want error", r.Outcome, r.Err)
	}
}

// A reviewer whose answer cannot be read is asked once more: the second
// answer is the review.
func TestReviewAskedAgain(t *testing.T) {
	repo := gitRepo(t)
	count := filepath.Join(t.TempDir(), "asked")
	once := script(t, "once", `cat >/dev/null; echo x >> `+count+`; if [ "$(wc -l < `+count+`)" -eq 1 ]; then echo 'Sure! Looks good.'; else echo no findings; fi`)
	r := evalOne(t, reviewGate("r", once), Options{RepoRoot: repo, LogDir: t.TempDir()})
	if data, _ := os.ReadFile(count); r.Outcome != Pass || string(data) != "x\nx\n" {
		t.Errorf("%s %q, asked %q; want a pass on the second answer", r.Outcome, r.Err, data)
	}
}

// TestReviewErrors: a reviewer that times out, exits non-zero, or prints
// what is not a review makes the gate an error (or timeout), never a pass.
func TestReviewErrors(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	good := script(t, "good", "cat >/dev/null; echo no findings")
	for _, tt := range []struct {
		name, body string
		outcome    Outcome
		exit       int
		err        string
		output     string
	}{
		{"garbage", "cat >/dev/null; echo 'Sure! Looks good to me.'", Errored, 0,
			`reviewer "security" printed no findings twice: neither JSON findings nor markdown sections (### P0 Critical, ### P1 Major, …), and not "no findings": it begins "Sure! Looks good to me."`, "Sure! Looks good to me."},
		{"nothing", "cat >/dev/null", Errored, 0, `reviewer "security" printed no findings twice: printed nothing (want findings, or "no findings")`, ""},
		{"bad JSON line", `cat >/dev/null; echo '{"priority": "P1", "issue": "x"}'; echo '{"priority": "urgent", "issue": "y"}'`, Errored, 0,
			`reviewer "security" printed no findings twice: line 2: unknown priority "urgent" (want P0, P1, P2 or P3)`, ""},
		{"exit 2", "cat >/dev/null; echo '{\"priority\": \"P0\", \"issue\": \"x\"}'; echo 'rate limited' >&2; exit 2", Errored, 2,
			`reviewer "security" failed: exit code 2`, "rate limited"},
		{"not found", "exec /no/such/reviewer", Errored, 127, `reviewer "security" failed: command not found (exit 127)`, "not found"},
		{"killed", "kill -9 $$", Errored, -1, `reviewer "security" was killed by signal SIGKILL`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bad := script(t, "bad", tt.body)
			g := reviewGate("r", `if [ "$ORCHESTRATE_REVIEW_DIMENSION" = security ]; then exec `+bad+`; else exec `+good+`; fi`)
			g.Dimensions = dims("correctness", "security")
			r := evalOne(t, g, Options{RepoRoot: repo, LogDir: t.TempDir()})
			if r.Outcome != tt.outcome || r.ExitCode != tt.exit || r.Err != tt.err {
				t.Errorf("%s: %s, exit %d, %q; want %s, exit %d, %q", tt.name, r.Outcome, r.ExitCode, r.Err, tt.outcome, tt.exit, tt.err)
			}
			if !strings.Contains(r.Output, tt.output) || !strings.HasSuffix(strings.SplitN(r.Output, "── reviewer security", 2)[0], "") {
				t.Errorf("%s: output %q; want %q", tt.name, r.Output, tt.output)
			}
			if !strings.Contains(r.Output, "── reviewer correctness: 0 findings\n") || !strings.Contains(r.Output, "── reviewer security: ") ||
				strings.Index(r.Output, "reviewer security") < strings.Index(r.Output, "reviewer correctness") {
				t.Errorf("%s: output %q; want correctness, then security (what went wrong, last)", tt.name, r.Output)
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		pidFile := filepath.Join(t.TempDir(), "pid")
		slow := script(t, "slow", "echo $$ > "+pidFile+"; sleep 30 & wait")
		g := reviewGate("r", slow)
		// Long enough for the diff on a loaded machine: the budget is the
		// whole gate's.
		g.Timeout = 2 * time.Second
		start := time.Now()
		r := evalOne(t, g, Options{RepoRoot: repo, KillGrace: 100 * time.Millisecond})
		if r.Outcome != TimedOut || r.Err != `reviewer "general" timed out after 2s` {
			t.Errorf("timeout: %s %q; want timeout", r.Outcome, r.Err)
		}
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("timeout: took %v", took)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		r := evalOne(t, reviewGate("r", good), Options{RepoRoot: t.TempDir()})
		if r.Outcome != Errored || !strings.HasPrefix(r.Err, "could not get the change under review: git rev-parse: not a git repository") {
			t.Errorf("not a repository: %s %q", r.Outcome, r.Err)
		}
	})

	t.Run("bad diff_base", func(t *testing.T) {
		g := reviewGate("r", good)
		g.DiffBase = "nosuch"
		r := evalOne(t, g, Options{RepoRoot: repo})
		if r.Outcome != Errored || !strings.Contains(r.Err, "could not get the change under review: git diff: bad revision 'nosuch'") {
			t.Errorf("bad diff_base: %s %q", r.Outcome, r.Err)
		}
	})
}

// TestReviewNothingToReview: with no change, no reviewer runs.
func TestReviewNothingToReview(t *testing.T) {
	repo := gitRepo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	reviewer := script(t, "reviewer", "touch "+marker+"; echo '{\"priority\": \"P0\", \"issue\": \"x\"}'")
	for _, c := range [][]string{{"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "all"}} {
		cmd := exec.Command("git", c...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", c, err, out)
		}
	}
	r := evalOne(t, reviewGate("r", reviewer), Options{RepoRoot: repo})
	if r.Outcome != Pass || r.Output != "nothing to review: no change against HEAD\n" {
		t.Errorf("no change: %s %q", r.Outcome, r.Output)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a reviewer ran on an empty diff")
	}
	// Against the first commit's parent there is: a repository's first
	// commit is compared with the empty tree when there is no HEAD, and a
	// base of HEAD~1 with the first commit here.
	g := reviewGate("r", reviewer)
	g.DiffBase = "HEAD~1"
	if r := evalOne(t, g, Options{RepoRoot: repo}); r.Outcome != Fail {
		t.Errorf("diff_base HEAD~1: %s %q; want the reviewer's P0", r.Outcome, r.Err)
	}
}

func TestDiffWithoutCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644)
	var b strings.Builder
	if err := Diff(context.Background(), dir, "HEAD", nil, true, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "a.txt | 1 +") {
		t.Errorf("Diff --stat without commits = %q", b.String())
	}
	// The repository's own index is untouched.
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = dir
	if out, _ := st.Output(); string(out) != "?? a.txt\n" {
		t.Errorf("git status after Diff = %q; want a.txt still untracked", out)
	}
}

func TestHumanGate(t *testing.T) {
	pass := gateOf("tests", "true")
	failing := gateOf("tests", "exit 1")
	human := config.Gate{Name: "sign-off", Type: config.TypeHuman, Enforcement: config.Blocking}
	for _, tt := range []struct {
		name     string
		first    config.Gate
		approval Approval
		outcome  Outcome
		err      string
		output   string
		passed   bool
	}{
		{"ask", pass, Approval{State: ApprovalAsk}, AwaitingApproval, "awaiting a person's approval", "", false},
		{"pending", pass, Approval{State: ApprovalPending, Ref: "ISSUE-1"}, AwaitingApproval, "awaiting a person's approval in ISSUE-1", "", false},
		{"ask while another fails", failing, Approval{State: ApprovalAsk}, Skipped, "skipped: a person is asked once the other gates pass", "", false},
		{"approved", pass, Approval{State: ApprovalGiven, Ref: "ISSUE-1"}, Pass, "", "approved in ISSUE-1\n", true},
		{"approved while another fails", failing, Approval{State: ApprovalGiven}, Pass, "", "approved\n", false},
		{"rejected", pass, Approval{State: ApprovalRejected, Ref: "ISSUE-1", Comment: "Rename the flag.\n"}, Fail, "rejected by a person in ISSUE-1", "Rename the flag.\n", false},
		{"not needed", pass, Approval{State: ApprovalNotNeeded, Note: "no open issue matches priority == critical"}, Pass, "", "not needed: no open issue matches priority == critical\n", true},
	} {
		var asked []string
		opts := Options{Human: func(g config.Gate) Approval { asked = append(asked, g.Name); return tt.approval }}
		ev, err := Evaluate(context.Background(), []config.Gate{human, tt.first}, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := ev.Results[0]
		if r.Outcome != tt.outcome || r.Err != tt.err || r.Output != tt.output || ev.Passed != tt.passed {
			t.Errorf("%s: %s %q %q, passed %v; want %s %q %q, passed %v", tt.name, r.Outcome, r.Err, r.Output, ev.Passed, tt.outcome, tt.err, tt.output, tt.passed)
		}
		if !reflect.DeepEqual(asked, []string{"sign-off"}) || r.Approval == nil || r.Approval.State != tt.approval.State {
			t.Errorf("%s: asked %q, approval %+v", tt.name, asked, r.Approval)
		}
		if got := len(ev.AwaitingApproval()); (tt.outcome == AwaitingApproval) != (got == 1) || len(ev.Failures()) != map[bool]int{true: 1}[tt.outcome == Fail || tt.first.Command == "exit 1"] {
			t.Errorf("%s: AwaitingApproval %d, Failures %d", tt.name, got, len(ev.Failures()))
		}
	}
	// A fail_fast failure skips it like any other gate; without Human
	// there is no one to ask.
	ff := failing
	ff.FailFast, ff.Serial = true, true
	ev, _ := Evaluate(context.Background(), []config.Gate{ff, human}, Options{Human: func(config.Gate) Approval { return Approval{State: ApprovalGiven} }})
	if r := ev.Results[1]; r.Outcome != Skipped || !strings.Contains(r.Err, "fail_fast") {
		t.Errorf("after a fail_fast failure: %s %q", r.Outcome, r.Err)
	}
	ev, _ = Evaluate(context.Background(), []config.Gate{human}, Options{})
	if r := ev.Results[0]; r.Outcome != Errored || !strings.HasPrefix(r.Err, "no one to ask") {
		t.Errorf("without Human: %s %q", r.Outcome, r.Err)
	}
}

// TestReviewersAreChildren: every reviewer and the synthesis run with
// ORCHESTRATE_CHILD=1 (orchestrate's hooks in them do nothing) and are told
// to review only.
func TestReviewersAreChildren(t *testing.T) {
	repo := gitRepo(t)
	seen := t.TempDir()
	reviewer := script(t, "reviewer", fmt.Sprintf(`cat >/dev/null
echo "$ORCHESTRATE_CHILD" > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.child
printf '%%s' "$ORCHESTRATE_REVIEW_PROMPT" > %[1]s/$ORCHESTRATE_REVIEW_DIMENSION.prompt
echo '{"priority": "P2", "file": "main.go", "line": 3, "issue": "minor"}'
`, seen))
	g := reviewGate("review", reviewer)
	g.Dimensions, g.Synthesis = dims("correctness"), reviewer
	t.Setenv(EnvChild, "")
	r := evalOne(t, g, Options{RepoRoot: repo, DiffExclude: []string{".orchestrator"}})
	if r.Outcome != Pass {
		t.Fatalf("review: %s %q", r.Outcome, r.Err)
	}
	for _, who := range []string{"correctness", SynthesisDimension} {
		child, err := os.ReadFile(filepath.Join(seen, who+".child"))
		if err != nil || string(child) != "1\n" {
			t.Errorf("%s: ORCHESTRATE_CHILD = %q, %v; want 1", who, child, err)
		}
		prompt, _ := os.ReadFile(filepath.Join(seen, who+".prompt"))
		if !strings.Contains(string(prompt), "This is a review only: do not edit, create or delete any file") {
			t.Errorf("%s's prompt does not say review only:\n%s", who, prompt)
		}
	}
}
