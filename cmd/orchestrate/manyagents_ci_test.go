package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The GitHub Actions workflow that runs the agents on many runners, which
// docs/many-agents.md shows: the tests check its shape and run its plan.
const manyAgentsFile = "testdata/ci/many-agents.yml"

// ghWorkflow is what the tests read of a GitHub Actions workflow: more of
// it than workflow, for the shape of a matrix of jobs.
type ghWorkflow struct {
	On          any               `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency any               `yaml:"concurrency"`
	Jobs        map[string]ghJob  `yaml:"jobs"`
}

type ghJob struct {
	Needs       any               `yaml:"needs"`
	If          string            `yaml:"if"`
	Permissions map[string]string `yaml:"permissions"`
	Outputs     map[string]string `yaml:"outputs"`
	Env         map[string]string `yaml:"env"`
	Concurrency *struct {
		Group            string `yaml:"group"`
		CancelInProgress *bool  `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Strategy struct {
		FailFast    *bool             `yaml:"fail-fast"`
		MaxParallel string            `yaml:"max-parallel"`
		Matrix      map[string]string `yaml:"matrix"`
	} `yaml:"strategy"`
	Steps []ghStep `yaml:"steps"`
}

type ghStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	Run  string            `yaml:"run"`
	If   string            `yaml:"if"`
	Env  map[string]string `yaml:"env"`
	With map[string]string `yaml:"with"`
}

// step returns the job's step of that name, or fails.
func (j ghJob) step(t *testing.T, name string) ghStep {
	t.Helper()
	for _, s := range j.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no step %q", name)
	return ghStep{}
}

// uses returns the job's steps that use an action (owner/name, any
// version).
func (j ghJob) uses(action string) []ghStep {
	var out []ghStep
	for _, s := range j.Steps {
		if strings.HasPrefix(s.Uses, action+"@") {
			out = append(out, s)
		}
	}
	return out
}

// readWorkflowFile reads a workflow as ghWorkflow.
func readWorkflowFile(t *testing.T, path string) ghWorkflow {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return wf
}

func readManyAgents(t *testing.T) ghWorkflow {
	t.Helper()
	return readWorkflowFile(t, manyAgentsFile)
}

// TestDocsManyAgentsWorkflow: docs/many-agents.md shows the workflow the
// tests check and run, word for word.
func TestDocsManyAgentsWorkflow(t *testing.T) {
	wf, err := os.ReadFile(manyAgentsFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/many-agents.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```yaml\n"+string(wf)+"```\n")) {
		t.Errorf("docs/many-agents.md does not show %s as a yaml block, word for word", manyAgentsFile)
	}
}

// TestManyAgentsWorkflowShape: the workflow's triggers, permissions and
// concurrency, and no run: script with an expression in it (a value
// reaches a script through env:, never pasted into its text).
func TestManyAgentsWorkflowShape(t *testing.T) {
	wf := readManyAgents(t)
	on, _ := wf.On.(map[string]any)
	dispatch, _ := on["workflow_dispatch"].(map[string]any)
	inputs, _ := dispatch["inputs"].(map[string]any)
	agents, _ := inputs["agents"].(map[string]any)
	if agents["default"] != 4 || agents["type"] != "number" {
		t.Errorf("on.workflow_dispatch.inputs.agents = %v; want a number, default 4", agents)
	}
	if !maps.Equal(wf.Permissions, map[string]string{"contents": "read"}) {
		t.Errorf("permissions = %v; want contents: read alone", wf.Permissions)
	}
	if wf.Concurrency != nil {
		t.Errorf("a workflow-level concurrency (%v): it would hold whole runs back; the agents job has one per issue", wf.Concurrency)
	}
	if len(wf.Jobs) != 3 {
		t.Errorf("jobs %v; want plan, agents and report", slices.Sorted(maps.Keys(wf.Jobs)))
	}
	for name, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("job %s, step %q: an expression in a run: script", name, s.Name)
			}
		}
		co := job.uses("actions/checkout")
		if len(co) != 1 || co[0].With["fetch-depth"] != "0" {
			t.Errorf("job %s: want one actions/checkout with fetch-depth: 0 (the integration branch's history and every branch)", name)
		}
	}
}

