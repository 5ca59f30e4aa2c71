package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
)

func gateOf(name, command string) config.Gate {
	return config.Gate{Name: name, Command: command, Timeout: 30 * time.Second, Enforcement: config.Blocking}
}

func runOne(t *testing.T, g config.Gate, opts Options) Result {
	t.Helper()
	r, err := Run(context.Background(), g, opts, "")
	if err != nil {
		t.Fatalf("Run(%q): log error %v", g.Command, err)
	}
	return r
}

func TestOutcomes(t *testing.T) {
	for _, tt := range []struct {
		command string
		outcome Outcome
		code    int
		reason  string
		output  string
	}{
		{"echo hello", Pass, 0, "pass", "hello\n"},
		{"echo out; echo err >&2; exit 3", Fail, 3, "exit code 3", "out\nerr\n"},
		{"nosuchcommand-orchestrate-test", Errored, 127, "command not found (exit 127)", ""},
		{"exit 126", Errored, 126, "command not executable (exit 126)", ""},
		{"kill -SEGV $$", Fail, -1, "killed by signal SIGSEGV", ""},
	} {
		r := runOne(t, gateOf("g", tt.command), Options{})
		if r.Outcome != tt.outcome || r.ExitCode != tt.code || r.Reason() != tt.reason {
			t.Errorf("Run(%q) = %s, exit %d, %q; want %s, exit %d, %q",
				tt.command, r.Outcome, r.ExitCode, r.Reason(), tt.outcome, tt.code, tt.reason)
		}
		if tt.output != "" && r.Output != tt.output {
			t.Errorf("Run(%q).Output = %q; want %q", tt.command, r.Output, tt.output)
		}
		if r.Duration <= 0 || r.Started.IsZero() {
			t.Errorf("Run(%q): Started %v, Duration %v", tt.command, r.Started, r.Duration)
		}
	}
}

func TestInterleavedOutput(t *testing.T) {
	r := runOne(t, gateOf("g", "for i in 1 2 3; do echo out$i; echo err$i >&2; done"), Options{})
	if want := "out1\nerr1\nout2\nerr2\nout3\nerr3\n"; r.Output != want {
		t.Errorf("Output = %q; want %q (stdout and stderr in the order written)", r.Output, want)
	}
}

func TestEnvAndWorkingDir(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "sub", "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := gateOf("g", `echo "$FOO $BAR $KEEP"; pwd -P`)
	g.WorkingDir = "sub/dir"
	g.Env = map[string]string{"FOO": "from gate", "BAR": "override"}
	opts := Options{RepoRoot: root, Env: []string{"PATH=" + os.Getenv("PATH"), "BAR=base", "KEEP=kept"}}
	r := runOne(t, g, opts)
	realRoot, _ := filepath.EvalSymlinks(root)
	want := "from gate override kept\n" + filepath.Join(realRoot, "sub", "dir") + "\n"
	if r.Outcome != Pass || r.Output != want {
		t.Errorf("Run = %s %q; want pass %q", r.Outcome, r.Output, want)
	}

	g.WorkingDir = "missing"
	r = runOne(t, g, opts)
	if r.Outcome != Errored || !strings.Contains(r.Err, `working_dir "missing"`) {
		t.Errorf("Run(missing working_dir) = %s %q; want error naming it", r.Outcome, r.Err)
	}
}

// alive reports whether pid is still running. A killed orphan stays a
// zombie until its new parent (init, or a subreaper) reaps it, which can take
// a while in a container; a zombie runs nothing, so it does not count.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false // gone between the two looks
	}
	// pid (comm) S ...: the state follows the last ')'.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

func waitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d still alive", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func readPIDs(t *testing.T, name string) []int {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("reading pid file: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file: %v", err)
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		command string
	}{
		// The shell waits on sleep, its background child holds the output pipe.
		{"plain", `sleep 300 & echo $! > pids; echo $$ >> pids; sleep 300`},
		// Everyone ignores SIGTERM: only SIGKILL after the grace works.
		{"ignoring SIGTERM", `trap "" TERM; sleep 300 & echo $! > pids; echo $$ >> pids; sleep 300`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			g := gateOf("slow", tt.command)
			// Long enough for a loaded machine's shell to write its PIDs
			// before the timeout ends it.
			g.Timeout = 5 * time.Second
			start := time.Now()
			r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 300 * time.Millisecond})
			took := time.Since(start)
			if r.Outcome != TimedOut || r.Err != "timed out after 5s" {
				t.Errorf("Run = %s %q; want timeout", r.Outcome, r.Err)
			}
			// Not the 300 s of the sleeps left behind: a bound no load reaches.
			if took > time.Minute {
				t.Errorf("Run took %v; want about timeout + grace", took)
			}
			waitGone(t, readPIDs(t, filepath.Join(dir, "pids"))...)
		})
	}
}

