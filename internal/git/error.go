package git

import (
	"slices"
	"strings"
	"time"
)

// Error is a git command that failed: every error of this package is one.
type Error struct {
	Args []string // the arguments, after git -C Dir
	Dir  string
	// ExitCode is git's exit code: -1 when git did not exit by itself
	// (it did not start, or was killed).
	ExitCode int
	// Stderr is what git printed on its standard error, trimmed (its
	// first 64 KiB).
	Stderr string
	// Timeout is the bound the command ran past, when that ended it.
	Timeout time.Duration
	// Err is why it failed: an *exec.ExitError, or why it did not start.
	Err error
}

// Error is the command and what git said, on one line: "git diff: bad
// revision 'x'".
func (e *Error) Error() string { return "git " + e.Command() + ": " + e.Said() }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// verbs are the subcommands whose first operand is a verb: their command
// is both ("worktree add").
var verbs = []string{"worktree", "stash", "remote", "notes", "submodule", "reflog", "bisect", "sparse-checkout"}

// Command is the git command that failed, without its options and its
// operands: the subcommand ("diff"), with its verb for one that has verbs
// ("worktree add").
func (e *Error) Command() string {
	i := 0
	for i < len(e.Args) && strings.HasPrefix(e.Args[i], "-") {
		if a := e.Args[i]; a == "-c" || a == "-C" {
			i++ // and its value
		}
		i++
	}
	if i >= len(e.Args) {
		return strings.Join(e.Args, " ")
	}
	cmd := e.Args[i]
	if slices.Contains(verbs, cmd) && i+1 < len(e.Args) && !strings.HasPrefix(e.Args[i+1], "-") {
		cmd += " " + e.Args[i+1]
	}
	return cmd
}

// Said is what git said, on one line: the lines of its standard error
// joined with "; ", without git's "fatal: " and without the two lines of
// advice that follow a remote git cannot read ("Please make sure you have
// the correct access rights", "and the repository exists."). When git said
// nothing, it is why the command failed ("exit status 1", "signal:
// killed"). A command that ran past its timeout ends with "no answer in"
// the timeout.
func (e *Error) Said() string {
	var lines []string
	for _, line := range strings.Split(e.Stderr, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "fatal: "))
		if line != "" && !strings.HasPrefix(line, "Please make sure") && !strings.HasPrefix(line, "and the repository exists") {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 && e.Err != nil {
		lines = append(lines, e.Err.Error())
	}
	if e.Timeout > 0 {
		lines = append(lines, "no answer in "+e.Timeout.String())
	}
	return strings.Join(lines, "; ")
}

// RemoteSaid is what the remote said, in a command that talked to one:
// the lines git printed with the prefix "remote: " (the remote's own
// messages, which git passes on), without it.
func (e *Error) RemoteSaid() []string {
	var said []string
	for _, line := range strings.Split(e.Stderr, "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "remote: "); ok && strings.TrimSpace(s) != "" {
			said = append(said, strings.TrimSpace(s))
		}
	}
	return said
}