// TestManyAgentsWorkflowPlan: the plan job installs orchestrate as the
// quality gates' workflow does, fetches the queue, and gives the ready
// issues as its output.
func TestManyAgentsWorkflowPlan(t *testing.T) {
	plan := readManyAgents(t).Jobs["plan"]
	gates := readWorkflowFile(t, workflowFile).Jobs["gates"]
	want := gates.step(t, "Install orchestrate").Run
	if got := plan.step(t, "Install orchestrate").Run; got != want || len(plan.uses("actions/setup-go")) != 1 {
		t.Errorf("plan installs orchestrate with %q (and setup-go %d times); want %q after actions/setup-go, as %s does", got, len(plan.uses("actions/setup-go")), want, workflowFile)
	}
	fetch := plan.step(t, "Fetch the queue").Run
	if !strings.Contains(fetch, "git fetch origin '+refs/orchestrate/*:refs/orchestrate/remote/origin/*'") {
		t.Errorf("plan's fetch is %q; want every refs/orchestrate/* of origin", fetch)
	}
	ready := plan.step(t, "Ready issues")
	if ready.ID == "" || plan.Outputs["issues"] != "${{ steps."+ready.ID+".outputs.issues }}" ||
		plan.Outputs["agents"] != "${{ steps."+ready.ID+".outputs.agents }}" {
		t.Errorf("plan's outputs are %v; want issues and agents from the step %q (id %q)", plan.Outputs, ready.Name, ready.ID)
	}
	if ready.Env["AGENTS"] != "${{ inputs.agents || 4 }}" {
		t.Errorf("Ready issues: AGENTS is %q; want the input, 4 without one (a scheduled run)", ready.Env["AGENTS"])
	}
}

// TestManyAgentsWorkflowMatrix: the agents job is a matrix of the plan's
// issues, skipped when there are none, one concurrency group per issue,
// allowed to push, with the API key.
func TestManyAgentsWorkflowMatrix(t *testing.T) {
	job := readManyAgents(t).Jobs["agents"]
	if job.Needs != "plan" || job.If != "needs.plan.outputs.issues != '[]'" {
		t.Errorf("agents: needs %v, if %q; want needs plan, skipped when no issue is ready", job.Needs, job.If)
	}
	s := job.Strategy
	if s.Matrix["issue"] != "${{ fromJSON(needs.plan.outputs.issues) }}" || len(s.Matrix) != 1 {
		t.Errorf("agents: matrix %v; want issue from fromJSON(needs.plan.outputs.issues) alone", s.Matrix)
	}
	if s.FailFast == nil || *s.FailFast || s.MaxParallel != "${{ fromJSON(needs.plan.outputs.agents) }}" {
		t.Errorf("agents: fail-fast %v, max-parallel %q; want false, the plan's agents", s.FailFast, s.MaxParallel)
	}
	c := job.Concurrency
	if c == nil || !strings.Contains(c.Group, "${{ matrix.issue }}") || c.CancelInProgress == nil || *c.CancelInProgress {
		t.Errorf("agents: concurrency %+v; want a group per matrix.issue, cancel-in-progress: false", c)
	}
	if !maps.Equal(job.Permissions, map[string]string{"contents": "write"}) {
		t.Errorf("agents: permissions %v; want contents: write alone", job.Permissions)
	}
	if job.Env["ANTHROPIC_API_KEY"] != "${{ secrets.ANTHROPIC_API_KEY }}" {
		t.Errorf("agents: ANTHROPIC_API_KEY is %q; want the secret", job.Env["ANTHROPIC_API_KEY"])
	}
}

