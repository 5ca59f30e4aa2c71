package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/orchestrate-dev/orchestrate/loop"
)

// env is what every command runs with.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	dir     string // the workspace directory
	json    bool   // --json
	command string // the command's name, once it is known

	// tree is the linked git worktree the workspace was found through (a
	// command run in it): the gates run there.
	tree string

	// fenceID and fenceEpoch are the claim the command's changes carry
	// ($ORCHESTRATE_CLAIM, --epoch): refused once it was taken over.
	fenceID    string
	fenceEpoch int
}

func (e *env) ws() loop.Workspace {
	w := loop.Workspace{Dir: e.dir, Notify: e.notify}
	if e.tree != "" {
		w = w.InTree(e.tree)
	}
	if e.fenceID != "" {
		w = w.Fenced(e.fenceID, e.fenceEpoch)
	}
	return w
}

// notify tells the person at the terminal what happens meanwhile: a lock
// waited for, a warning after the command's commit point.
func (e *env) notify(msg string) { fmt.Fprintf(e.stderr, "orchestrate: %s\n", msg) }

// now is the current time; in a test build, the clock testNow sets.
func (e *env) now() time.Time {
	if testNow != nil {
		if t, ok := testNow(); ok {
			return t
		}
	}
	return time.Now()
}

// testNow is nil but in a build with the orchestrate_testhooks tag
// (testhooks.go), where ORCHESTRATE_NOW sets the clock.
var testNow func() (time.Time, bool)

// stderrIsTerminal reports whether colours and progress may be shown.
func (e *env) stderrIsTerminal() bool {
	f, ok := e.stderr.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // the full usage text, examples and exit codes included
	run     func(e *env, args []string) error
}

// commands is the table of subcommands, in the order of their names (as
// mainUsage lists them). It is filled by init, not by its declaration: the
// commands' run functions look commands up (help, --help), which an
// initializer may not refer back to.
var commands []*command

func init() {
	commands = []*command{
		abortCmd, analyticsCmd, approveCmd, checkCmd, claimCmd, completionCmd, demoCmd, doctorCmd,
		gateCmd, helpCmd, hookCmd, initCmd, issueCmd, mcpCmd, promptCmd, recordCmd,
		rejectCmd, releaseCmd, renewCmd, runCmd, sessionCmd, signatureCmd, statusCmd, validateCmd,
		versionCmd, watchCmd,
	}
}

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	out := &countingWriter{w: stdout}
	e := &env{ctx: ctx, stdin: stdin, stdout: out, stderr: stderr, dir: loop.DefaultDir}
	err := e.runCommand(args)
	if (e.json || asksJSON(args)) && err != nil && out.n == 0 && !protocolOut[e.command] {
		printOutcomeJSON(stdout, err)
	}
	return err
}

// runCommand runs the command that args name, after the global flags.
func (e *env) runCommand(args []string) error {
	stdout := e.stdout
	dirGiven := false
	if v := os.Getenv("ORCHESTRATOR_DIR"); v != "" {
		e.dir, dirGiven = v, true
	}
	// Global flags may come before the command.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			fmt.Fprint(stdout, mainUsage())
			return nil
		case a == "--json" || a == "-json":
			e.json = true
		case a == "--dir" || a == "-dir":
			if len(args) < 2 {
				return usageError("", "flag needs an argument: %s", a)
			}
			e.dir, dirGiven = args[1], true
			args = args[1:]
		case strings.HasPrefix(a, "--dir=") || strings.HasPrefix(a, "-dir="):
			e.dir, dirGiven = a[strings.Index(a, "=")+1:], true
		case a == "--version" || a == "-version":
			return printVersion(e)
		default:
			return usageError("", "unknown flag %s%s", a, didYouMean("--"+flagName(a), globalFlags, ""))
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprint(e.stderr, mainUsage())
		return withCode(exitUsage, nil)
	}
	c := lookup(args[0])
	if c == nil {
		return unknownCommand(args[0])
	}
	e.command = c.name
	if !dirGiven && !walksNot[c.name] {
		e.dir, e.tree = findDir(e.dir)
	}
	if commandStarts != nil {
		commandStarts(c.name, dirArg(e.dir, args[1:]))
	}
	if err := e.claimFromEnv(); err != nil {
		return err
	}
	err := c.run(e, args[1:])
	if refreshesAnalytics[c.name] {
		refreshAnalytics(e.ws())
	}
	return err
}

