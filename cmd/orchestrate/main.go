// Command orchestrate keeps an AI coding agent's fix-and-retry loop honest:
// quality gates check the agent's work, failures go back to it as feedback,
// and every count lives in plain markdown and CSV files in .orchestrator/.
//
// Output rules: results go to stdout (one JSON object with --json);
// everything else goes to stderr, errors as one line prefixed
// "orchestrate: ". Exit codes: 0 success, 1 error, 2 usage, 10 nothing to
// do, 11 a person is needed, 12 gates failed.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/loop"
)

func main() {
	commandStarts = func(name, dir string) {
		collector(name, dir)
		processors(name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// collector chooses the collector's settings for the command name about to
// run on the workspace dir, from measurements of each (docs/development.md,
// "Memory"); GOGC or GOMEMLIMIT set by the person win.
func collector(name, dir string) {
	switch {
	case os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "":
	case name == "signature":
		// A stream read once, whose garbage is small and steady:
		// collected less often, within a bound.
		debug.SetGCPercent(300)
		debug.SetMemoryLimit(signatureHeap)
	case name == "analytics":
		// The history read once, row by row, into aggregates that stay
		// small: the same.
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(analyticsHeap)
	case name == "run":
		// A loop that holds little from one agent to the next, and makes
		// much short-lived garbage (prompts, files, output): collected
		// less often, within a bound, however long it runs.
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(runHeap)
	case name == "mcp":
		// A server whose calls are commands: collected as a command's heap
		// is, and given back to the system between calls (atRest).
		debug.SetGCPercent(400)
	default:
		// A command lives for a moment and reads its files whole, the
		// queue the largest: a heap within a bound that grows with the
		// queue, so that it collects when near it and not before.
		debug.SetMemoryLimit(commandHeap(dir))
		if !streams[name] {
			// Fewer collections of a heap that is thrown away at exit
			// anyway, until the bound.
			debug.SetGCPercent(400)
		}
	}
}

// processors chooses how many processors the command name runs its Go
// code on, from measurements (docs/development.md, what a gate costs);
// GOMAXPROCS set by the person wins. A gate run waits on its commands,
// and its own work between their starts and ends is short: on one
// processor the runtime's threads do not hand its goroutines over between
// themselves, and the process spends some 15% less CPU a gate.
func processors(name string) {
	if name == "gate" && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// streams are the commands that live long (watch) or run a whole project
// (demo): they keep Go's collector percentage, within commandHeap. A gate
// streams its output, and collects at 400% too: its limit bounds it, and a
// collection in the middle of twenty short gates is CPU that a gate costs.
var streams = map[string]bool{"watch": true, "demo": true}

// signatureHeap is the memory signature's collector keeps to (a soft
// limit): with the program itself, its peak stays under 64 MiB on any
// input.
const signatureHeap = 48 << 20

// runHeap is the memory run's collector keeps to (a soft limit): what a
// loop holds is small, its agents' output is streamed to their logs, and
// a queue it reads whole is at most 256 MiB (fsx.MaxRead).
const runHeap = 512 << 20

// analyticsHeap is the memory analytics's collector keeps to (a soft
// limit): 1,000,000 rows of history peak at about 35 MiB.
const analyticsHeap = 64 << 20

// The heap a command keeps to (a soft limit): queueHeap times the size of
// the queue in dir, at least minHeap. A command holds at most about 3.3×
// the queue live (the parsed issues beside the file's bytes); 7× leaves it
// room to make garbage between collections, and with the program's own
// memory (about 9 MiB) keeps its peak under 10× the queue.
const (
	minHeap   = 32 << 20
	queueHeap = 6
)

// commandHeap is the soft limit of a command's heap on the workspace dir.
func commandHeap(dir string) int64 {
	info, err := os.Stat(filepath.Join(dir, loop.QueueFile))
	if err != nil {
		return minHeap
	}
	return max(minHeap, queueHeap*info.Size())
}

// commandStarts, when set (by main), is told the command about to run and
// the workspace it is to run on.
var commandStarts func(name, dir string)

// The exit codes.
const (
	exitOK         = 0
	exitError      = 1
	exitUsage      = 2
	exitNothing    = 10
	exitPerson     = 11
	exitGateFailed = 12
)

// exitError carries an exit code; a nil err means nothing more to print.
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *codeError) Unwrap() error { return e.err }

// withCode returns an error that exits with code, printing err if not nil.
func withCode(code int, err error) error { return &codeError{code: code, err: err} }

// usageError is a mistake in the command line: exit 2.
func usageError(cmd, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if cmd != "" {
		msg += fmt.Sprintf(" (see orchestrate help %s)", cmd)
	}
	return withCode(exitUsage, errors.New(msg))
}

func exitCode(err error, stderr io.Writer) int {
	code, msg := codeOf(err)
	if msg != "" {
		fmt.Fprintf(stderr, "orchestrate: %s\n", msg)
	}
	return code
}

// codeOf is the exit code err stands for, and the line to say of it ("" when
// there is nothing more to say).
func codeOf(err error) (int, string) {
	if err == nil {
		return exitOK, ""
	}
	code := exitError
	var ce *codeError
	if errors.As(err, &ce) {
		code = ce.code
		if ce.err == nil {
			return code, ""
		}
	} else if errors.Is(err, claim.ErrFenced) {
		code = exitPerson // a claim taken over: its holder is to stop
	} else if ug := (*loop.UnknownGateError)(nil); errors.As(err, &ug) {
		code = exitUsage // a gate's name mistyped
	}
	return code, err.Error()
}