// TestManyAgentsWorkflowAgentSteps: each agent installs orchestrate and
// Claude Code, commits as the Actions bot, works its one issue on origin,
// and keeps .orchestrator/'s files as an artifact, whatever happened.
func TestManyAgentsWorkflowAgentSteps(t *testing.T) {
	job := readManyAgents(t).Jobs["agents"]
	plan := readManyAgents(t).Jobs["plan"]
	if got, want := job.step(t, "Install orchestrate").Run, plan.step(t, "Install orchestrate").Run; got != want {
		t.Errorf("agents install orchestrate with %q; want %q", got, want)
	}
	if run := job.step(t, "Install Claude Code").Run; strings.TrimSpace(run) != "npm install -g @anthropic-ai/claude-code" {
		t.Errorf("Install Claude Code runs %q", run)
	}
	id := job.step(t, "Git identity").Run
	for _, want := range []string{`git config user.name "github-actions[bot]"`, `git config user.email "41898282+github-actions[bot]@users.noreply.github.com"`} {
		if !strings.Contains(id, want) {
			t.Errorf("Git identity: no %s", want)
		}
	}
	work := job.step(t, "Work the issue")
	if strings.TrimSpace(work.Run) != `orchestrate run --remote origin --agents 1 --issue "$ISSUE" || test $? -eq 10` || work.Env["ISSUE"] != "${{ matrix.issue }}" {
		t.Errorf("Work the issue: run %q, ISSUE %q; want orchestrate run --remote origin --agents 1 --issue of the matrix's issue", work.Run, work.Env["ISSUE"])
	}
	up := job.uses("actions/upload-artifact")
	if len(up) != 1 {
		t.Fatalf("agents: %d actions/upload-artifact steps; want 1", len(up))
	}
	a := up[0]
	if !strings.Contains(a.If, "always()") || !strings.Contains(a.With["name"], "${{ matrix.issue }}") || a.With["include-hidden-files"] != "true" {
		t.Errorf("the upload: if %q, name %q, include-hidden-files %q; want always(), a name per issue, hidden files in (.orchestrator/ is hidden)",
			a.If, a.With["name"], a.With["include-hidden-files"])
	}
	paths := strings.Fields(a.With["path"])
	slices.Sort(paths)
	want := []string{".orchestrator/analytics.html", ".orchestrator/history.csv", ".orchestrator/issue_queue.md", ".orchestrator/session_state.md"}
	if !slices.Equal(paths, want) {
		t.Errorf("the upload's paths %v; want %v", paths, want)
	}
}

// planIssue is an issue of a test queue: orchestrate issue add's flags,
// then orchestrate issue set's FIELD=VALUE (a status issue add will not
// file as it is, stuck).
type planIssue struct {
	add, set []string
}

// planRepo makes a git repository with an origin (bare, on disk) holding
// its commit and a queue ref, and .orchestrator/ from orchestrate init with
// the issues; it returns its directory and the IDs, in order.
func planRepo(t *testing.T, issues []planIssue) (string, []string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	gitIn(t, root, "init", "-q", "--bare", "origin.git")
	gitIn(t, root, "init", "-q", "-b", "main", "work")
	gitIn(t, dir, "remote", "add", "origin", "../origin.git")
	orchestrateIn(t, dir, "init")
	var ids []string
	for _, is := range issues {
		id := strings.TrimSpace(orchestrateIn(t, dir, append([]string{"issue", "add", "--summary", "an issue"}, is.add...)...))
		if len(is.set) > 0 {
			orchestrateIn(t, dir, append([]string{"issue", "set", id}, is.set...)...)
		}
		ids = append(ids, id)
	}
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "the queue")
	// The queue the machines share: a commit whose tree holds it.
	shared := strings.TrimSpace(gitIn(t, dir, "commit-tree", "-m", "the shared queue", "HEAD:.orchestrator"))
	gitIn(t, dir, "push", "-q", "origin", "main", shared+":refs/orchestrate/queue")
	return dir, ids
}

// testEnv is the environment of the commands the plan tests run: git
// commits as a test identity, the issues' dates fixed.
func testEnv() []string {
	return append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "ORCHESTRATE_NOW=2024-12-13T10:00:00Z")
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return commandIn(t, dir, "git", args...)
}

func orchestrateIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return commandIn(t, dir, orchestrateBin(t), args...)
}

func commandIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, testEnv()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// expression matches a GitHub Actions expression.
var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runPlanSteps runs the plan job's run: steps of those names in dir as
// the runner does (bash -e, GITHUB_ACTIONS=true, GITHUB_OUTPUT a file),
// each step's env: with its expressions given their values by exprs (an
// expression exprs does not know fails the test). It returns what the
// steps wrote to GITHUB_OUTPUT, and the error of the first step that
// failed, with its output.
func runPlanSteps(t *testing.T, dir string, exprs map[string]string, names ...string) (string, error) {
	t.Helper()
	return runJobSteps(t, "plan", dir, exprs, names...)
}

// runJobSteps is runPlanSteps for the steps of any job.
func runJobSteps(t *testing.T, job, dir string, exprs map[string]string, names ...string) (string, error) {
	t.Helper()
	bash := requireShell(t, "bash")
	requireShell(t, "jq")
	plan := readManyAgents(t).Jobs[job]
	output := filepath.Join(t.TempDir(), "github-output")
	if err := os.WriteFile(output, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		st := plan.step(t, name)
		env := append(testEnv(), "GITHUB_ACTIONS=true", "GITHUB_OUTPUT="+output)
		for k, v := range st.Env {
			v = expression.ReplaceAllStringFunc(v, func(e string) string {
				val, ok := exprs[expression.FindStringSubmatch(e)[1]]
				if !ok {
					t.Fatalf("step %q: %s=%s: no value for %s", name, k, v, e)
				}
				return val
			})
			env = append(env, k+"="+v)
		}
		cmd := exec.Command(bash, "-e", "-c", st.Run)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			data, _ := os.ReadFile(output)
			return string(data), &stepError{name, err, string(out)}
		}
	}
	data, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), nil
}

type stepError struct {
	step   string
	err    error
	output string
}

func (e *stepError) Error() string { return "step " + e.step + ": " + e.err.Error() + "\n" + e.output }

// claimOrder is the ready issues as orchestrate itself takes them: claim
// --next, for a new holder each time, until nothing is ready (exit 10), in
// a copy of the repository.
func claimOrder(t *testing.T, dir string) []string {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "copy")
	commandIn(t, dir, "git", "clone", "-q", dir, cp)
	var ids []string
	for i := 1; ; i++ {
		cmd := exec.Command(orchestrateBin(t), "claim", "--next", "--json", "--as", "agent-"+string(rune('a'+i)))
		cmd.Dir, cmd.Env = cp, os.Environ()
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 10 {
			return ids
		}
		var c struct{ ID string }
		if err != nil || json.Unmarshal(out, &c) != nil || i > 50 {
			t.Fatalf("claim --next: %v %s", err, out)
		}
		ids = append(ids, c.ID)
	}
}

// planQueue: an issue of each kind the plan tells apart. Ready, most
// urgent first: 004 (critical), 005 (high), 001, 012 and 013 (medium, by
// ID), 010 (low).
var planQueue = []planIssue{
	{add: []string{"--auto-retry", "true"}},                          // 001 ready
	{add: []string{"--status", "resolved"}},                          // 002 done
	{add: []string{"--auto-retry", "true", "--halted", "true"}},      // 003 halted
	{add: []string{"--priority", "critical"}},                        // 004 ready, first
	{add: []string{"--status", "in_progress", "--priority", "high"}}, // 005 ready, worked on
	{set: []string{"Status=stuck"}},                                  // 006 stuck
	{add: []string{"--auto-retry", "true", "--retry-count", "10"}},   // 007 retries spent
	{add: []string{"--type", "approval", "--priority", "high"}},      // 008 an approval request
	{add: []string{"--priority", "low", "--field", "Claimed-By=agent-9@far/1", "--field", "Lease-Epoch=1",
		"--field", "Lease-Until=2099-01-01T00:00:00Z"}}, // 009 held
	{add: []string{"--priority", "low", "--field", "Claimed-By=agent-8@far/1", "--field", "Lease-Epoch=1",
		"--field", "Lease-Until=2000-01-01T00:00:00Z"}}, // 010 ready: its lease lapsed
	{add: []string{"--status", "skipped"}},                                                    // 011 skipped
	{add: []string{"--retry-count", "10"}},                                                    // 012 ready: no Auto-Retry, no budget to spend
	{add: []string{"--status", "in_progress", "--auto-retry", "true", "--retry-count", "10"}}, // 013 ready: being worked, its last retry
}

