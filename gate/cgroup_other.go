//go:build unix && !linux

package gate

import (
	"os/exec"
	"syscall"
	"time"
)

// cgroup is a command's cgroup, which only Linux has: here, none.
type cgroup struct{}

func newCgroup() *cgroup                     { return nil }
func (c *cgroup) place(cmd *exec.Cmd)        {}
func (c *cgroup) kill()                      {}
func (c *cgroup) remove()                    {}
func (c *cgroup) signal(syscall.Signal)      {}
func (c *cgroup) drain(time.Time)            {}
func (c *cgroup) watched(time.Duration) bool { return false }
func refusedIntoCgroup(error) bool           { return false }
func refuseCgroups()                         {}
func startsInCgroups() bool                  { return false }
