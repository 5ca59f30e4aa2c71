// Package signature identifies "the same failure" across runs: it hashes a
// failure's exit class with its output after normalization.
//
// Normalization masks only what is known to vary between two runs of one
// failure, and never a bare number: "got 3 want 4" and "got 5 want 4" are
// progress, and hash differently. Line by line, it
//
//   - keeps what a terminal would show: CRLF becomes LF, a carriage-return
//     progress line keeps the text after its last "\r", ANSI escape
//     sequences and other control characters go, invalid UTF-8 becomes U+FFFD;
//   - masks times and dates (<time>, <date>), measured durations (<dur>) and
//     throughputs (<rate>);
//   - masks Options.Workdir (<workdir>), Options.Home (~) and temporary
//     directories with the random name in them (<tmp>);
//   - masks PIDs (<pid>), ephemeral ports (<port>), addresses (<addr>),
//     stack-frame PC offsets (+<off>) and Go frame arguments ((...)),
//     UUIDs (<uuid>), long hex IDs (<hex>), goroutine IDs (N);
//   - masks the line and column numbers of file references (N), keeping
//     the file name;
//
// and then drops the lines of passing tests and sorts independent failure
// blocks (go test, Python's unittest, node --test in TAP and spec, data race
// reports), so that test order and parallelism do not matter.
//
// Every rule comes from real output of real tools, kept in testdata/corpus
// with the script that made it, and testdata/pairs.txt says which captures
// are one failure and which are not. The rules never look across a line but
// to find blocks, and the cost is linear in the size of the output. Version
// names the rules: change a rule, change Version.
package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Version names the normalization rules and the hash layout. It is the first
// part of every signature's header, so that signatures made by other rules
// never compare equal by accident.
const Version = "sig-v1"

// Class is the exit class of a failure, part of the signature's header.
type Class string

// The exit classes.
const (
	Fail         Class = "fail"         // an ordinary failure
	NonRetryable Class = "nonretryable" // exit 126/127: command not found or not executable
	Infra        Class = "infra"        // a timeout or a kill by a signal (exit 124, or 128+N, or negative)
)

// maxSignal is the highest signal number (Linux's SIGRTMAX); 128+N beyond it
// is an ordinary exit code (255 is often exit(-1)).
const maxSignal = 64

// ClassOf maps an exit code to its class:
//
//	126, 127             NonRetryable (the shell could not execute or find the command)
//	124                  Infra (timeout(1) and the gate's own timeout)
//	129 to 192 (128+N)   Infra (killed by signal N, as a shell reports it)
//	negative             Infra (Go's ProcessState.ExitCode for a signalled process)
//	anything else        Fail, including 0, 1, 2, 125 and 255
func ClassOf(exitCode int) Class {
	switch {
	case exitCode == 126 || exitCode == 127:
		return NonRetryable
	case exitCode == 124, exitCode < 0, exitCode > 128 && exitCode <= 128+maxSignal:
		return Infra
	}
	return Fail
}

// Options names the paths that vary from one machine or checkout to another.
// The zero value is fine: temporary directories are masked without help.
type Options struct {
	// Workdir is the repository root or working directory of the command,
	// an absolute path; it is masked as <workdir>.
	Workdir string
	// Home is the user's home directory, an absolute path; it is masked as ~.
	Home string
}

// Normalize returns the output with everything that varies between runs
// masked, the lines of passing tests dropped and independent failure blocks
// sorted: the text that is hashed, and what "signature --explain" prints.
// Lines end in "\n" (never "\r\n"), blank-line runs become one blank line, and
// the result has no leading or trailing blank lines; it is "" when nothing is
// left (see Empty).
func Normalize(output []byte, opt Options) string {
	paths := newPathMasker(opt)
	text := string(output)
	lines := make([]line, 0, strings.Count(text, "\n")+1)
	for len(text) > 0 {
		raw, rest, _ := strings.Cut(text, "\n")
		text = rest
		lines = append(lines, classify(maskLine(cleanLine(raw), paths)))
	}
	lines = structure(lines)
	return joinLines(lines)
}

// Compute returns the hex SHA256 of the header ("sig-v1 <class>\n") and
// Normalize(output, opt). An empty class counts as Fail.
func Compute(output []byte, class Class, opt Options) string {
	sig, _ := Of(output, class, opt)
	return sig
}

// Of normalizes output once and returns both its signature (as Compute) and
// the normalized text (as Normalize).
func Of(output []byte, class Class, opt Options) (sig string, normalized string) {
	normalized = Normalize(output, opt)
	return hash(class, normalized), normalized
}

// Empty reports whether a normalized text holds nothing: the output was blank
// or only noise. Callers do not count an empty failure toward halting.
func Empty(normalized string) bool {
	return strings.TrimSpace(normalized) == ""
}

func hash(class Class, normalized string) string {
	if class == "" {
		class = Fail
	}
	h := sha256.New()
	h.Write([]byte(Version + " " + string(class) + "\n"))
	h.Write([]byte(normalized))
	return hex.EncodeToString(h.Sum(nil))
}

// joinLines joins lines with "\n", squeezing runs of blank lines into one and
// dropping blank lines at both ends.
func joinLines(lines []line) string {
	var b strings.Builder
	n := 0
	for _, l := range lines {
		n += len(l.text) + 1
	}
	b.Grow(n)
	blank := false
	for _, l := range lines {
		if l.text == "" {
			blank = b.Len() > 0
			continue
		}
		if blank {
			b.WriteByte('\n')
			blank = false
		}
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}
