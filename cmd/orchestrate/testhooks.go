//go:build orchestrate_testhooks

package main

import (
	"os"
	"time"
)

// In a test build (go build -tags orchestrate_testhooks), ORCHESTRATE_NOW
// (RFC 3339) sets the clock of new IDs and timestamps, so that the
// command-line scenarios are reproducible. A release build has none of
// this file.
func init() {
	testNow = func() (time.Time, bool) {
		t, err := time.Parse(time.RFC3339, os.Getenv("ORCHESTRATE_NOW"))
		return t, err == nil
	}
	// ORCHESTRATE_REFRESH_HOLD=FILE: the background refresh of the page
	// waits, holding the page's lock, until FILE exists
	// (TestRefreshHoldsTheLockFromItsStart).
	if hold := os.Getenv("ORCHESTRATE_REFRESH_HOLD"); hold != "" {
		testRefreshHold = func() {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if _, err := os.Stat(hold); err == nil {
					return
				}
			}
		}
	}
}
