package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// The measured goals of "each attempt is judged by its own issue", on real
// projects fetched from the registries (testdata/projects: go-humanize from
// the Go module proxy, Python's humanize and JavaScript's ufo from their
// repositories; gen.sh makes them again), each with bugs in files of its
// own, written as patches the test applies over the project's release.
// The agent is a script: it keeps each prompt it is given, and fixes the
// bugs whose failing test its prompt names, by undoing the bug's patch.

// bug is one bug of a real project: its patch, the file it changes, the
// failing test that names it, and a person's report of it.
type bug struct {
	patch   string // testdata/projects/PROJECT/PATCH.patch
	file    string // the one file the patch changes
	test    string // what the agent looks for in its prompt: the failing test's name
	summary string // a person's issue about it
}

// realProject is a real project under testdata/projects, and its bugs.
type realProject struct {
	dir  string // under testdata/projects
	bugs []bug
}

var (
	goHumanize = realProject{"go-humanize", []bug{
		{"ordinals", "ordinals.go", "TestOrdinals", "Ordinal(11) says 11st: TestOrdinals fails"},
		{"comma", "comma.go", "TestCommas", "Comma(1001) says 1,01: TestCommas fails"},
		{"bytes", "bytes.go", "TestBytes", "Bytes drops the decimal below 10 (1.5 kB comes out as 2 kB): TestBytes fails"},
		{"plural", "english/words.go", "TestPluralWord", "english.PluralWord(2, \"potato\", \"\") says potatos: TestPluralWord fails"},
	}}
	pyHumanize = realProject{"humanize", []bug{
		{"ordinal", "src/humanize/number.py", "test_ordinal[13-13th]", "ordinal(13) says 13rd: test_ordinal[13-13th] fails"},
		{"naturalsize", "src/humanize/filesize.py", "test_naturalsize[test_args15-1 Byte]", "naturalsize(1) says 1 Bytes: test_naturalsize[test_args15-1 Byte] fails"},
		{"naturaldelta", "src/humanize/time.py", "test_naturaldelta[test_input25-a month]", "naturaldelta of 31 days says one month: test_naturaldelta[test_input25-a month] fails"},
	}}
	ufo = realProject{"ufo", []bug{
		{"parse", "src/parse.ts", "file:///C:/home/user", "parseURL keeps the slash before a Windows drive in uppercase: parseURL file:///C:/home/user fails"},
		{"query", "src/query.ts", "/?foo=1 with", "withQuery drops true values: withQuery /?foo=1 with foo true fails"},
		{"utils", "src/utils.ts", "../test", "isRelative(\"../test\") is false: isRelative ../test fails"},
	}}
)

// upTo is the project with its first n bugs.
func (rp realProject) upTo(n int) realProject {
	rp.bugs = rp.bugs[:n]
	return rp
}

// realAgent is the script agent: it keeps its prompt in $RP_LOG (the
// file's name starts with the issue it claimed), then for each bug of
// $RP_BUGS whose test its prompt names, undoes the bug's patch; with
// RP_MODE=never it changes nothing; the bug named by $RP_BREAK_WITH also
// applies $RP_BREAK, a patch that breaks a test that passes.
const realAgent = `#!/bin/sh
id=${ORCHESTRATE_CLAIM%%:*}
prompt=$(mktemp "$RP_LOG/${id:-none}.XXXXXX")
if [ -n "$ORCHESTRATE_PROMPT_FILE" ]; then cat "$ORCHESTRATE_PROMPT_FILE"; else cat; fi > "$prompt"
[ -z "$RP_SLEEP" ] || sleep "$RP_SLEEP"
if [ "$RP_MODE" = never ]; then echo "I looked and changed nothing."; exit 0; fi
while IFS='|' read -r test patch; do
	grep -qF -- "$test" "$prompt" || continue
	if git apply -R --check "$patch" 2>/dev/null; then git apply -R "$patch" && echo "fixed: $test"; fi
	if [ "$test" = "$RP_BREAK_WITH" ] && git apply --check "$RP_BREAK" 2>/dev/null; then git apply "$RP_BREAK"; fi
done < "$RP_BUGS"
`

// realRepo is a real project's repository with its bugs committed, its
// workspace made by orchestrate init, and the script agent as its agent.
type realRepo struct {
	t    testing.TB
	rp   realProject
	root string
	Dir  string
	log  string // the prompts the agent was given
	env  []string
	base string // the commit the bugs are in
}

