//go:build !linux

package main

import (
	"testing"
	"time"
)

// asReaper needs Linux's PR_SET_CHILD_SUBREAPER (see reap_linux_test.go).
func asReaper(tb testing.TB) { tb.Skip("orphans are reaped on Linux only") }

func reapOrphans() time.Duration { return 0 }
