package main

import (
	"flag"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/internal/suggest"
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
	var value, name string
	if _, serr := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); serr == nil || name != "" {
		name = strings.TrimSuffix(name, ":")
		if f := fs.Lookup(name); f != nil {
			return fmt.Sprintf("--%s %q: %s", name, value, wants(f))
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

// wants says what kind of value flag f takes.
func wants(f *flag.Flag) string {
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
	return "not a value it takes"
}
