package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/loop"
)

// The hot paths measured against their own baselines in the same run: a
// Stop hook and a record on a 1,000,000-row history against an empty one,
// and a Stop hook on a 10,000-issue queue against a 10-issue one. Each is
// the real command in a process of its own, as an agent client runs it;
// what is compared is the CPU time of that process and of the gate it
// waits for (the process's rusage), the fastest of the rounds, the
// variants interleaved so that a busy machine slows them alike:
//
//	go test -run '^$' -bench HotPaths -benchtime 10x ./cmd/orchestrate
//
// The background refresh of analytics.html a command starts is a process
// of its own, which it does not wait for: the benchmark does, as the reaper
// of the orphans of its commands, and counts it (the "+bg" figures). A
// record and a Stop hook that blocks start none; a Stop hook that lets the
// agent stop does, whose cost grows with the history: the page is made
// then, for the person who looks.

// hotWorkspace makes a repository with a workspace whose one gate runs
// command, a queue of issues issues and a history of rows rows.
func hotWorkspace(b *testing.B, issues, rows int, command string) (root string, queue []byte) {
	b.Helper()
	dir, src := benchQueue(b, issues)
	root = filepath.Dir(dir)
	config := "agent:\n  command: 'true'\ngates:\n  - name: unit\n    command: '" + command + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
		b.Fatal(err)
	}
	if rows > 0 {
		writeHistory(b, filepath.Join(dir, "history.csv"), rows)
	}
	return root, src
}