// dirArg is the workspace directory a command's own --dir flag names in
// args, else dir. It looks no further than "--", and is read for the
// collector's settings alone: the command's flags decide.
func dirArg(dir string, args []string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return dir
		case (a == "--dir" || a == "-dir") && i+1 < len(args):
			dir = args[i+1]
		case strings.HasPrefix(a, "--dir=") || strings.HasPrefix(a, "-dir="):
			dir = a[strings.Index(a, "=")+1:]
		}
	}
	return dir
}

// walksNot are the commands that do not look for the workspace in the
// parent directories: init makes one where it is asked to, the hooks find
// theirs from the agent's project directory, demo builds its own.
var walksNot = map[string]bool{"init": true, "hook": true, "demo": true, "help": true, "version": true, "completion": true}

// findDir finds the workspace directory dir (relative, as .orchestrator
// is) from a subdirectory, as git finds .git: dir itself when it is in the
// working directory, else the nearest parent's, up to the repository's
// root (the first directory with a .git), given relative to the working
// directory ("../../.orchestrator"). In a linked git worktree it is the
// main worktree's, and tree is the linked worktree's root, where the
// gates run. With none found, dir stays, and the command says there is no
// workspace.
func findDir(dir string) (found, tree string) {
	if filepath.IsAbs(dir) {
		return dir, ""
	}
	cwd, err := os.Getwd()
	if err != nil {
		return dir, ""
	}
	found, tree = loop.FindWorkspaceTree(dir, nil, cwd)
	if found == "" {
		return dir, ""
	}
	if rel, err := filepath.Rel(cwd, found); err == nil {
		return rel, tree
	}
	return found, tree
}

// flags makes a flag set for cmd with the common flags (--dir, --json).
func (e *env) flags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.dir, "dir", e.dir, "the workspace directory")
	fs.BoolVar(&e.json, "json", e.json, "print one JSON object")
	return fs
}

// parse parses args with flags and positional arguments in any order;
// after "--" everything is positional.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fmt.Fprint(e.stdout, lookup(fs.Name()).usage)
				return nil, withCode(exitOK, nil)
			}
			return nil, usageError(strings.Fields(fs.Name())[0], "%s: %s", fs.Name(), flagProblem(fs, err))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseNone parses args for a command that takes flags only.
func (e *env) parseNone(fs *flag.FlagSet, args []string) error {
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fs.Name(), "%s takes no arguments, got %q", fs.Name(), pos[0])
	}
	return nil
}

func mainUsage() string {
	var b strings.Builder
	b.WriteString(`orchestrate keeps an AI coding agent's fix-and-retry loop honest.

Usage:
  orchestrate [--dir DIR] [--json] COMMAND [ARGS]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString(`
Global flags:
  --dir DIR   the workspace directory (default .orchestrator here or in the
              nearest parent up to the repository root, or $ORCHESTRATOR_DIR)
  --json      print one JSON object on stdout

Exit codes:
  0 success   1 error   2 usage   10 nothing to do   11 a person is needed
  12 gates failed

Run "orchestrate help COMMAND" for a command's usage and examples.
`)
	return b.String()
}

var helpCmd = &command{
	name:    "help",
	summary: "show a command's usage, with examples",
	usage: `Usage: orchestrate help [COMMAND]

Shows the usage of COMMAND, with examples and exit codes, or the list of
commands.
`,
	run: func(e *env, args []string) error {
		args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return strings.HasPrefix(a, "-") })
		if len(args) == 0 {
			fmt.Fprint(e.stdout, mainUsage())
			return nil
		}
		name := strings.Join(args, " ")
		c := lookup(name)
		if c == nil {
			c = lookup(args[0])
		}
		if c == nil {
			return unknownCommand(name)
		}
		fmt.Fprint(e.stdout, c.usage)
		return nil
	},
}
