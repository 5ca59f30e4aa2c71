//go:build orchestrate_testhooks

package loop

import (
	"os"
	"time"
)

// leftoverWaitEnv, in a test build (go build -tags orchestrate_testhooks),
// sets how long a run waits for a killed run's agent group before it
// refuses (leftoverWait): a test of the refusal need not wait the seconds
// a busy machine is given. A release build has none of this file.
const leftoverWaitEnv = "ORCHESTRATE_LEFTOVER_WAIT"

func init() {
	if d, err := time.ParseDuration(os.Getenv(leftoverWaitEnv)); err == nil && d > 0 {
		leftoverWait = d
	}
}
