package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server's cost against the command line's, as make bench
// measures it: a tool call's CPU time is at most 1.5 times the same
// command's (a process of its own, as an agent runs it), and the server's
// resident memory at rest is under 20 MB. Each fails past its bound.
//
//	go test -run '^$' -bench MCP -benchtime 3x ./cmd/orchestrate

// mcpCalls is how many calls a round of the server makes: its own start
// is measured apart and taken off.
const mcpCalls = 20

// mcpBenchWorkspace is a workspace of 200 issues whose one gate is true.
func mcpBenchWorkspace(b testing.TB) string {
	dir, _ := benchQueue(b, 200)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("gates:\n  - name: unit\n    command: 'true'\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// mcpServerCPU runs the server in ws, makes calls calls of tool, closes
// it, and returns the CPU time of the server and of the gates it waited
// for.
func mcpServerCPU(b *testing.B, bin, ws, tool string, args map[string]any, calls int) time.Duration {
	b.Helper()
	cmd := exec.Command(bin, "--dir", ws, "mcp")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_NO_BACKGROUND=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", tool, err, res)
		}
	}
	cs.Close()
	if cmd.ProcessState == nil {
		b.Fatal("the server did not exit")
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// cliCPU runs the command line calls times and returns the CPU time of a
// call, on average.
func cliCPU(b *testing.B, bin, ws string, args []string, calls int) time.Duration {
	var total time.Duration
	for range calls {
		cmd := exec.Command(bin, append([]string{"--dir", ws}, args...)...)
		cmd.Env = append(os.Environ(), "ORCHESTRATE_NO_BACKGROUND=1")
		cmd.Stdout = &bytes.Buffer{}
		total += cpuOf(b, cmd)
	}
	return total / time.Duration(calls)
}

func BenchmarkMCPToolCPU(b *testing.B) {
	bin := orchestrateBin(b)
	ws := mcpBenchWorkspace(b)
	for _, c := range []struct {
		name string
		args map[string]any
		cli  []string
	}{
		{"status", map[string]any{}, []string{"status", "--json"}},
		{"gates", map[string]any{}, []string{"gate", "--no-record", "--json"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cli, tool := time.Hour, time.Hour
			for b.Loop() {
				// Interleaved, the fastest of each: a busy moment slows
				// both alike.
				cli = min(cli, cliCPU(b, bin, ws, c.cli, mcpCalls))
				start := mcpServerCPU(b, bin, ws, c.name, c.args, 0)
				all := mcpServerCPU(b, bin, ws, c.name, c.args, mcpCalls)
				tool = min(tool, max(all-start, 0)/mcpCalls)
			}
			ratio := float64(tool) / float64(cli)
			b.ReportMetric(float64(cli.Microseconds()), "cli-µs/call")
			b.ReportMetric(float64(tool.Microseconds()), "tool-µs/call")
			b.ReportMetric(ratio, "tool/cli")
			if ratio > 1.5 {
				b.Fatalf("a %s tool call takes %v of CPU, %.2f times the command line's %v: more than 1.5", c.name, tool, ratio, cli)
			}
		})
	}
}

// mcpIdleRSS starts the server, makes one call, lets it rest, and returns
// its resident memory.
func mcpIdleRSS(t testing.TB, bin, ws string) int {
	t.Helper()
	cmd := exec.Command(bin, "--dir", ws, "mcp")
	cmd.Env = append(os.Environ(), "ORCHESTRATE_NO_BACKGROUND=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(restAfter + 500*time.Millisecond)
	data, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", cmd.Process.Pid)
	return 0
}

// mcpIdleLimit is the most the server may hold at rest.
const mcpIdleLimit = 20 << 20

func BenchmarkMCPIdleMemory(b *testing.B) {
	bin := orchestrateBin(b)
	ws := mcpBenchWorkspace(b)
	rss := 0
	for b.Loop() {
		rss = mcpIdleRSS(b, bin, ws)
	}
	b.ReportMetric(float64(rss)/(1<<20), "idle-MB")
	if rss >= mcpIdleLimit {
		b.Fatalf("the server holds %d MB at rest: want under 20", rss>>20)
	}
}

// TestMCPIdleMemory: the server at rest, after a call on a queue of 200
// issues, holds under 20 MB.
func TestMCPIdleMemory(t *testing.T) {
	t.Parallel()
	if rss := mcpIdleRSS(t, orchestrateBin(t), mcpBenchWorkspace(t)); rss >= mcpIdleLimit {
		t.Errorf("the server holds %.1f MB at rest: want under 20", float64(rss)/(1<<20))
	}
}