var (
	realBinOnce sync.Once
	realBinErr  error
)

// realBin is the orchestrate binary (TestMain builds it only for the
// agent CLIs' tests), and the Go environment the projects' gates share.
func realBin(t testing.TB) string {
	t.Helper()
	realBinOnce.Do(func() {
		if orchestrateBin != "" {
			return
		}
		dir, err := os.MkdirTemp("", "orchestrate-e2e-real-")
		if err != nil {
			realBinErr = err
			return
		}
		realBinErr = buildOrchestrate(dir)
	})
	if realBinErr != nil {
		t.Fatal(realBinErr)
	}
	return orchestrateBin
}

// runner is a test runner a real project needs: where the tests find it,
// and how its absence is told.
type runner struct {
	what    string // its name for people
	env     string // the variable that holds its path
	require string // the variable that, set to 1, makes its absence a failure
	install string // how to install it
	find    func() string
}

var (
	pytestRunner = runner{"pytest (with freezegun)", "ORCHESTRATE_PYTEST", "ORCHESTRATE_REQUIRE_PYTEST",
		"apt-get install python3-pytest python3-freezegun", func() string { p, _ := exec.LookPath("pytest"); return p }}
	vitestRunner = runner{"vitest", "ORCHESTRATE_VITEST", "ORCHESTRATE_REQUIRE_VITEST",
		".ci/run installs it in .cache/vitest (npm install vitest@3.2.4); ORCHESTRATE_VITEST names its node_modules",
		func() string {
			if _, err := exec.LookPath("npm"); err != nil {
				return ""
			}
			abs, _ := filepath.Abs(filepath.Join("..", ".cache", "vitest", "node_modules"))
			if _, err := os.Stat(filepath.Join(abs, ".bin", "vitest")); err != nil {
				return ""
			}
			return abs
		}}
)

// need skips the test when the runner is missing or does not work, or
// fails it when its require variable (CI) says it must be there; check
// runs it once.
func (r runner) need(t *testing.T, check func(path string) error) string {
	t.Helper()
	p := os.Getenv(r.env)
	if p == "" {
		p = r.find()
	}
	var err error
	if p == "" {
		err = fmt.Errorf("%s is missing (%s; or set %s to it)", r.what, r.install, r.env)
	} else if err = check(p); err != nil {
		err = fmt.Errorf("%s at %s does not work (%s): %v", r.what, p, r.install, err)
	}
	if err != nil {
		if os.Getenv(r.require) == "1" {
			t.Fatalf("%s=1: %v", r.require, err)
		}
		t.Skipf("%v; set %s=1 to fail instead", err, r.require)
	}
	return p
}

