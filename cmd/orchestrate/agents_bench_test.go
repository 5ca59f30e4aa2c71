package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Four scripted agents on four independent issues, each 2 s of agent time
// plus a gate, against the longest of them alone, measured in the same
// run: the ratio of wall times (goal ≤ 1.3):
//
//	go test -run '^$' -bench AgentsParallel -benchtime 1x ./cmd/orchestrate
func BenchmarkAgentsParallel(b *testing.B) {
	bin := orchestrateBin(b)
	var one, four time.Duration
	for i := 0; i < b.N; i++ {
		one += agentsWall(b, bin, 1, 1)
		four += agentsWall(b, bin, 4, 4)
	}
	b.ReportMetric(one.Seconds()/float64(b.N), "s-one")
	b.ReportMetric(four.Seconds()/float64(b.N), "s-four")
	b.ReportMetric(float64(four)/float64(one), "four/one")
}

// agentsWall times orchestrate run --agents agents on issues issues in a
// new repository (--agents 2 for one issue: the same path as four).
func agentsWall(b *testing.B, bin string, issues, agents int) time.Duration {
	b.Helper()
	cfg := "agent:\n  command: 'id=${ORCHESTRATE_CLAIM%%:*}; sleep 2; echo \"$id\" > \"$id.txt\"'\n" +
		"gates:\n  - name: test\n    command: 'sleep 0.2; ls ISSUE-*.txt'\n"
	_, _, _, orch := agentsProject(b, bin, cfg, issues)
	run := orch("run", "--agents", fmt.Sprint(max(agents, 2)))
	start := time.Now()
	out, err := run.CombinedOutput()
	wall := time.Since(start)
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("Merged into main: %d of %d", issues, issues)) {
		b.Fatalf("run --agents: %v\n%s", err, out)
	}
	return wall
}

// claim --next on a 10,000-issue queue against a 10-issue one, the real
// command in a process of its own, interleaved; what is compared is the
// process's CPU time (user and system), the median of the rounds, as a
// busy machine slows both alike (goal ≤ 2.5×):
//
//	go test -run '^$' -bench ClaimNext -benchtime 20x ./cmd/orchestrate
func BenchmarkClaimNext(b *testing.B) {
	bin := orchestrateBin(b)
	dirs := map[int]string{}
	srcs := map[int][]byte{}
	for _, n := range []int{10, 10000} {
		dirs[n], srcs[n] = benchQueue(b, n)
		// Three issues in five open (pending, in_progress) and none
		// claimed: the next ready one is found among thousands.
		srcs[n] = []byte(strings.ReplaceAll(string(srcs[n]), "| Status | resolved |", "| Status | pending |"))
		cleanupAnalytics(b, dirs[n])
	}
	claimOnce := func(n int) time.Duration {
		os.WriteFile(filepath.Join(dirs[n], "issue_queue.md"), srcs[n], 0o644)
		cmd := exec.Command(bin, "--dir", dirs[n], "claim", "--next", "--as", "bench")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("claim --next on %d issues: %v\n%s", n, err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	claimOnce(10)
	claimOnce(10000)
	b.ResetTimer()
	// Fifteen rounds at least, whatever -benchtime says: the median of
	// one is the one.
	var small, big []time.Duration
	for i := 0; i < max(b.N, 15); i++ {
		small = append(small, claimOnce(10))
		big = append(big, claimOnce(10000))
	}
	ms, mb := median(small), median(big)
	b.ReportMetric(float64(ms.Microseconds())/1000, "cpu-ms-10")
	b.ReportMetric(float64(mb.Microseconds())/1000, "cpu-ms-10k")
	b.ReportMetric(float64(mb)/float64(ms), "10k/10")
	if r := float64(mb) / float64(ms); r > 2.5 {
		b.Errorf("claim --next on 10,000 issues costs %.2f× its cost on 10 (%v against %v); want at most 2.5×", r, mb, ms)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
