package gate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
)

// stamped returns a gate that records when it starts and ends, by its own
// clock, in dir/stamps, sleeping in between, and exits with code.
func stamped(dir, name string, sleep string, code int) config.Gate {
	cmd := fmt.Sprintf(`echo "%[1]s start $(date +%%s%%N)" >> %[2]s/stamps; sleep %[3]s; echo "%[1]s end $(date +%%s%%N)" >> %[2]s/stamps; exit %[4]d`,
		name, dir, sleep, code)
	return gateOf(name, cmd)
}

// meeting is a gate that stamps its start, then waits until n gates have
// come to the meeting in dir before it stamps its end: if they do not run
// at the same time, it fails after a minute, whatever the machine's load.
func meeting(dir, name string, n int) config.Gate {
	cmd := fmt.Sprintf(`echo "%[1]s start $(date +%%s%%N)" >> %[2]s/stamps; : > %[2]s/here.%[1]s; i=0; `+
		`while [ "$(ls %[2]s | grep -c '^here\.')" -lt %[3]d ]; do i=$((i+1)); [ $i -gt 6000 ] && exit 3; sleep 0.01; done; `+
		`echo "%[1]s end $(date +%%s%%N)" >> %[2]s/stamps`, name, dir, n)
	return gateOf(name, cmd)
}

type span struct{ start, end int64 }

func readStamps(t *testing.T, dir string) map[string]span {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "stamps"))
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]span{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("stamps: bad line %q", line)
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("stamps: %v (is date +%%N supported?)", err)
		}
		s := spans[f[0]]
		if f[1] == "start" {
			s.start = ns
		} else {
			s.end = ns
		}
		spans[f[0]] = s
	}
	return spans
}

func names(ev *Evaluation) []string {
	var out []string
	for _, r := range ev.Results {
		out = append(out, r.Name()+":"+string(r.Outcome))
	}
	return out
}

func TestSerialThenParallel(t *testing.T) {
	dir := t.TempDir()
	serial := func(g config.Gate) config.Gate { g.Serial = true; return g }
	// The parallel gates meet: they pass only if all three run at once.
	gates := []config.Gate{
		meeting(dir, "p1", 3),
		serial(stamped(dir, "s1", "0.1", 0)),
		meeting(dir, "p2", 3),
		serial(stamped(dir, "s2", "0.1", 0)),
		meeting(dir, "p3", 3),
	}
	var inProgress, overlapped atomic.Int32
	var events []string
	opts := Options{Parallelism: 3, Progress: func(e Event) {
		if inProgress.Add(1) > 1 {
			overlapped.Store(1)
		}
		defer inProgress.Add(-1)
		events = append(events, fmt.Sprintf("%d:%s", e.Kind, e.Gate))
	}}
	ev, err := Evaluate(context.Background(), gates, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p1:pass", "s1:pass", "p2:pass", "s2:pass", "p3:pass"}; !reflect.DeepEqual(names(ev), want) {
		t.Errorf("results = %v; want %v (config order)", names(ev), want)
	}
	if !ev.Passed {
		t.Errorf("Passed = false")
	}
	s := readStamps(t, dir)
	if !(s["s1"].end <= s["s2"].start) {
		t.Errorf("s2 started before s1 ended: %v", s)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		if s[p].start < s["s2"].end {
			t.Errorf("%s started before the serial gates were done: %v", p, s)
		}
	}
	if latestStart := max(s["p1"].start, s["p2"].start, s["p3"].start); latestStart >= min(s["p1"].end, s["p2"].end, s["p3"].end) {
		t.Errorf("parallel gates did not overlap: %v", s)
	}
	if overlapped.Load() != 0 {
		t.Errorf("Progress calls overlapped")
	}
	if len(events) != 10 || events[0] != "0:s1" || events[1] != "1:s1" || events[2] != "0:s2" {
		t.Errorf("events = %v; want start and finish of each, serial first", events)
	}
}

func TestParallelismBound(t *testing.T) {
	dir := t.TempDir()
	var gates []config.Gate
	for i := range 4 {
		gates = append(gates, stamped(dir, fmt.Sprint("p", i), "0.2", 0))
	}
	if _, err := Evaluate(context.Background(), gates, Options{Parallelism: 2}); err != nil {
		t.Fatal(err)
	}
	s := readStamps(t, dir)
	for a, sa := range s {
		running := 0
		for _, sb := range s {
			if sb.start <= sa.start && sa.start < sb.end {
				running++
			}
		}
		if running > 2 {
			t.Errorf("%d gates running when %s started; want at most 2: %v", running, a, s)
		}
	}
}