func TestLeftoversOfAPassingGateAreKilled(t *testing.T) {
	dir := t.TempDir()
	// The background sleep keeps the output pipe open; the gate must not
	// wait 300 s for it.
	g := gateOf("bg", `sleep 300 & echo $! > pids; echo done`)
	start := time.Now()
	r := runOne(t, g, Options{RepoRoot: dir, KillGrace: 300 * time.Millisecond})
	if r.Outcome != Pass || r.Output != "done\n" {
		t.Errorf("Run = %s %q; want pass", r.Outcome, r.Output)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("Run took %v; it waited for the sleep it left behind", took)
	}
	waitGone(t, readPIDs(t, filepath.Join(dir, "pids"))...)
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	g := gateOf("slow", "sleep 300")
	r, _ := Run(ctx, g, Options{KillGrace: 200 * time.Millisecond}, "")
	if r.Outcome != Errored || !strings.HasPrefix(r.Err, "canceled") {
		t.Errorf("Run(canceled) = %s %q; want error, canceled", r.Outcome, r.Err)
	}
}

func TestLogFile(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "g.log")
	r, err := Run(context.Background(), gateOf("g", "echo one; echo two >&2"), Options{}, log)
	if err != nil || r.LogPath != log {
		t.Fatalf("Run: %v, LogPath %q", err, r.LogPath)
	}
	if data, _ := os.ReadFile(log); string(data) != "one\ntwo\n" {
		t.Errorf("log = %q", data)
	}
	_, err = Run(context.Background(), gateOf("g", "echo one"), Options{}, filepath.Join(dir, "no", "such", "dir", "g.log"))
	if err == nil {
		t.Errorf("Run with an unwritable log: no error")
	}
}

// TestHugeOutput runs a gate that writes 200 MB: the memory it takes stays
// bounded, the head and the tail are kept, in memory and in the log.
func TestHugeOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MB")
	}
	const size = 200_000_000
	dir := t.TempDir()
	log := filepath.Join(dir, "big.log")
	g := gateOf("big", `printf 'FIRST\n'; head -c `+strconv.Itoa(size-12)+` /dev/zero | tr '\0' x; printf '\nLAST\n'`)
	// The memory is under test, not the speed: 200 MB through a pipe took
	// over 30 s on a loaded 2-core machine. A gate's default timeout.
	g.Timeout = config.DefaultGateTimeout

	peak, stop := sampleHeap()
	r, err := Run(context.Background(), g, Options{}, log)
	used := stop()
	if err != nil || r.Outcome != Pass {
		t.Fatalf("Run = %s, %v", r.Outcome, err)
	}
	t.Logf("heap in use grew by at most %.1f MB (peak %.1f MB)", float64(used)/1e6, float64(peak())/1e6)
	if used > 50<<20 {
		t.Errorf("heap grew by %d bytes; want well under 50 MB", used)
	}
	if r.OutputBytes != size {
		t.Errorf("OutputBytes = %d; want %d", r.OutputBytes, size)
	}
	if !strings.HasPrefix(r.Output, "FIRST\nxxx") || !strings.HasSuffix(r.Output, "xxx\nLAST\n") {
		t.Errorf("Output = %.40q … %q; want head and tail", r.Output, r.Output[max(0, len(r.Output)-40):])
	}
	if !strings.Contains(r.Output, " bytes omitted …\n") || len(r.Output) > 2*config.DefaultHeadBytes+100 {
		t.Errorf("Output has %d bytes and no omission marker", len(r.Output))
	}
	if r.Omitted < size-2*config.DefaultHeadBytes {
		t.Errorf("Omitted = %d", r.Omitted)
	}
	// The log on disk is capped too: its head, a marker, its tail.
	data, err := os.ReadFile(log)
	if want := config.DefaultLogHeadBytes + config.DefaultLogTailBytes; err != nil || len(data) < want || len(data) > want+300 {
		t.Errorf("log: %v, %d bytes; want %d and a marker", err, len(data), want)
	}
	if !bytes.HasPrefix(data, []byte("FIRST\nxxx")) || !bytes.HasSuffix(data, []byte("xxx\nLAST\n")) || !bytes.Contains(data, []byte(" bytes of output left out of this log")) {
		t.Errorf("log = %.40q … %q; want head, marker and tail", data, data[max(0, len(data)-40):])
	}
}

