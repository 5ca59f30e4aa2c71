package main

import (
	"bufio"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/signature"
)

var signatureCmd = &command{
	name:    "signature",
	summary: "print a failure output's signature; --explain prints the normalized text",
	usage: `Usage: orchestrate signature [FILE|-] [--exit-code N] [--root DIR]... [--explain] [--json]

Prints the failure signature of an output (FILE, or stdin, at most 1 GiB):
a SHA256, in hex, of a versioned header (sig-v3 and the exit class) and the
SHA256 of the output after normalization. The output is read as a stream, in
bounded memory whatever its size. Normalization masks only what varies between two runs of the
same failure: colour codes, progress lines, timestamps and durations,
temporary and workspace paths, the random names of directories, PIDs
(name[pid]), ports, addresses, goroutine IDs,
UUIDs, the line numbers of file:line references, the lines of passing tests
and the order of independent failure blocks. It never masks other numbers:
"got 3 want 4" and "got 5 want 4" differ.

--root DIR (repeatable) is another checkout of the same code, masked as
the repository's root is (<workdir>): the same failure in two worktrees
of one repository has one signature. orchestrate gate and run mask the
repository's root and each gate's working directory. A Go stack names its
checkout without --root: a frame github.com/x/y/pkg.F(...) at
/abs/wt-a/pkg/f.go masks /abs/wt-a too.

--exit-code gives the exit class: 126/127 nonretryable, 124 or 128+N
(a signal) infra, anything else fail. --explain prints the normalized text
instead, to see why two outputs do or do not match; with --json, the
normalized text is its first MiB ("normalized_cut" says whether it is cut).

Examples:
  go test ./... 2>&1 | orchestrate signature
  orchestrate signature --root ../repo-wt-2 wt2-failure.log
  orchestrate signature --explain run1.log > a; orchestrate signature --explain run2.log > b; diff a b

Exit codes: 0 printed, 1 error (an unreadable file), 2 usage.
`,
	run: runSignature,
}

func runSignature(e *env, args []string) error {
	fs := e.flags("signature")
	exitCode := fs.Int("exit-code", 0, "")
	explain := fs.Bool("explain", false, "")
	var roots stringList
	fs.Var(&roots, "root", "")
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
	opt := e.ws().SignatureOptions()
	for _, r := range roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return err
		}
		opt.Roots = append(opt.Roots, abs)
	}
	w := signature.NewWriter(opt)
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

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}
