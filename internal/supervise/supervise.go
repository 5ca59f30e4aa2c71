// Package supervise is the supervisor every gate, agent and reviewer
// command runs under on Linux: this same program, started again from the
// running executable (/proc/self/exe) with Name as its argv[0], the
// supervisor's settings in argv[1] and the command in argv[2].
//
// The package is a leaf with no dependency beyond the runtime, os, syscall
// and a few small standard packages, so that its init runs before the
// heavy packages of the program are initialized: in supervisor mode that
// init runs the supervisor and exits, and the program's other package
// initializations, main included, never run.
//
// Supervisor mode is chosen by argv alone, which only the process that
// execs the program sets; no environment variable reaches it.
package supervise

import (
	"strconv"
	"strings"
	"time"
)

// Name is the supervisor's argv[0], by which the program knows it is to
// be one.
const Name = "orchestrate-supervisor"

// version is the first field of the settings: a supervisor started by
// another build, with other settings, refuses them.
const version = "v2"

// Args returns the argv of a supervisor that runs script with sh -c:
// parent is the PID of the process that starts it (when it is gone, the
// supervisor stops everything below it), grace the wait between SIGTERM
// and SIGKILL, and gorace the GORACE the command is to have (had: whether
// it had one).
func Args(parent int, grace time.Duration, gorace string, had bool, script string) []string {
	h := "0"
	if had {
		h = "1"
	}
	spec := strings.Join([]string{version, strconv.Itoa(parent), strconv.FormatInt(grace.Milliseconds(), 10), h, gorace}, " ")
	return []string{Name, spec, script}
}

// settings are what argv[1] carries.
type settings struct {
	parent int
	grace  time.Duration
	gorace string
	had    bool
}

// parse reads argv[1]; false when it is not a supervisor's settings.
func parse(spec string) (settings, bool) {
	f := strings.SplitN(spec, " ", 5)
	if len(f) != 5 || f[0] != version || (f[3] != "0" && f[3] != "1") {
		return settings{}, false
	}
	parent, err1 := strconv.Atoi(f[1])
	ms, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || parent <= 0 || ms < 0 {
		return settings{}, false
	}
	return settings{parent: parent, grace: time.Duration(ms) * time.Millisecond, gorace: f[4], had: f[3] == "1"}, true
}
