// Package gate runs quality gates the way a careful CI does: each command in
// its own process group with a timeout that kills the whole group, its output
// captured in bounded memory and logged in full, serial gates before parallel
// ones, and each failure judged by the gate's enforcement mode. A review gate
// runs reviewers on the diff and judges their findings (P0 to P3, read by
// package findings); a human gate reports the approval its caller keeps.
//
// It knows nothing of the issue queue: it runs commands and reports.
//
// Its API is Run and Evaluate with their Options, Result and Evaluation,
// the Outcome values, Diff, and the writers of the artifacts and CI formats
// (WriteArtifacts with its Report; JUnit, SARIF, Annotations). The rest of
// its exported names (prompts, environment names, feedback data) serve the
// orchestrate command and may change with it; the module is at v0.
package gate

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/results"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// Outcome is how a gate's run ended.
type Outcome string

const (
	Pass     Outcome = "pass"    // exit status 0
	Fail     Outcome = "fail"    // any other exit status, or killed by a signal it did not get from us
	TimedOut Outcome = "timeout" // killed at its timeout
	Errored  Outcome = "error"   // could not start, exit 126 or 127 (not executable, not found), or canceled
	Skipped  Outcome = "skipped" // not run: a fail_fast gate failed before it, or the evaluation was canceled

	// AwaitingApproval: a human gate waits for a person. It has not failed,
	// and the evaluation has not passed.
	AwaitingApproval Outcome = "awaiting_approval"
)

// DefaultKillGrace is how long a gate's process group has between SIGTERM and SIGKILL.
const DefaultKillGrace = 2 * time.Second

// Options says how gates are run. The zero value runs in the current
// directory with the default output bounds, no log files, and as many
// parallel gates as CPUs.
type Options struct {
	RepoRoot    string        // working_dir is relative to it; "" is the current directory
	Roots       []string      // other checkouts of the code (linked worktrees), masked in signatures as RepoRoot is
	LogDir      string        // each gate's whole output goes to LogDir/<name>.log; "" for none
	LogLoop     int           // from 2, the logs are <name>.loop<N>.log: each loop of a run keeps its own
	Output      config.Output // head and tail kept in memory; the zero Output means the defaults
	Parallelism int           // gates run at once in the parallel phase; 0 = runtime.NumCPU()
	Env         []string      // environment the gates' env is laid over; nil = os.Environ()
	KillGrace   time.Duration // SIGTERM to SIGKILL; 0 = DefaultKillGrace

	// Progress, if set, is told when each gate starts, finishes or is
	// skipped. Calls never overlap. See Renderer.
	Progress func(Event)

	// Human, if set, says where a human gate's approval stands; it is called
	// once per human gate, after the other gates ran. Without it a human
	// gate is an error: there is no one to ask.
	Human func(config.Gate) Approval

	// DiffExclude lists paths, relative to RepoRoot, that the diff a review
	// gate reviews leaves out: the workspace directory.
	DiffExclude []string

	// Started, if set, is told the process group ID of each command as it
	// starts (a gate's, an agent's), so that a caller can record it.
	Started func(pgid int)

	// Watch, if set, is written the command's output as it comes, stdout
	// and stderr as interleaved (an agent's, for a caller that stops it
	// when it says it is stuck).
	Watch io.Writer

	// Now is the clock for timestamps and durations; nil = time.Now. Tests
	// inject one to make reports reproducible.
	Now func() time.Time
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) output() config.Output {
	def := config.DefaultOutput()
	if o.Output == (config.Output{}) {
		return def
	}
	out := o.Output
	if out.FeedbackLines <= 0 {
		out.FeedbackLines = def.FeedbackLines
	}
	if out.FeedbackBytes <= 0 {
		out.FeedbackBytes = def.FeedbackBytes
	}
	return out
}

func (o *Options) parallelism() int {
	if o.Parallelism > 0 {
		return o.Parallelism
	}
	return runtime.NumCPU()
}

func (o *Options) killGrace() time.Duration {
	if o.KillGrace > 0 {
		return o.KillGrace
	}
	return DefaultKillGrace
}