// TestManyAgentsPlanRuns runs the plan job's steps for real, with bash and
// jq, on a queue with an issue of each kind: its issues= output is the
// ready ones, most urgent first, as orchestrate claim --next takes them,
// at most the input's number; its agents= output is that number.
func TestManyAgentsPlanRuns(t *testing.T) {
	t.Parallel()
	dir, ids := planRepo(t, planQueue)
	ready := []string{ids[3], ids[4], ids[0], ids[11], ids[12], ids[9]}
	if got := claimOrder(t, dir); !slices.Equal(got, ready) {
		t.Fatalf("claim --next takes %v; the test expects %v", got, ready)
	}
	for _, tc := range []struct {
		agents string
		want   []string
	}{
		{"10", ready},
		{"4", ready[:4]}, // the default, and a scheduled run's
		{"2", ready[:2]},
		{"1", ready[:1]},
	} {
		out, err := runPlanSteps(t, dir, map[string]string{"inputs.agents || 4": tc.agents}, "Fetch the queue", "Ready issues")
		if err != nil {
			t.Fatalf("agents %s: %v", tc.agents, err)
		}
		js, _ := json.Marshal(tc.want)
		if want := "issues=" + string(js) + "\nagents=" + tc.agents + "\n"; out != want {
			t.Errorf("agents %s: GITHUB_OUTPUT is\n%s\nwant\n%s", tc.agents, out, want)
		}
	}
	// The fetch brought origin's queue ref.
	gitIn(t, dir, "rev-parse", "--verify", "-q", "refs/orchestrate/remote/origin/queue")
}

// TestManyAgentsPlanNothingReady: with no ready issue the plan writes
// issues=[], which skips the agents job, and a remote with no
// refs/orchestrate/* yet is no error.
func TestManyAgentsPlanNothingReady(t *testing.T) {
	t.Parallel()
	dir, _ := planRepo(t, []planIssue{
		{add: []string{"--status", "resolved"}},
		{add: []string{"--halted", "true"}},
		{set: []string{"Status=stuck"}},
	})
	gitIn(t, dir, "push", "-q", "origin", "--delete", "refs/orchestrate/queue")
	out, err := runPlanSteps(t, dir, map[string]string{"inputs.agents || 4": "4"}, "Fetch the queue", "Ready issues")
	if err != nil {
		t.Fatal(err)
	}
	if out != "issues=[]\nagents=4\n" {
		t.Errorf("GITHUB_OUTPUT is\n%s\nwant issues=[], agents=4", out)
	}
	if claimed := claimOrder(t, dir); len(claimed) != 0 {
		t.Errorf("claim --next takes %v; the test expects nothing ready", claimed)
	}
}