// sampleHeap samples HeapInuse until stop is called, which returns how much
// it grew over the starting point at its peak.
func sampleHeap() (peak func() uint64, stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var top atomic.Uint64
	top.Store(base)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > top.Load() {
				top.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return top.Load, func() uint64 {
		close(done)
		<-finished
		return top.Load() - base
	}
}

// TestJudge: the outcome of each way a command can end, at the boundaries
// of the exit codes that mean "not a test failure".
func TestJudge(t *testing.T) {
	canceled := context.Canceled
	for _, tt := range []struct {
		name     string
		end      procEnd
		canceled error
		msg      string
		want     verdict
	}{
		{"exit 0", procEnd{exited: true, code: 0}, nil, "", verdict{Pass, "", 0, ""}},
		{"exit 1", procEnd{exited: true, code: 1}, nil, "", verdict{Fail, "", 1, ""}},
		{"exit 125", procEnd{exited: true, code: 125}, nil, "", verdict{Fail, "", 125, ""}},
		{"exit 126", procEnd{exited: true, code: 126}, nil, "", verdict{Errored, "command not executable (exit 126)", 126, ""}},
		{"exit 127", procEnd{exited: true, code: 127}, nil, "", verdict{Errored, "command not found (exit 127)", 127, ""}},
		{"exit 128", procEnd{exited: true, code: 128}, nil, "", verdict{Fail, "", 128, ""}},
		{"exit 2 after the caller canceled, not terminated", procEnd{exited: true, code: 2}, canceled, "", verdict{Fail, "", 2, ""}},
		{"killed by SIGSEGV", procEnd{signal: syscall.SIGSEGV}, nil, "", verdict{Fail, "", -1, "SIGSEGV"}},
		{"killed by signal 64", procEnd{signal: syscall.Signal(64)}, nil, "", verdict{Fail, "", -1, syscall.Signal(64).String()}},
		{"neither exited nor signaled", procEnd{}, nil, "", verdict{Fail, "", -1, ""}},
		{"timed out", procEnd{terminated: true, signal: syscall.SIGTERM}, nil, "", verdict{TimedOut, "timed out after 1.5s", -1, ""}},
		{"timed out, own message", procEnd{terminated: true, exited: true, code: 0}, nil, "timed out after 3s getting the diff", verdict{TimedOut, "timed out after 3s getting the diff", -1, ""}},
		{"canceled", procEnd{terminated: true, signal: syscall.SIGTERM}, canceled, "", verdict{Errored, "canceled: context canceled", -1, ""}},
		{"no process state", procEnd{noState: true, waitErr: errors.New("wait: no child")}, nil, "", verdict{Errored, "waiting for it: wait: no child", -1, ""}},
	} {
		if got := judge(tt.end, tt.canceled, 1500*time.Millisecond, tt.msg); got != tt.want {
			t.Errorf("%s: judge(%+v) = %+v; want %+v", tt.name, tt.end, got, tt.want)
		}
	}
}

// TestShellFromPath: a command runs in the sh that PATH gives, named sh
// ($0), and where PATH changes (another sh first on it), in that one: the
// look up of sh is kept from one gate to the next only for the PATH it
// was made on.
func TestShellFromPath(t *testing.T) {
	g := gateOf("g", `echo "$0"`)
	if r := runOne(t, g, Options{}); r.Outcome != Pass || r.Output != "sh\n" {
		t.Fatalf("Run = %s, output %q; want pass, %q", r.Outcome, r.Output, "sh\n")
	}
	real, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH:", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sh"), []byte("#!"+real+"\necho other sh\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r := runOne(t, g, Options{}); r.Outcome != Pass || !strings.HasPrefix(r.Output, "other sh\n") {
		t.Errorf("with another sh first on PATH: Run = %s, output %q; want it run by that sh", r.Outcome, r.Output)
	}
}