// newRealRepo extracts the project into a new repository, commits it,
// applies and commits its bugs, runs orchestrate init there, and makes the
// script agent its agent; extra are more variables for the agent.
func newRealRepo(t testing.TB, rp realProject, extra ...string) *realRepo {
	t.Helper()
	bin := realBin(t)
	root := t.TempDir()
	r := &realRepo{t: t, rp: rp, root: root, Dir: filepath.Join(root, "repo"), log: filepath.Join(root, "prompts")}
	for _, d := range []string{r.Dir, r.log, filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ar, err := txtar.ParseFile(filepath.Join("testdata", "projects", rp.dir, "project.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		r.writeFile(filepath.Join(r.Dir, filepath.FromSlash(f.Name)), string(f.Data))
	}
	if err := os.Symlink(bin, filepath.Join(root, "bin", "orchestrate")); err != nil {
		t.Fatal(err)
	}
	var bugs strings.Builder
	for _, b := range rp.bugs {
		fmt.Fprintf(&bugs, "%s|%s\n", b.test, r.patch(b.patch))
	}
	r.writeFile(filepath.Join(root, "bugs.txt"), bugs.String())
	r.writeFile(filepath.Join(root, "agent.sh"), realAgent)
	r.env = append(cleanEnv(),
		"PATH="+filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+filepath.Join(root, "home"), "XDG_DATA_HOME="+filepath.Join(root, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(root, "home", ".config"),
		"GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com",
		"GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com",
		"RP_LOG="+r.log, "RP_BUGS="+filepath.Join(root, "bugs.txt"))
	r.env = append(append(r.env, goEnv...), extra...)
	r.git("init", "-q", "-b", "main")
	r.git("add", "-A")
	r.git("commit", "-qm", rp.dir+" as released")
	for _, b := range rp.bugs {
		r.git("apply", r.patch(b.patch))
	}
	r.git("commit", "-qam", fmt.Sprintf("%d bugs", len(rp.bugs)))
	r.base = strings.TrimSpace(r.git("rev-parse", "HEAD"))
	// The workspace stays out of git, a person's choice of their own.
	r.writeFile(filepath.Join(r.Dir, ".git", "info", "exclude"), ".orchestrator/\n")
	r.must("init")
	r.setAgent("  profile: custom\n  command: sh " + shQuote(filepath.Join(root, "agent.sh")) + "\n  timeout: 5m\n")
	t.Cleanup(func() { waitAnalytics(filepath.Join(r.Dir, ".orchestrator")) })
	return r
}

// patch is the path of one of the project's patches.
func (r *realRepo) patch(name string) string {
	abs, err := filepath.Abs(filepath.Join("testdata", "projects", r.rp.dir, name+".patch"))
	if err != nil {
		r.t.Fatal(err)
	}
	return abs
}

var agentBlock = regexp.MustCompile(`(?m)^agent:\n(?:[ #].*\n|\n)*`)

// setAgent replaces the agent section init wrote with body.
func (r *realRepo) setAgent(body string) {
	r.t.Helper()
	cfg := r.readFile(".orchestrator/config.yaml")
	if !agentBlock.MatchString(cfg) {
		r.t.Fatalf("no agent section in the config init wrote:\n%s", cfg)
	}
	r.writeFile(filepath.Join(r.Dir, ".orchestrator", "config.yaml"), agentBlock.ReplaceAllLiteralString(cfg, "agent:\n"+body))
}

// setGates replaces the gates init wrote with yaml (a "gates:" section).
func (r *realRepo) setGates(yaml string) {
	r.t.Helper()
	cfg := r.readFile(".orchestrator/config.yaml")
	i := strings.Index(cfg, "\ngates:\n")
	if i < 0 {
		r.t.Fatalf("no gates in the config init wrote:\n%s", cfg)
	}
	r.writeFile(filepath.Join(r.Dir, ".orchestrator", "config.yaml"), cfg[:i+1]+yaml)
}

func (r *realRepo) writeFile(path, content string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *realRepo) readFile(name string) string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(name)))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

// run runs a command in the repository with its environment; the output
// and exit code.
func (r *realRepo) run(name string, args ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = r.Dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		r.t.Fatalf("%s: %v", name, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func (r *realRepo) git(args ...string) string {
	r.t.Helper()
	out, code := r.run("git", args...)
	if code != 0 {
		r.t.Fatalf("git %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

func (r *realRepo) orchestrate(args ...string) (string, int) {
	r.t.Helper()
	return r.run(filepath.Join(r.root, "bin", "orchestrate"), args...)
}

func (r *realRepo) must(args ...string) string {
	r.t.Helper()
	out, code := r.orchestrate(args...)
	if code != 0 {
		r.t.Fatalf("orchestrate %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// fileByHand files one issue per bug, as a person would: its summary,
// no tests.
func (r *realRepo) fileByHand() {
	r.t.Helper()
	for _, b := range r.rp.bugs {
		r.must("issue", "add", "--summary", b.summary, "--auto-retry", "true")
	}
}

// prompts are the prompts the agent was given, by the issue its launch
// claimed, in the order of the launches.
func (r *realRepo) prompts() map[string][]string {
	r.t.Helper()
	ents, err := os.ReadDir(r.log)
	if err != nil {
		r.t.Fatal(err)
	}
	type launch struct {
		id, text string
		at       int64
	}
	var all []launch
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			r.t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(r.log, e.Name()))
		if err != nil {
			r.t.Fatal(err)
		}
		id, _, _ := strings.Cut(e.Name(), ".")
		all = append(all, launch{id, string(data), info.ModTime().UnixNano()})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].at < all[j].at })
	out := map[string][]string{}
	for _, l := range all {
		out[l.id] = append(out[l.id], l.text)
	}
	return out
}

// named is the tests of the project's bugs that text names.
func (r *realRepo) named(text string) []string {
	var out []string
	for _, b := range r.rp.bugs {
		if strings.Contains(text, b.test) {
			out = append(out, b.test)
		}
	}
	return out
}

// fixed reports whether the bug is gone from main: its patch applies to
// main's tree again.
func (r *realRepo) fixedOnMain(b bug) bool {
	r.t.Helper()
	wt := filepath.Join(r.root, "check")
	r.git("worktree", "add", "-q", "--detach", wt, "main")
	defer r.git("worktree", "remove", "--force", wt)
	cmd := exec.Command("git", "apply", "--check", r.patch(b.patch))
	cmd.Dir, cmd.Env = wt, r.env
	return cmd.Run() == nil
}

// checkAllMerged asserts what a run that did all the work leaves: the
// run's exit and its count of merges, each bug's fix in a commit of its
// own that touches only the bug's file, each issue's agent launched once
// and told of its own bug only, every issue resolved, no worktree, branch
// or change left behind.
func (r *realRepo) checkAllMerged(out string, code int) {
	t := r.t
	t.Helper()
	n := len(r.rp.bugs)
	if want := fmt.Sprintf("Merged into main: %d of %d", n, n); code != 0 || !strings.Contains(out, want) {
		t.Errorf("run --agents %d: exit %d, want 0 and %q:\n%s", n, code, want, out)
	}
	commits := map[string]string{}
	for _, b := range r.rp.bugs {
		log := strings.Fields(r.git("log", "--no-merges", "--format=%H", r.base+"..main", "--", b.file))
		if len(log) != 1 {
			t.Errorf("%s: %d commits on main change %s since the bugs; want its fix in one", b.test, len(log), b.file)
			continue
		}
		if other, ok := commits[log[0]]; ok {
			t.Errorf("one commit %.12s holds the fixes of %s and %s; want a commit each", log[0], other, b.test)
		}
		commits[log[0]] = b.test
		if files := strings.Fields(r.git("show", "--format=", "--name-only", log[0])); !slices.Equal(files, []string{b.file}) {
			t.Errorf("the commit that fixes %s changes %v; want only %s", b.test, files, b.file)
		}
		if !r.fixedOnMain(b) {
			t.Errorf("%s: the bug is still on main", b.test)
		}
	}
	r.checkOneLaunchEach()
	r.checkNothingLeft()
}

// checkOneLaunchEach asserts that each issue's agent was launched once,
// told of its own bug and of no other.
func (r *realRepo) checkOneLaunchEach() {
	t := r.t
	t.Helper()
	prompts := r.prompts()
	told := map[string]string{}
	for id, ps := range prompts {
		if len(ps) != 1 {
			t.Errorf("%s's agent was launched %d times; want once", id, len(ps))
		}
		for _, p := range ps {
			named := r.named(p)
			if len(named) != 1 {
				t.Errorf("a prompt of %s's agent names %d bugs %v; want its own only:\n%s", id, len(named), named, p)
				continue
			}
			if other, ok := told[named[0]]; ok && other != id {
				t.Errorf("the agents of %s and %s were both told of %s", other, id, named[0])
			}
			told[named[0]] = id
		}
	}
	if len(prompts) != len(r.rp.bugs) || len(told) != len(r.rp.bugs) {
		t.Errorf("%d issues' agents launched, %d bugs told to one agent alone; want %d and %d", len(prompts), len(told), len(r.rp.bugs), len(r.rp.bugs))
	}
}

// checkNothingLeft asserts that every issue is resolved and no worktree,
// branch or change is left.
func (r *realRepo) checkNothingLeft() {
	t := r.t
	t.Helper()
	q := r.readFile(".orchestrator/issue_queue.md")
	for _, st := range statusRow.FindAllStringSubmatch(q, -1) {
		if st[1] != "resolved" {
			t.Errorf("an issue is %s; want every issue resolved:\n%s", st[1], q)
			break
		}
	}
	if out := strings.TrimSpace(r.git("worktree", "list")); strings.Count(out, "\n") != 0 {
		t.Errorf("worktrees left:\n%s", out)
	}
	if out := strings.TrimSpace(r.git("branch", "--format=%(refname:short)")); out != "main" {
		t.Errorf("branches left:\n%s", out)
	}
	if out := strings.TrimSpace(r.git("status", "--porcelain")); out != "" {
		t.Errorf("changes left in the checkout:\n%s", out)
	}
}

// openIssues is the number of issues pending or in progress.
func (r *realRepo) openIssues() int {
	n := 0
	for _, st := range statusRow.FindAllStringSubmatch(r.readFile(".orchestrator/issue_queue.md"), -1) {
		if st[1] == "pending" || st[1] == "in_progress" {
			n++
		}
	}
	return n
}