// TestManyAgentsPlanRefuses: the plan fails, writing no output, for an
// agents input that is not a whole number from 1, for a remote it cannot
// fetch from, and for a queue orchestrate cannot read.
func TestManyAgentsPlanRefuses(t *testing.T) {
	t.Parallel()
	dir, _ := planRepo(t, planQueue[:1])
	for _, agents := range []string{"0", "-1", "2.5", "two", ""} {
		out, err := runPlanSteps(t, dir, map[string]string{"inputs.agents || 4": agents}, "Ready issues")
		if err == nil || out != "" {
			t.Errorf("agents %q: err %v, GITHUB_OUTPUT %q; want a failure and no output", agents, err, out)
		} else if !strings.Contains(err.Error(), "::error::agents: want a whole number from 1") {
			t.Errorf("agents %q: %v; want the annotation that says why", agents, err)
		}
	}
	gitIn(t, dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	if out, err := runPlanSteps(t, dir, map[string]string{"inputs.agents || 4": "4"}, "Fetch the queue", "Ready issues"); err == nil || out != "" {
		t.Errorf("origin gone: err %v, GITHUB_OUTPUT %q; want the fetch to fail the plan", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".orchestrator", "issue_queue.md"), []byte("## ISSUE-1\n\n| Field | Value |\n|--|--|\n| Status | pending |\n| Status | pending |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runPlanSteps(t, dir, map[string]string{"inputs.agents || 4": "4"}, "Ready issues"); err == nil || out != "" {
		t.Errorf("a malformed queue: err %v, GITHUB_OUTPUT %q; want a failure", err, out)
	}
}

// TestManyAgentsReport: the report job waits for the agents whatever they
// did, and its step, run for real in a fresh clone after two machines
// worked on origin, makes one page of both machines' histories.
func TestManyAgentsReport(t *testing.T) {
	job := readManyAgents(t).Jobs["report"]
	if !slices.Equal(anyStrings(job.Needs), []string{"plan", "agents"}) || !strings.Contains(job.If, "always()") {
		t.Errorf("report: needs %v, if %q; want plan and agents, always()", job.Needs, job.If)
	}
	if up := job.uses("actions/upload-artifact"); len(up) != 1 || !strings.Contains(up[0].With["path"], ".orchestrator/analytics.html") || up[0].With["include-hidden-files"] != "true" {
		t.Errorf("report: want one upload of .orchestrator/analytics.html, hidden files included")
	}
	if testing.Short() {
		t.Skip("-short: two machines' runs over git")
	}
	cfg := "agent:\n  command: 'id=${ORCHESTRATE_CLAIM%%:*}; echo \"$id\" > \"$id.txt\"'\n" +
		"gates:\n  - name: test\n    command: 'test -f \"$(git rev-parse --abbrev-ref HEAD | sed s,orchestrate/,,).txt\"'\n"
	bare, _, orch := remoteProject(t, cfg, 2, 2)
	rows := 0
	for i := range 2 {
		cmd := orch[i]("run", "--agents", "1", "--remote", "origin", "--lease", "6s")
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != exitNothing {
			t.Fatalf("machine %d: %v\n%s", i, err, out)
		}
		data, _ := os.ReadFile(filepath.Join(cmd.Dir, ".orchestrator", "history.csv"))
		rows += strings.Count(string(data), "\n") - 1
	}
	runner := filepath.Join(t.TempDir(), "runner")
	gitRun(t, "", "clone", "-q", bare, runner)
	out, err := runJobSteps(t, "report", runner, nil, "The page of every machine")
	if err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if _, err := os.Stat(filepath.Join(runner, ".orchestrator", "analytics.html")); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows int `json:"rows"`
	}
	js, _ := exec.Command(orchestrateBin(t), "--dir", filepath.Join(runner, ".orchestrator"), "analytics", "--remote", "origin", "--json").Output()
	if err := json.Unmarshal(js, &got); err != nil || got.Rows != rows {
		t.Errorf("the report's page counts %d rows (%v); want the two machines' %d", got.Rows, err, rows)
	}
	// An agent job whose issue was done since the plan: nothing to do, no
	// failure; an issue the queue does not hold: a failure. (The clock is
	// the machine's: the claims on origin were written by it.)
	work := readManyAgents(t).Jobs["agents"].step(t, "Work the issue").Run
	agentJob := func(issue string) error {
		cmd := exec.Command(requireShell(t, "bash"), "-e", "-c", work)
		cmd.Dir = runner
		cmd.Env = append(os.Environ(), "ISSUE="+issue, "XDG_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Logf("%s", out)
		}
		return err
	}
	if done := remoteQueue(t, bare).Issues[0].ID; agentJob(done) != nil {
		t.Errorf("the agents job on %s, done since the plan, failed", done)
	}
	if agentJob("ISSUE-20991231-001") == nil {
		t.Errorf("the agents job on an issue the queue does not hold passed")
	}
}

// anyStrings is a YAML list of strings (or one string) as a slice.
func anyStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			s, _ := x.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}