func TestFailFast(t *testing.T) {
	dir := t.TempDir()
	ff := stamped(dir, "tests", "0", 1)
	ff.Serial, ff.FailFast = true, true
	s2 := stamped(dir, "s2", "0", 0)
	s2.Serial = true
	gates := []config.Gate{ff, s2, stamped(dir, "p1", "0", 0)}
	ev, err := Evaluate(context.Background(), gates, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"tests:fail", "s2:skipped", "p1:skipped"}; !reflect.DeepEqual(names(ev), want) {
		t.Errorf("results = %v; want %v", names(ev), want)
	}
	if ev.Passed {
		t.Errorf("Passed = true")
	}
	if got := ev.Results[1].Err; got != `skipped: fail_fast gate "tests" did not pass` {
		t.Errorf("skipped reason = %q", got)
	}
	if _, ran := readStamps(t, dir)["s2"]; ran {
		t.Errorf("a skipped gate ran")
	}

	// In the parallel phase, a fail_fast failure stops the gates not yet started.
	dir = t.TempDir()
	p1 := stamped(dir, "p1", "0", 1)
	p1.FailFast = true
	ev, _ = Evaluate(context.Background(), []config.Gate{p1, stamped(dir, "p2", "0", 0)}, Options{Parallelism: 1})
	if want := []string{"p1:fail", "p2:skipped"}; !reflect.DeepEqual(names(ev), want) {
		t.Errorf("results = %v; want %v", names(ev), want)
	}

	// A fail_fast gate that passes stops nothing.
	dir = t.TempDir()
	ok := stamped(dir, "ok", "0", 0)
	ok.Serial, ok.FailFast = true, true
	ev, _ = Evaluate(context.Background(), []config.Gate{ok, stamped(dir, "p", "0", 0)}, Options{})
	if want := []string{"ok:pass", "p:pass"}; !reflect.DeepEqual(names(ev), want) {
		t.Errorf("results = %v; want %v", names(ev), want)
	}
}

func TestEnforcementModes(t *testing.T) {
	with := func(g config.Gate, e config.Enforcement) config.Gate { g.Enforcement = e; return g }
	for _, tt := range []struct {
		name     string
		gates    []config.Gate
		passed   bool
		warnings []string
		failures []string
	}{
		{"blocking failure fails", []config.Gate{gateOf("b", "exit 1")}, false, nil, []string{"b"}},
		{"blocking timeout fails", []config.Gate{func() config.Gate {
			g := gateOf("b", "sleep 5")
			g.Timeout = 100 * time.Millisecond
			return g
		}()}, false, nil, []string{"b"}},
		{"unset enforcement blocks", []config.Gate{with(gateOf("b", "exit 1"), "")}, false, nil, []string{"b"}},
		{"advisory failure warns", []config.Gate{gateOf("b", "true"), with(gateOf("a", "exit 2"), config.Advisory)},
			true, []string{`advisory gate "a" failed: exit code 2`}, nil},
		{"informational failure is only recorded", []config.Gate{with(gateOf("i", "exit 2"), config.Informational)}, true, nil, nil},
		{"all three", []config.Gate{
			with(gateOf("b", "exit 1"), config.Blocking),
			with(gateOf("a", "exit 127"), config.Advisory),
			with(gateOf("i", "exit 1"), config.Informational),
		}, false, []string{`advisory gate "a" failed: command not found (exit 127)`}, []string{"b"}},
		{"no gates pass", nil, true, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Evaluate(context.Background(), tt.gates, Options{KillGrace: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var failures []string
			for _, r := range ev.Failures() {
				failures = append(failures, r.Name())
			}
			if ev.Passed != tt.passed || !reflect.DeepEqual(ev.Warnings, tt.warnings) || !reflect.DeepEqual(failures, tt.failures) {
				t.Errorf("Evaluate = passed %v, warnings %q, failures %q; want %v, %q, %q",
					ev.Passed, ev.Warnings, failures, tt.passed, tt.warnings, tt.failures)
			}
			// Whatever the mode, every result is recorded.
			if len(ev.Results) != len(tt.gates) {
				t.Errorf("%d results for %d gates", len(ev.Results), len(tt.gates))
			}
		})
	}
}

func TestEvaluateLogs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "r1")
	gates := []config.Gate{gateOf("Run tests", "echo a"), gateOf("run/tests", "echo b"), gateOf("RUN TESTS", "echo c")}
	ev, err := Evaluate(context.Background(), gates, Options{LogDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range ev.Results {
		data, err := os.ReadFile(r.LogPath)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, filepath.Base(r.LogPath)+"="+string(data))
	}
	want := []string{"Run-tests.log=a\n", "run-tests-2.log=b\n", "RUN-TESTS-3.log=c\n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logs = %q; want %q", got, want)
	}
}

func TestLogNames(t *testing.T) {
	gates := []config.Gate{{Name: "a b"}, {Name: "a-b"}, {Name: "../../etc/passwd"}, {Name: "∑"}, {Name: "."}, {Name: "x.y_z"}}
	got := LogNames(gates)
	want := []string{"a-b.log", "a-b-2.log", "etc-passwd.log", "gate.log", "gate-2.log", "x.y_z.log"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LogNames = %q; want %q", got, want)
	}
}

func TestEvaluateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	s1 := gateOf("s1", "sleep 300")
	s1.Serial = true
	ev, err := Evaluate(ctx, []config.Gate{s1, gateOf("p", "true")}, Options{KillGrace: 100 * time.Millisecond})
	if err == nil {
		t.Errorf("Evaluate(canceled): no error")
	}
	got := names(ev)
	sort.Strings(got)
	if want := []string{"p:skipped", "s1:error"}; !reflect.DeepEqual(got, want) || ev.Passed {
		t.Errorf("Evaluate(canceled) = %v, passed %v; want %v, not passed", got, ev.Passed, want)
	}
}