// Result is the report of one gate.
type Result struct {
	Gate        config.Gate
	Outcome     Outcome
	ExitCode    int    // -1 when the command did not exit by itself (signal, timeout, not started)
	Signal      string // the signal that killed it, if one did
	Err         string // why it is not a plain pass or fail: "timed out after 5m0s", "command not found (exit 127)"
	Started     time.Time
	Duration    time.Duration
	Output      string // stdout and stderr interleaved: head and tail, the middle replaced by a marker
	OutputBytes int64  // all the bytes the gate wrote
	Omitted     int64  // bytes of Output's middle that were dropped
	// Digest is the normalization of the whole output, for its signature;
	// nil when the gate ran no command.
	Digest *signature.Digest
	// Marks are the failure lines of the whole output (failing tests'
	// names and messages), wherever they were: see Excerpt.
	Marks   []string
	LogPath string // the whole output; "" when not logged

	// Tests are the gate's test-level results, read from its report file
	// (report:) or its whole output; nil for a gate that ran no command
	// of its own (review and human gates: they stay whole).
	Tests *results.Report

	Review   *Review   // a review gate's findings and reviewers; nil for other gates
	Approval *Approval // a human gate's approval as it stood; nil for other gates
}

// Name returns the gate's name.
func (r *Result) Name() string { return r.Gate.Name }

// Passed reports whether the gate ran and passed.
func (r *Result) Passed() bool { return r.Outcome == Pass }

// Failed reports whether the gate ran (or tried to) and did not pass; a
// skipped gate has not failed.
func (r *Result) Failed() bool {
	return r.Outcome == Fail || r.Outcome == TimedOut || r.Outcome == Errored
}

// Enforcement returns the gate's enforcement mode; unset means blocking.
func (r *Result) Enforcement() config.Enforcement { return enforcement(r.Gate) }

func enforcement(g config.Gate) config.Enforcement {
	if g.Enforcement == "" {
		return config.Blocking
	}
	return g.Enforcement
}

// Reason says in a few words why the gate did not pass: "exit code 1",
// "timed out after 5m0s", "command not found (exit 127)".
func (r *Result) Reason() string {
	switch {
	case r.Err != "":
		return r.Err
	case r.Outcome == Fail && r.Signal != "":
		return "killed by signal " + r.Signal
	case r.Outcome == Fail:
		return fmt.Sprintf("exit code %d", r.ExitCode)
	}
	return string(r.Outcome)
}

// Evaluation is the report of one run of all the gates.
type Evaluation struct {
	Passed   bool     // every blocking gate passed
	Results  []Result // one per gate, in config order
	Warnings []string // advisory failures, and logs that could not be written
	Started  time.Time
	Duration time.Duration
}

// Failures returns the results of the blocking gates that failed, in config
// order: what the agent must fix.
func (e *Evaluation) Failures() []Result {
	return e.filter(func(r *Result) bool { return r.Enforcement() == config.Blocking && r.Failed() })
}

// Skipped returns the results of the gates that were not run.
func (e *Evaluation) Skipped() []Result {
	return e.filter(func(r *Result) bool { return r.Outcome == Skipped })
}

// AwaitingApproval returns the results of the human gates that wait for a
// person's approval.
func (e *Evaluation) AwaitingApproval() []Result {
	return e.filter(func(r *Result) bool { return r.Outcome == AwaitingApproval })
}

// AdvisoryFailures returns the results of the advisory gates that failed.
func (e *Evaluation) AdvisoryFailures() []Result {
	return e.filter(func(r *Result) bool { return r.Enforcement() == config.Advisory && r.Failed() })
}

func (e *Evaluation) filter(keep func(*Result) bool) []Result {
	var out []Result
	for i := range e.Results {
		if keep(&e.Results[i]) {
			out = append(out, e.Results[i])
		}
	}
	return out
}

