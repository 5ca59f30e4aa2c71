package claim

import (
	"bytes"
	"os"
	"strconv"
)

// alive reports whether process pid runs: it exists, and is neither a
// zombie nor stopped (SIGSTOP, a debugger).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return true
	}
	switch data[i+2] {
	case 'Z', 'X', 'x', 'T', 't':
		return false
	}
	return true
}

// exists reports whether process pid exists and is not a zombie: stopped
// or running.
func exists(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return true
	}
	switch data[i+2] {
	case 'Z', 'X', 'x':
		return false
	}
	return true
}
