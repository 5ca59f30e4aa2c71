package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

var issueCmd = &command{
	name:    "issue",
	summary: "file, show, edit and decide on issues (add, show, set, retry, skip, resolve)",
	usage: `Usage:
  orchestrate issue add [FIELD FLAGS] --summary TEXT [--tests LIST] [--details FILE|- [--exit-code N] [--gate NAME]]
  orchestrate issue show ID [--json]
                                 (its fields and sections; its tests, and
                                 whether each passes in the last gate results)
  orchestrate issue set ID FIELD=VALUE... [--new] [--epoch N]
  orchestrate issue retry ID     (a person's choice: counts back to 0, pending)
  orchestrate issue skip ID      (a person's choice: skipped)
  orchestrate issue resolve ID [--manual]
                                 (resolved; prints SUCCEEDED when it took retries;
                                 --manual: a person fixed it, not the loop)

issue add files a new issue at the end of issue_queue.md and prints its ID,
ISSUE-YYYYMMDD-NNN. A flag per field: --type, --priority, --status,
--source, --category, --created, --auto-retry, --retry-count, --max-retries,
--failure-signature, --previous-signatures, --signature-repeat-count,
--halted, --blocking; and --field NAME=VALUE for any other field
(repeatable). Unset fields get the defaults: Type bug, Priority medium,
Status pending, Auto-Retry false, Max-Retries from config.yaml (10). Sections: --summary, --details FILE (the
failure output; - reads stdin), --verification, --suggested-fix.

--tests LIST sets the Tests field: the tests (or a linter's findings) the
issue is about, each GATE: TEST as the gate's results name it (GATE alone
for the gate as a whole), separated by "; " (a ";" inside one written
\;). An attempt at the issue is judged by them; a failure of one of them
is recorded against the issue, never filed again. issue set ID
'Tests=...' changes them.

With --details, the failure's signature is computed (--exit-code gives its
exit class: 126/127 not retryable, 124 or a signal infrastructure). When an
open issue has the same signature, the failure is recorded against it, as
orchestrate record does, and its ID is printed instead of a new one.

issue set changes only the cells it names; a field the issue lacks gets a
new row in its table's own style. Field names match loosely: Auto-Retry,
auto_retry and "auto retry" are one field. A name close to a field
orchestrate knows but not it (Priorty) is refused as a typo, naming the
field meant; --new takes it as a new field (issue add's --field too).
Known fields take only their values: Priority critical, high, medium or
low; Status pending, in_progress, resolved, stuck or skipped; counts whole
numbers; flags true or false.

set, retry, skip and resolve take --epoch N, the epoch of the caller's
claim of the issue (see orchestrate help claim): the change is refused
(exit 11) when another holds the issue now.

Examples:
  orchestrate issue add --priority critical --auto-retry true \
      --summary "Server fails to start" --details test.log
  go test ./... 2>&1 | orchestrate issue add --summary "tests fail" --details -
  orchestrate issue show ISSUE-20241213-001 --json
  orchestrate issue set ISSUE-20241213-001 Priority=high Max-Retries=5
  orchestrate issue add --summary "TestParse fails" --tests 'tests: example.com/m TestParse'
  orchestrate issue set ISSUE-20241213-001 'Tests=tests: example.com/m TestA; lint'
  orchestrate issue retry ISSUE-20241213-001

Exit codes: 0 done, 11 issue add filed (or recorded) a failure whose issue
now needs a person (not retryable, halted, out of retries), 1 error (an
unknown ID, or a malformed queue: its first problem as file:line: message,
and no file is changed), 2 usage.
`,
	run: runIssue,
}

func runIssue(e *env, args []string) error {
	if len(args) == 0 {
		return usageError("issue", "issue needs a subcommand: add, show, set, retry, skip or resolve")
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "add":
		return runIssueAdd(e, rest)
	case "show":
		return runIssueShow(e, rest)
	case "set":
		return runIssueSet(e, rest)
	case "retry", "skip", "resolve":
		return runIssueDecide(e, sub, rest)
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, lookup("issue").usage)
		return nil
	default:
		return usageError("issue", "unknown issue subcommand %q", sub)
	}
}

type fieldFlags [][2]string

func (f *fieldFlags) String() string { return "" }
func (f *fieldFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	*f = append(*f, [2]string{strings.TrimSpace(k), val})
	return nil
}