// Evaluate runs the gates: the serial ones first, one at a time in config
// order, then the others concurrently, at most opts.Parallelism at once,
// and the human gates last, in config order. When a blocking fail_fast gate
// does not pass, the gates not yet started are skipped; in the parallel
// phase the gates already running finish. A blocking serial gate is a
// prerequisite of the parallel ones (seed 003: the cheap checks first):
// when one fails, the later serial gates still run, the parallel ones are
// skipped, unless it says prerequisite: false. A human gate reports the
// approval opts.Human gives: approved passes, rejected fails with the
// person's comment as its output; while no one decided, it awaits approval
// once every other blocking gate passed, and is skipped until then, since a
// person is asked only about a change that passes its checks. Results come
// in config order.
//
// The error is non-nil only when the log directory cannot be made, or when
// ctx is canceled: the Evaluation then holds what ran, the rest skipped.
func Evaluate(ctx context.Context, gates []config.Gate, opts Options) (*Evaluation, error) {
	logs, err := logPaths(gates, &opts)
	if err != nil {
		return nil, err
	}
	e := &evaluator{opts: &opts, results: make([]Result, len(gates))}
	ev := &Evaluation{Started: opts.now()}
	e.runSerial(ctx, gates, logs)
	e.runParallel(ctx, gates, logs)
	e.runHuman(ctx, gates)
	ev.Results = e.results
	ev.Passed = true
	for i := range ev.Results {
		r := &ev.Results[i]
		if r.Enforcement() == config.Blocking && !r.Passed() {
			ev.Passed = false
		}
		if r.Enforcement() == config.Advisory && r.Failed() {
			ev.Warnings = append(ev.Warnings, fmt.Sprintf("advisory gate %q failed: %s", r.Name(), r.Reason()))
		}
	}
	ev.Warnings = append(ev.Warnings, e.warnings...)
	ev.Duration = opts.now().Sub(ev.Started)
	return ev, ctx.Err()
}

// logPaths makes the log directory and returns each gate's log file; none
// without a log directory.
func logPaths(gates []config.Gate, opts *Options) ([]string, error) {
	logs := make([]string, len(gates))
	if opts.LogDir == "" {
		return logs, nil
	}
	if err := makeDir(opts.LogDir); err != nil {
		return nil, fmt.Errorf("making gate log directory: %w", err)
	}
	for i, name := range LogNames(gates) {
		if opts.LogLoop > 1 {
			name = strings.TrimSuffix(name, ".log") + fmt.Sprintf(".loop%d.log", opts.LogLoop)
		}
		logs[i] = filepath.Join(opts.LogDir, name)
	}
	return logs, nil
}

// runSerial runs the serial gates one at a time, in config order.
func (e *evaluator) runSerial(ctx context.Context, gates []config.Gate, logs []string) {
	for i, g := range gates {
		if !g.Serial || g.IsHuman() {
			continue
		}
		if reason := e.skipReason(ctx); reason != "" {
			e.skip(i, g, reason)
			continue
		}
		r := e.run(ctx, i, g, logs[i])
		if stopsEvaluation(r) {
			e.stop(g.Name)
		}
		if e.unmetBy == "" && !g.NotPrerequisite && r.Enforcement() == config.Blocking && r.Failed() {
			e.unmetBy = g.Name
		}
	}
}

// runParallel runs the other gates but the human ones concurrently, at
// most opts.Parallelism at once.
func (e *evaluator) runParallel(ctx context.Context, gates []config.Gate, logs []string) {
	sem := make(chan struct{}, e.opts.parallelism())
	var wg sync.WaitGroup
	for i, g := range gates {
		if g.Serial || g.IsHuman() {
			continue
		}
		sem <- struct{}{} // wait for a slot before deciding, so a failure in the meantime counts
		reason := e.skipReason(ctx)
		if reason == "" && e.unmetBy != "" {
			reason = fmt.Sprintf("skipped: serial gate %q, a prerequisite, did not pass", e.unmetBy)
		}
		if reason != "" {
			<-sem
			e.skip(i, g, reason)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if r := e.run(ctx, i, g, logs[i]); stopsEvaluation(r) {
				e.stop(g.Name)
			}
		}()
	}
	wg.Wait()
}

