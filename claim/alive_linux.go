package claim

import (
	"bytes"
	"os"
	"strconv"
)

// alive reports whether process pid runs: it exists, and is neither a
// zombie nor stopped (SIGSTOP, a debugger).
func alive(pid int) bool {
	st, ok := state(pid)
	return ok && st != 'T' && st != 't'
}

// exists reports whether process pid exists and is not a zombie: stopped
// or running.
func exists(pid int) bool {
	_, ok := state(pid)
	return ok
}

// state is process pid's state letter in /proc (0 when it cannot be
// read), and whether the process exists and is no zombie.
func state(pid int) (byte, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0, true
	}
	switch st := data[i+2]; st {
	case 'Z', 'X', 'x':
		return st, false
	default:
		return st, true
	}
}