func runIssueAdd(e *env, args []string) error {
	fs := e.flags("issue")
	newFields := fs.Bool("new", false, "")
	var fields fieldFlags
	// A flag per field of the seed's format: --type, --auto-retry, …
	named := map[string]*string{}
	for _, field := range queue.SeedFields {
		name := strings.ToLower(field)
		named[name] = fs.String(name, "", "")
	}
	summary := fs.String("summary", "", "")
	details := fs.String("details", "", "")
	verification := fs.String("verification", "", "")
	fix := fs.String("suggested-fix", "", "")
	fs.Var(&fields, "field", "")
	exitCode := fs.Int("exit-code", 0, "")
	gate := fs.String("gate", "", "")
	tests := fs.String("tests", "", "")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("issue", "issue add takes flags only, got %q", pos[0])
	}
	if strings.TrimSpace(*summary) == "" {
		return usageError("issue", "issue add needs --summary")
	}
	ni := loop.NewIssue{Fields: map[string]string{}, Sections: map[string]string{queue.SectionSummary: *summary}}
	fs.Visit(func(f *flag.Flag) {
		if p, ok := named[f.Name]; ok {
			ni.Fields[queue.CanonicalName(f.Name)] = *p
		}
	})
	for _, f := range fields {
		ni.Fields[f[0]] = f[1]
	}
	if *tests != "" {
		ni.Fields[queue.FieldTests] = *tests
	}
	if err := checkNewFields(ni.Fields, fields, *newFields); err != nil {
		return err
	}
	if *details != "" {
		f, err := readFailure(e, *details)
		if err != nil {
			return err
		}
		f.Gate, f.ExitCode = *gate, flagInt(fs, "exit-code", *exitCode)
		ni.Failure = &f
	} else if *gate != "" {
		ni.Fields[loop.FieldGate] = *gate
	}
	if *verification != "" {
		ni.Sections[queue.SectionVerification] = *verification
	}
	if *fix != "" {
		ni.Sections[queue.SectionSuggestedFix] = *fix
	}
	a, err := e.ws().AddIssue(e.ctx, e.now(), ni)
	if err != nil {
		return err
	}
	if e.json {
		if err := e.printJSON(a); err != nil || a.Status != queue.StatusStuck {
			return err
		}
		return withCode(exitPerson, nil)
	}
	fmt.Fprintln(e.stdout, a.ID)
	if a.Deduplicated {
		fmt.Fprintf(e.stderr, "%s has the same failure signature: recorded against it (%s)\n", a.ID, describeRecord(*a.Recorded))
	} else if a.Status == queue.StatusStuck {
		fmt.Fprintf(e.stderr, "%s is stuck at once: its failure is not retryable (command not found or not executable)\n", a.ID)
	}
	if a.Status == queue.StatusStuck {
		return withCode(exitPerson, nil)
	}
	return nil
}

// checkNewFields refuses, as a usage error, a value a known field does not
// take among fields, and a name of given (--field) that is a typo of a
// known field's, unless newOK (--new).
func checkNewFields(fields map[string]string, given fieldFlags, newOK bool) error {
	for k, v := range fields {
		if err := queue.CheckValue(k, v); err != nil {
			return usageError("issue", "%v", err)
		}
	}
	for _, f := range given {
		if err := checkFieldName(f[0], newOK); err != nil {
			return usageError("issue", "issue add: %v", err)
		}
	}
	return nil
}

// flagInt returns &v when the flag was given on the command line, else nil.
func flagInt(fs *flag.FlagSet, name string, v int) *int {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if !set {
		return nil
	}
	return &v
}

func oneID(e *env, cmd string, args []string) (string, error) {
	fs := e.flags("issue")
	pos, err := e.parse(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usageError("issue", "issue %s needs one issue ID", cmd)
	}
	return pos[0], nil
}