// runHuman decides the human gates last, in config order: one awaits
// approval only when every other blocking gate passed.
func (e *evaluator) runHuman(ctx context.Context, gates []config.Gate) {
	othersPassed := true
	for i, g := range gates {
		if !g.IsHuman() && enforcement(g) == config.Blocking && !e.results[i].Passed() {
			othersPassed = false
		}
	}
	for i, g := range gates {
		if !g.IsHuman() {
			continue
		}
		if reason := e.skipReason(ctx); reason != "" {
			e.skip(i, g, reason)
			continue
		}
		e.emit(Event{Kind: GateStarted, Index: i, Gate: g.Name, Time: e.opts.now()})
		e.results[i] = Result{Gate: g, ExitCode: -1, Started: e.opts.now()}
		decideHuman(&e.results[i], e.opts, othersPassed)
		e.emit(Event{Kind: GateFinished, Index: i, Gate: g.Name, Time: e.opts.now(), Result: &e.results[i]})
	}
}

func stopsEvaluation(r Result) bool {
	return r.Gate.FailFast && r.Enforcement() == config.Blocking && !r.Passed()
}

type evaluator struct {
	opts     *Options
	mu       sync.Mutex // guards warnings and serializes Progress
	results  []Result   // each index written by one goroutine
	warnings []string

	// A blocking fail_fast failure stops the evaluation; stoppedBy says
	// which.
	stopMu    sync.Mutex // guards stoppedBy
	stoppedBy string
	// A blocking serial gate that fails skips the parallel gates; unmetBy
	// says which. Written by the serial phase only, before the others.
	unmetBy string
}

// stop records that the gate name stops the evaluation, unless one did
// already.
func (e *evaluator) stop(name string) {
	e.stopMu.Lock()
	defer e.stopMu.Unlock()
	if e.stoppedBy == "" {
		e.stoppedBy = name
	}
}

// skipReason says why a gate not yet started is skipped, or "".
func (e *evaluator) skipReason(ctx context.Context) string {
	e.stopMu.Lock()
	stoppedBy := e.stoppedBy
	e.stopMu.Unlock()
	switch {
	case ctx.Err() != nil:
		return "skipped: " + ctx.Err().Error()
	case stoppedBy != "":
		return fmt.Sprintf("skipped: fail_fast gate %q did not pass", stoppedBy)
	}
	return ""
}

func (e *evaluator) skip(i int, g config.Gate, reason string) {
	e.results[i] = Result{Gate: g, Outcome: Skipped, ExitCode: -1, Err: reason, Started: e.opts.now()}
	e.emit(Event{Kind: GateSkipped, Index: i, Gate: g.Name, Time: e.results[i].Started, Result: &e.results[i]})
}

func (e *evaluator) run(ctx context.Context, i int, g config.Gate, logPath string) Result {
	e.emit(Event{Kind: GateStarted, Index: i, Gate: g.Name, Time: e.opts.now()})
	r, logErr := run(ctx, g, e.opts, logPath)
	e.results[i] = r
	if logErr != nil {
		e.mu.Lock()
		e.warnings = append(e.warnings, fmt.Sprintf("gate %q: writing its log: %v", g.Name, logErr))
		e.mu.Unlock()
	}
	e.emit(Event{Kind: GateFinished, Index: i, Gate: g.Name, Time: r.Started.Add(r.Duration), Result: &e.results[i]})
	return r
}

func (e *evaluator) emit(ev Event) {
	if e.opts.Progress == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opts.Progress(ev)
}

// Run runs one gate on its own and returns its result. A log file that
// cannot be written is not an error of the gate; it is returned apart.
func Run(ctx context.Context, g config.Gate, opts Options, logPath string) (Result, error) {
	return run(ctx, g, &opts, logPath)
}

// LogNames returns the log file name of each gate: its name made safe for
// any file system ("Run tests" → "Run-tests.log"), with a suffix where two
// names would otherwise collide, case aside.
func LogNames(gates []config.Gate) []string {
	names := make([]string, len(gates))
	used := map[string]bool{}
	for i, g := range gates {
		base := safeName(g.Name)
		name := base
		for n := 2; used[strings.ToLower(name)]; n++ {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		used[strings.ToLower(name)] = true
		names[i] = name + ".log"
	}
	return names
}

func safeName(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
		switch {
		case ok:
			b.WriteRune(c)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	s := strings.Trim(b.String(), "-.")
	if s == "" {
		return "gate"
	}
	return s
}

// sortedEnv lays env over base in a stable order; the last value of a name wins in exec.
func sortedEnv(base []string, env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := append([]string(nil), base...)
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}
