package main

import (
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/mdpatch"
	"github.com/orchestrate-dev/orchestrate/internal/suggest"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// unknownCommand is the usage error of a command name orchestrate does not
// have, with the one meant when a command's name is close to it.
func unknownCommand(name string) error {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return usageError("", "unknown command %q%s (orchestrate help lists them)", name, didYouMean(name, names, ""))
}

// didYouMean is "; did you mean PREFIX+X?" for the candidate X close to
// word, or "".
func didYouMean(word string, candidates []string, prefix string) string {
	if s := suggest.Closest(word, candidates); s != "" {
		return "; did you mean " + prefix + s + "?"
	}
	return ""
}

// flagName is a flag's name as typed, without its dashes and value.
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	return name
}

// flagProblem says what is wrong with a command's flags in a person's
// words: the flag package's errors name a flag with one dash ("flag
// provided but not defined: -agent") and a duration it cannot read as a
// "parse error". Flags are written with two dashes, as the usage does; an
// unknown flag gets the one meant, a bad value what the flag wants.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		return "unknown flag --" + name + didYouMean(name, known, "--")
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag --" + name + " needs a value"
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if value, tail, ok := strings.Cut(rest, " for flag -"); ok {
			name, cause, _ := strings.Cut(tail, ": ")
			if f := fs.Lookup(name); f != nil {
				return fmt.Sprintf("--%s %s: %s", name, value, wants(f, cause))
			}
		}
	}
	return strings.ReplaceAll(msg, " -", " --")
}

// durationType is the type of the flag package's value of a Duration flag.
var durationType = func() reflect.Type {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	var d time.Duration
	fs.DurationVar(&d, "d", 0, "")
	return reflect.TypeOf(fs.Lookup("d").Value)
}()

// wants says what kind of value flag f takes: for a duration or a number,
// what the flag package's "parse error" means; for any other, cause, the
// flag's own words.
func wants(f *flag.Flag, cause string) string {
	if reflect.TypeOf(f.Value) == durationType {
		return "not a duration: want a number with its unit, such as 90s, 5m or 1h30m"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64:
			return "not a whole number"
		case float64:
			return "not a number"
		case bool:
			return "not true or false"
		}
	}
	return cause
}

// knownFields are the fields orchestrate reads or writes in an issue's
// table.
var knownFields = append(slices.Clone(queue.SeedFields),
	queue.FieldClaimedBy, queue.FieldClaimedAt, queue.FieldLeaseEpoch, queue.FieldLeaseUntil, queue.FieldTouches, queue.FieldTests,
	loop.FieldEscalated, loop.FieldSession, loop.FieldApproved, loop.FieldDiffHash,
	loop.FieldHaltReason, loop.FieldRecentSignatures, loop.FieldGate)

// checkFieldName refuses a field name that orchestrate does not know but
// that is close to one it does (Priorty for Priority): a typo that would
// add a field nothing reads. Names match loosely, as in the queue
// (Auto-Retry, auto_retry and "auto retry" are one). A name far from every
// known one is a new field, as is any name when newOK (--new).
func checkFieldName(name string, newOK bool) error {
	if newOK {
		return nil
	}
	if meant := meantField(name); meant != "" {
		return fmt.Errorf("unknown field %q; did you mean %s? (--new adds a field of that name)", name, meant)
	}
	return nil
}

// meantField is the known field that name is a typo of, or "" when name
// is a known field or far from every one.
func meantField(name string) string {
	n := mdpatch.Norm(name)
	norms := make([]string, len(knownFields))
	for i, f := range knownFields {
		norms[i] = mdpatch.Norm(f)
		if norms[i] == n {
			return ""
		}
	}
	if s := suggest.Closest(n, norms); s != "" {
		return knownFields[slices.Index(norms, s)]
	}
	return ""
}
