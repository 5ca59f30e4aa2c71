//go:build orchestrate_testhooks

package fsx

import (
	"os"
	"strconv"
)

// The fault hooks of a test build (go build -tags orchestrate_testhooks):
// the crash and full-disk tests drive them through the environment. A
// release build has none of this file.
func init() {
	if n, err := strconv.ParseInt(os.Getenv(KillAtEnv), 10, 64); err == nil && n > 0 {
		killAt = n
	}
	failWrite = os.Getenv(FailWriteEnv)
}
