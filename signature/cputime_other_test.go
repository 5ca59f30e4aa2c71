//go:build !unix

package signature

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
