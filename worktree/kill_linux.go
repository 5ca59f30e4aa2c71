package worktree

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// killUnder kills every process of this user whose working directory is
// dir or below it: what an agent or its gates left running in a worktree
// (a dev server, a daemon that left its process group) goes with it.
func killUnder(dir string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil {
			continue
		}
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
