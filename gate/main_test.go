package gate

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// The tests' main goroutine keeps the process's first thread for itself:
// the runtime never ends that thread, so a command started there outlives
// goroutines that end locked whatever started it, and no test's goroutine
// runs on it (TestCommandsOutliveEndingThreads).
func init() { runtime.LockOSThread() }

// TestMain lets four tests marked parallel per processor run at once
// (sixteen at most), unless -parallel says how many: they wait on the commands they run (a
// timeout, a kill grace), not on the processor.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(min(4*runtime.GOMAXPROCS(0), 16)))
	}
	os.Exit(m.Run())
}
