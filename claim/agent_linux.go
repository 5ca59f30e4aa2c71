package claim

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Agent is the process that stands for the agent that runs this command:
// the nearest ancestor that outlives the command. A shell that runs one
// command (sh -c, as an agent's shell tool runs each command) and a
// subshell (a script's $(…)) exit with it: they are passed over, and so
// the holder of a claim lives as long as the agent.
func Agent() int {
	pid := os.Getppid()
	for i := 0; i < 64 && pid > 1; i++ {
		parent, cmd, ok := procOf(pid)
		if !ok {
			break
		}
		_, pcmd, pok := procOf(parent)
		if !transient(cmd) && !(pok && parent > 1 && bytes.Equal(cmd, pcmd)) {
			return pid
		}
		pid = parent
	}
	if pid <= 1 {
		return os.Getppid()
	}
	return pid
}

// procOf is process pid's parent and command line (NUL-separated).
func procOf(pid int) (parent int, cmdline []byte, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, nil, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, nil, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, nil, false
	}
	parent, err = strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, nil, false
	}
	cmdline, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return parent, cmdline, true
}

// transient reports whether cmdline is a shell that runs one command
// string (-c) and exits.
func transient(cmdline []byte) bool {
	args := bytes.Split(bytes.TrimRight(cmdline, "\x00"), []byte{0})
	if len(args) < 2 || !shells[filepath.Base(string(bytes.TrimPrefix(args[0], []byte("-"))))] {
		return false
	}
	for _, a := range args[1:] {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && bytes.IndexByte(a, 'c') > 0 {
			return true
		}
	}
	return false
}

// shells are the shells an agent's tool or a script runs commands with.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true, "busybox": true, "fish": true}