func runIssueShow(e *env, args []string) error {
	id, err := oneID(e, "show", args)
	if err != nil {
		return err
	}
	path := e.ws().Path(loop.QueueFile)
	q, err := queue.Load(path)
	if err != nil {
		return err
	}
	is := q.Issue(id)
	if is == nil {
		return &loop.NoIssueError{Path: path, ID: id}
	}
	var tests []loop.TestState
	results := ""
	if units := is.Tests(); len(units) > 0 {
		ev, path := e.ws().LastResults()
		tests = loop.TestStates(ev, units)
		results = path
	}
	if e.json {
		return writeIssueJSON(e.stdout, is, tests)
	}
	// What the queue holds goes to a terminal as text: no escape sequence
	// or control byte in it reaches the terminal (textclean).
	fmt.Fprintf(e.stdout, "%s (%s:%d)\n\n", textclean.Line(is.ID), path, is.Line)
	width := 0
	for _, f := range is.Fields() {
		width = max(width, len(textclean.Line(f.Name)))
	}
	for _, f := range is.Fields() {
		fmt.Fprintf(e.stdout, "  %-*s  %s\n", width, textclean.Line(f.Name), textclean.Line(f.Value))
	}
	printTests(e, tests, results)
	for _, s := range is.Sections() {
		fmt.Fprintf(e.stdout, "\n### %s\n%s\n", textclean.Line(s.Title), textclean.Text(s.Body()))
	}
	return nil
}

func runIssueSet(e *env, args []string) error {
	fs := e.flags("issue")
	fence := e.epochFlag(fs, "issue")
	newFields := fs.Bool("new", false, "")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usageError("issue", "issue set needs an issue ID and FIELD=VALUE pairs")
	}
	if err := fence(pos[0]); err != nil {
		return err
	}
	var kv fieldFlags
	for _, a := range pos[1:] {
		if err := kv.Set(a); err != nil {
			return usageError("issue", "issue set: %v", err)
		}
		if err := queue.CheckValue(kv[len(kv)-1][0], kv[len(kv)-1][1]); err != nil {
			return usageError("issue", "issue set: %v", err)
		}
		if err := checkFieldName(kv[len(kv)-1][0], *newFields); err != nil {
			return usageError("issue", "issue set: %v", err)
		}
	}
	changes, err := e.ws().SetFields(e.ctx, pos[0], kv)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"id": pos[0], "changes": changes})
	}
	if len(changes) == 0 {
		fmt.Fprintf(e.stdout, "%s: unchanged\n", pos[0])
	}
	for _, c := range changes {
		fmt.Fprintf(e.stdout, "%s: %s %q → %q\n", pos[0], c.Field, c.Old, c.New)
	}
	return nil
}

func runIssueDecide(e *env, cmd string, args []string) error {
	fs := e.flags("issue")
	manualFlag := fs.Bool("manual", false, "")
	fence := e.epochFlag(fs, "issue")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("issue", "issue %s needs one issue ID", cmd)
	}
	if err := fence(pos[0]); err != nil {
		return err
	}
	id, manual := pos[0], *manualFlag
	ws := e.ws()
	switch cmd {
	case "retry":
		if err := ws.Retry(e.ctx, e.now(), id); err != nil {
			return err
		}
		return e.report(map[string]any{"id": id, "status": queue.StatusPending},
			"%s: back to pending, retry counts reset\n", id)
	case "skip":
		if err := ws.Skip(e.ctx, e.now(), id); err != nil {
			return err
		}
		return e.report(map[string]any{"id": id, "status": queue.StatusSkipped}, "%s: skipped\n", id)
	}
	r, err := ws.Resolve(e.ctx, e.now(), id, manual)
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"id": id, "status": queue.StatusResolved, "retries": r.Retries, "summary": r.Summary})
	}
	if r.Retries > 0 {
		fmt.Fprint(e.stdout, loop.SucceededMessage(r))
		return nil
	}
	fmt.Fprintf(e.stdout, "%s: resolved\n", id)
	return nil
}

// printTests lists an issue's tests and where each stands in the last gate
// results (results, their file; "" when none is kept).
func printTests(e *env, tests []loop.TestState, results string) {
	if len(tests) == 0 {
		return
	}
	if results == "" {
		fmt.Fprintln(e.stdout, "\nTests (no gate results kept yet: orchestrate gate runs them):")
	} else {
		fmt.Fprintf(e.stdout, "\nTests, as the last gate results have them (%s):\n", results)
	}
	width := 0
	for _, t := range tests {
		width = max(width, len(textclean.Line(t.Test)))
	}
	for _, t := range tests {
		fmt.Fprintf(e.stdout, "  %-*s  %s\n", width, textclean.Line(t.Test), t.State)
	}
}
