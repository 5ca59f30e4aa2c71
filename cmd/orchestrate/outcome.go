package main

import (
	"io"
	"os"
	"strconv"
)

// protocolOut are the commands whose stdout is never an outcome object:
// hook's and mcp's are protocols of their own (an agent's hook decision,
// the Model Context Protocol), and help's is usage text.
var protocolOut = map[string]bool{"hook": true, "mcp": true, "help": true}

// asksJSON reports whether args hold --json before any "--": a command
// that ended before its flags were read (a missing subcommand) still
// answers in JSON.
func asksJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "-json", "--json=true", "-json=true":
			return true
		}
	}
	return false
}

// outcomes names each exit code in the object a --json command prints when
// it has printed nothing else.
var outcomes = map[int]string{
	exitOK:         "ok",
	exitError:      "error",
	exitUsage:      "usage",
	exitNothing:    "nothing",
	exitPerson:     "person_needed",
	exitGateFailed: "gates_failed",
}

// printOutcomeJSON prints the one JSON object of a --json command that
// ended with err before printing its own: {"outcome": "nothing",
// "exit_code": 10, "error": "nothing ready to claim"}, the error's line
// as stderr says it ("error" left out when there is none).
func printOutcomeJSON(w io.Writer, err error) {
	code, msg := codeOf(err)
	b := []byte(`{"outcome": `)
	b = appendJSONString(b, outcomes[code])
	b = append(b, `, "exit_code": `...)
	b = strconv.AppendInt(b, int64(code), 10)
	if msg != "" {
		b = append(b, `, "error": `...)
		b = appendJSONString(b, msg)
	}
	b = append(b, "}\n"...)
	w.Write(b) //nolint:errcheck // the exit code says the outcome too
}

// stdoutFile is the file under the command's stdout (through the
// countingWriter that run puts around it), when it is one.
func (e *env) stdoutFile() (*os.File, bool) {
	w := e.stdout
	if c, ok := w.(*countingWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	return f, ok
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
