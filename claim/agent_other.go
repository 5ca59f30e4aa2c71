//go:build !linux

package claim

import "os"

// Agent is the process that stands for the agent that runs this command:
// here, its parent.
func Agent() int { return os.Getppid() }