// writeHistory writes a history of rows rows of loops: an agent launch,
// three gates, a failure recorded now and then, a check.
func writeHistory(b *testing.B, path string, rows int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail\n")
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < rows; n++ {
		at = at.Add(1500 * time.Millisecond)
		ts := at.Format("2006-01-02T15:04:05.000Z07:00")
		run := fmt.Sprintf("run-%05d", n/100)
		loopN := n % 100 / 6
		switch n % 6 {
		case 0:
			fmt.Fprintf(w, "%s,%s,%d,agent,,,%d,ok,0,%d,,fresh: claude -p\n", ts, run, loopN, loopN, 30000+n%7000)
		case 1, 2:
			fmt.Fprintf(w, "%s,%s,%d,gate,,gate-%02d,,pass,0,%d,,\n", ts, run, loopN, n%20, n%9000)
		case 3:
			fmt.Fprintf(w, "%s,%s,%d,gate,ISSUE-2025%04d-%03d,gate-%02d,,fail,1,%d,%064x,\n", ts, run, loopN, n%10000/1000, n%1000, n%20, n%9000, n%300)
		case 4:
			fmt.Fprintf(w, "%s,%s,%d,record,ISSUE-2025%04d-%03d,gate-%02d,%d,fail,1,,%064x,repeat=1\n", ts, run, loopN, n%10000/1000, n%1000, n%20, n%10, n%300)
		case 5:
			fmt.Fprintf(w, "%s,%s,%d,check,,,,triggered,,,,ISSUE-2025%04d-%03d\n", ts, run, loopN, n%10000/1000, n%1000)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// cpuOf runs the command and returns the CPU time of its process and of
// the processes it waited for.
func cpuOf(b *testing.B, cmd *exec.Cmd) time.Duration {
	own, _ := cpuWithOrphans(b, cmd)
	return own
}

// cpuWithOrphans is cpuOf, and the CPU time of the processes the command
// left to run on (see asReaper), once they are done.
func cpuWithOrphans(b *testing.B, cmd *exec.Cmd) (own, orphans time.Duration) {
	b.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok || cmd.ProcessState.ExitCode() != exitPerson {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
		}
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), reapOrphans()
}

func BenchmarkHotPaths(b *testing.B) {
	// ORCHESTRATE_HOTPATHS_BIN measures another build (an older one, to
	// compare) in the same way. (ORCHESTRATE_BENCH_BIN is the build a
	// run is compared with, in BenchmarkRunCommandCPU: make bench with it
	// set still measures this one here.)
	bin := os.Getenv("ORCHESTRATE_HOTPATHS_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("orchestrate"); err != nil {
			b.Skip("orchestrate is not on PATH:", err)
		}
	}
	asReaper(b)
	small, smallQueue := hotWorkspace(b, 10, 0, "true")
	long, longQueue := hotWorkspace(b, 10, 1_000_000, "true")
	big, _ := hotWorkspace(b, 10_000, 0, "true")
	// A gate that fails: the hook files an issue for the session and
	// blocks; the queue is put back before each, so that each files one.
	failing := "echo unit: got 3, want 4; exit 1"
	smallFail, smallFailQueue := hotWorkspace(b, 10, 0, failing)
	bigFail, bigFailQueue := hotWorkspace(b, 10_000, 0, failing)
	// The failing hook on the long history (the same file, linked).
	longFail, longFailQueue := hotWorkspace(b, 10, 0, failing)
	if err := os.Link(filepath.Join(long, loop.DefaultDir, "history.csv"), filepath.Join(longFail, loop.DefaultDir, "history.csv")); err != nil {
		b.Fatal(err)
	}
	failure := filepath.Join(b.TempDir(), "failure.log")
	if err := os.WriteFile(failure, []byte("--- FAIL: TestAdd (0.00s)\n    calc_test.go:12: got 3, want 4\nFAIL\n"), 0o644); err != nil {
		b.Fatal(err)
	}

	hook := func(root string) *exec.Cmd {
		cmd := exec.Command(bin, "hook", "stop")
		cmd.Dir = root
		cmd.Stdin = bytes.NewReader([]byte(`{"session_id":"bench","cwd":"` + root + `","hook_event_name":"Stop"}`))
		return cmd
	}
	reset := func(root string, queue []byte) {
		if err := os.WriteFile(filepath.Join(root, loop.DefaultDir, "issue_queue.md"), queue, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	hookFail := func(root string, queue []byte) *exec.Cmd {
		reset(root, queue)
		return hook(root)
	}
	record := func(root string, queue []byte) *exec.Cmd {
		// The same issue, as it was, each time: no halt.
		reset(root, queue)
		cmd := exec.Command(bin, "record", "ISSUE-20241213-001", failure, "--exit-code", "1", "--gate", "unit")
		cmd.Dir = root
		return cmd
	}
	best := map[string]time.Duration{} // name, and name+"+bg"
	measure := func(name string, cmd *exec.Cmd) {
		own, orphans := cpuWithOrphans(b, cmd)
		for n, d := range map[string]time.Duration{name: own, name + "+bg": own + orphans} {
			if best[n] == 0 || d < best[n] {
				best[n] = d
			}
		}
	}
	for b.Loop() {
		// Ten rounds at least, whatever -benchtime says: the fastest of
		// each is taken, and ten make a quiet one likelier than five.
		for range 10 {
			measure("hook-empty", hook(small))
			measure("hook-1M", hook(long))
			measure("hook-10", hook(small))
			measure("hook-10k", hook(big))
			measure("record-empty", record(small, smallQueue))
			measure("record-1M", record(long, longQueue))
			measure("hook-fail-10", hookFail(smallFail, smallFailQueue))
			measure("hook-fail-10k", hookFail(bigFail, bigFailQueue))
			measure("hook-fail-1M", hookFail(longFail, longFailQueue))
		}
	}
	ratio := func(a, b string) float64 { return float64(best[a]) / float64(best[b]) }
	for _, r := range []struct {
		a, b, unit string
		most       float64 // 0: reported only
	}{
		{"hook-1M", "hook-empty", "hook-1M/empty", 1.2},
		{"record-1M", "record-empty", "record-1M/empty", 1.2},
		{"record-1M+bg", "record-empty+bg", "record-1M/empty+bg", 1.5},
		{"hook-fail-1M+bg", "hook-fail-10+bg", "hook-fail-1M/empty+bg", 1.5},
		{"hook-10k", "hook-10", "hook-10k/10", 1.5},
		// A failing gate writes the queue back, whole, once: the issue it
		// files and the session's retry in one write. The kernel's part
		// of that (the read, the write, the sync, the old file freed) is
		// most of the difference, and grows under load (see "The bounds,
		// and why" in docs/development.md).
		{"hook-fail-10k", "hook-fail-10", "hook-fail-10k/10", 2.0},
		// The page made as the agent stops, for the person: reported only.
		{"hook-1M+bg", "hook-empty+bg", "hook-1M/empty+bg", 0},
	} {
		got := ratio(r.a, r.b)
		b.ReportMetric(got, r.unit)
		if r.most > 0 && got > r.most {
			b.Errorf("%s = %.2f; want at most %.1f", r.unit, got, r.most)
		}
	}
	for _, name := range []string{"hook-empty", "hook-1M", "hook-10", "hook-10k", "record-empty", "record-1M", "hook-fail-10", "hook-fail-10k", "hook-fail-1M"} {
		b.Logf("%-13s %6.1f ms CPU, %6.1f ms with what it left running", name, float64(best[name].Microseconds())/1000, float64(best[name+"+bg"].Microseconds())/1000)
	}
}

// BenchmarkRunLoop measures what a run costs beyond its children's work:
// a run whose agent does nothing and whose one gate always fails, until the
// same failure three times halts it. Reported per loop: the run's own CPU
// time (this process: the prompts, the queue, the state, the history, the
// artifacts, and the report at the end) against its children's (the agent
// and the gate, each a shell), and the wall time.
//
//	go test -run '^$' -bench RunLoop -benchtime 10x ./cmd/orchestrate
func BenchmarkRunLoop(b *testing.B) {
	config := "agent:\n  command: 'true'\n  resume_command: 'true'\ngates:\n  - name: unit\n    command: 'echo FAIL: got 3, want 4; exit 1'\n"
	var self, children, wall time.Duration
	loops := 0
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), loop.DefaultDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s0, c0 := rusage(syscall.RUSAGE_SELF), rusage(syscall.RUSAGE_CHILDREN)
		start := time.Now()
		res, err := loop.Workspace{Dir: dir}.Run(context.Background(), loop.RunOptions{Task: "never done"})
		wall += time.Since(start)
		self += rusage(syscall.RUSAGE_SELF) - s0
		children += rusage(syscall.RUSAGE_CHILDREN) - c0
		if err != nil {
			b.Fatal(err)
		}
		if res.Outcome != loop.RunHalted {
			b.Fatalf("run: %s (%s); want %s", res.Outcome, res.Reason, loop.RunHalted)
		}
		loops += res.Loops
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(loops) }
	b.ReportMetric(per(self), "self-CPU-ms/loop")
	b.ReportMetric(per(children), "children-CPU-ms/loop")
	b.ReportMetric(float64(self)/float64(children), "self/children")
	b.ReportMetric(per(wall), "wall-ms/loop")
}

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
