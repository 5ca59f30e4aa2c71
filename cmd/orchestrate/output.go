package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// printJSON writes v as one JSON object on stdout.
func (e *env) printJSON(v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// report prints v as JSON with --json, or the formatted line.
func (e *env) report(v any, format string, args ...any) error {
	if e.json {
		return e.printJSON(v)
	}
	fmt.Fprintf(e.stdout, format, args...)
	return nil
}

// printCheck prints a check's decision, for orchestrate check and run.
func printCheck(w io.Writer, dir string, res loop.CheckResult) {
	switch res.Outcome {
	case loop.CheckDisabled:
		fmt.Fprintf(w, "Auto-retry disabled: %s.\n", res.Reason)
	case loop.CheckNothing:
		fmt.Fprintln(w, "No auto-retry needed: no pending auto-retry issue.")
	case loop.CheckCapReached:
		fmt.Fprint(w, loop.CapMessage(res))
	case loop.CheckTriggered:
		fmt.Fprint(w, loop.TriggeredMessage(res))
	}
	// AUTO-RETRY EXHAUSTED once per exhaustion: for the issues this check
	// is the first to find waiting; the others in a line, unless a retry
	// goes on.
	if esc := res.Escalated(); len(esc) > 0 {
		fmt.Fprint(w, loop.ExhaustedMessage(dir, esc))
	}
	if res.Outcome != loop.CheckTriggered {
		fmt.Fprint(w, loop.StillWaitingMessage(res.Exhausted))
	}
	fmt.Fprint(w, loop.UnfinishedMessage(res.Unfinished))
}

// plural writes a count of a word: 1 loop, 2 loops.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
