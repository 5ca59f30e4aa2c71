package main

import (
	"bufio"
	"fmt"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/signature"
)

var signatureCmd = &command{
	name:    "signature",
	summary: "print a failure output's signature; --explain prints the normalized text",
	usage: `Usage: orchestrate signature [FILE|-] [--exit-code N] [--explain] [--json]

Prints the failure signature of an output (FILE, or stdin, at most 1 GiB):
a SHA256, in hex, of a versioned header (sig-v2 and the exit class) and the
SHA256 of the output after normalization. The output is read as a stream, in
bounded memory whatever its size. Normalization masks only what varies between two runs of the
same failure: colour codes, progress lines, timestamps and durations,
temporary and workspace paths, PIDs, ports, addresses, goroutine IDs,
UUIDs, the line numbers of file:line references, the lines of passing tests
and the order of independent failure blocks. It never masks other numbers:
"got 3 want 4" and "got 5 want 4" differ.

--exit-code gives the exit class: 126/127 nonretryable, 124 or 128+N
(a signal) infra, anything else fail. --explain prints the normalized text
instead, to see why two outputs do or do not match; with --json, the
normalized text is its first MiB ("normalized_cut" says whether it is cut).

Examples:
  go test ./... 2>&1 | orchestrate signature
  orchestrate signature --explain run1.log > a; orchestrate signature --explain run2.log > b; diff a b

Exit codes: 0 printed, 1 error (an unreadable file), 2 usage.
`,
	run: runSignature,
}

func runSignature(e *env, args []string) error {
	fs := e.flags("signature")
	exitCode := fs.Int("exit-code", 0, "")
	explain := fs.Bool("explain", false, "")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError("signature", "signature takes at most one file")
	}
	src := "-"
	if len(pos) == 1 {
		src = pos[0]
	}
	w := signature.NewWriter(e.ws().SignatureOptions())
	if *explain && !e.json {
		out := bufio.NewWriterSize(e.stdout, 64<<10)
		defer out.Flush()
		w.Explain(out)
	}
	if err := copyInput(e, src, w, maxOutputInput); err != nil {
		return err
	}
	d := w.Digest()
	f := loop.Failure{Digest: &d, ExitCode: flagInt(fs, "exit-code", *exitCode)}
	sig := d.Signature(f.Class())
	if e.json {
		return e.printJSON(map[string]any{"signature": sig, "class": f.Class(), "normalized": d.Normalized, "normalized_cut": d.Cut})
	}
	if !*explain {
		fmt.Fprintln(e.stdout, sig)
	}
	return nil
}
