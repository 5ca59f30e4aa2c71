package loop

import (
	"context"
	"fmt"
	"github.com/orchestrate-dev/orchestrate/worktree"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
	"github.com/orchestrate-dev/orchestrate/signature"
)

// Fields this tool adds to the seed's, to say why an issue needs a person.
const (
	FieldHaltReason       = "Halt-Reason"
	FieldRecentSignatures = "Recent-Signatures"
	FieldGate             = "Gate"
)

// Why an issue stopped being retried.
const (
	ReasonIdentical    = "identical"    // the same signature N times in a row
	ReasonOscillation  = "oscillation"  // the same signature N times in the last 5 attempts
	ReasonNonRetryable = "nonretryable" // exit 126/127
	ReasonExhausted    = "exhausted"    // Retry-Count reached Max-Retries
)

// recentWindow is how many attempts the oscillation rule looks back on,
// shortSig how much of a signature Recent-Signatures and
// Previous-Signatures keep of each, and maxPrevious how many signatures
// Previous-Signatures keeps, the last ones.
const (
	recentWindow = 5
	shortSig     = 12
	maxPrevious  = 10
)

// previous is Previous-Signatures with sig added: the last maxPrevious,
// each cut to shortSig characters, so that the cell stays short and
// readable (the full signatures are in history.csv).
func previous(list []string, sig string) []string {
	list = append(list, sig)
	if len(list) > maxPrevious {
		list = list[len(list)-maxPrevious:]
	}
	out := make([]string, len(list))
	for i, s := range list {
		if len(s) > shortSig {
			s = s[:shortSig]
		}
		out[i] = s
	}
	return out
}

// Failure is one failed verification's output.
type Failure struct {
	Output   []byte
	ExitCode *int   // nil when unknown: an ordinary failure
	Gate     string // the gate that failed, if any
	// Digest, when set, is what normalizing the whole output found, where
	// Output holds only its head and tail: the signature comes from it.
	Digest *signature.Digest
	// headlines say what the failure was, in the order of its output (see
	// Workspace.headlines); set when it is signed for the queue.
	headlines []string
	// signed, when set, is the failure's signature and normalized text,
	// made by who made it (results.Sign, for the units of one issue).
	signed [2]string
	// Summary, when set, is the gate's Summary of this failure ("Quality
	// gate G failed: timed out after 5m"): an issue whose Summary the gate
	// wrote takes it, so that the Summary follows the latest cause. A
	// Summary a person wrote stays.
	Summary string
}

// Class returns the failure's exit class.
func (f Failure) Class() signature.Class {
	if f.ExitCode == nil {
		return signature.Fail
	}
	return signature.ClassOf(*f.ExitCode)
}

// Signature computes the failure's signature and normalized text.
func (w Workspace) Signature(f Failure) (sig, normalized string) {
	if f.signed[0] != "" {
		return f.signed[0], f.signed[1]
	}
	if f.Digest != nil {
		return f.Digest.Signature(f.Class()), f.Digest.Normalized
	}
	return signature.Of(f.Output, f.Class(), w.SignatureOptions())
}

// SignatureOptions are the paths a failure's output is normalized with: the
// workspace's root and the user's home.
func (w Workspace) SignatureOptions() signature.Options {
	home, _ := os.UserHomeDir()
	return signature.Options{Workdir: w.Root(), Roots: w.checkouts(), Home: home}
}

// checkouts are the repository's other checkouts (its main and linked
// worktrees, but the workspace's own tree): masked in signatures as its
// root is.
func (w Workspace) checkouts() []string {
	root := w.Root()
	var out []string
	for _, c := range worktree.Checkouts(root) {
		if c != root {
			out = append(out, c)
		}
	}
	return out
}

// Recorded is what recording a failure did to an issue.
type Recorded struct {
	ID          string `json:"id"`
	Signature   string `json:"signature"`
	Class       string `json:"class"`
	RepeatCount int    `json:"signature_repeat_count"`
	Counted     bool   `json:"counted"` // false for infrastructure failures and empty output
	RetryCount  int    `json:"retry_count"`
	MaxRetries  int    `json:"max_retries"`
	Status      string `json:"status"`
	Halted      bool   `json:"halted"`
	Reason      string `json:"halt_reason,omitempty"`
	Normalized  string `json:"normalized_path,omitempty"`

	stopped bool // this failure made the issue stuck: it was not before
}

// Record records a failed verification against an issue, by the seed's
// rules: the same signature as Failure-Signature adds one to
// Signature-Repeat-Count; a different one moves the old one to
// Previous-Signatures and starts again at 1; halt_after_identical in a row,
// or as many within the last 5 attempts (an oscillation), halts the issue.
// A non-retryable failure (exit 126/127) makes the issue stuck at once; an
// infrastructure failure (a timeout, a kill by a signal) or an output that
// normalizes to nothing is retried but counts toward no halt.
func (w Workspace) Record(ctx context.Context, now time.Time, id string, f Failure) (Recorded, error) {
	return w.record(ctx, direct{w}, now, id, f)
}

// record is Record through tx.
func (w Workspace) record(ctx context.Context, tx queueTx, now time.Time, id string, f Failure) (Recorded, error) {
	cfg, err := w.Config()
	if err != nil {
		return Recorded{}, err
	}
	sig, normalized := w.Signature(f)
	f.headlines = w.headlines(f.Output)
	var r Recorded
	err = tx.change(ctx, func(q *queue.Queue) error {
		is := q.Issue(id)
		if is == nil {
			return &NoIssueError{Path: w.Path(QueueFile), ID: id}
		}
		r = applyFailure(is, cfg, f, sig, normalized)
		return nil
	}, func() []analytics.Event { return w.afterRecord(now, f, normalized, &r) })
	return r, err
}

// afterRecord keeps the normalized text of a recorded failure in
// runs/<run-id>/, so that a person can see why two failures did or did not
// match, and returns its history rows: the record, and the halt when this
// failure stopped the issue.
func (w Workspace) afterRecord(now time.Time, f Failure, normalized string, r *Recorded) []analytics.Event {
	run := w.runID()
	if !signature.Empty(normalized) {
		if dir, err := w.RunDir(run); err == nil {
			path := filepath.Join(dir, fmt.Sprintf("%s.%d.normalized.txt", r.ID, r.RetryCount))
			if fsx.WriteFile(path, []byte(normalized), 0o644) == nil {
				r.Normalized = path
			}
		}
	}
	events := []analytics.Event{{
		Time: now, RunID: run, Event: analytics.EventRecord, IssueID: r.ID, Gate: f.Gate,
		Attempt: r.RetryCount, Outcome: recordOutcome(f), ExitCode: f.ExitCode, Signature: r.Signature,
		Detail: recordDetail(*r),
	}}
	if r.stopped {
		events = append(events, analytics.Event{Time: now, RunID: run, Event: analytics.EventHalt, IssueID: r.ID, Detail: r.Reason})
	}
	return events
}

// applyFailure changes an issue as a failure with signature sig says.
func applyFailure(is *queue.Issue, cfg *config.Config, f Failure, sig, normalized string) Recorded {
	class := f.Class()
	// Only a person reopens an issue that waits for one (issue retry).
	wasStuck := is.Status() == queue.StatusStuck || is.Bool(queue.FieldHalted, false)
	r := Recorded{
		ID: is.ID, Signature: sig, Class: string(class),
		RetryCount:  is.Int(queue.FieldRetryCount, 0),
		MaxRetries:  is.Int(queue.FieldMaxRetries, cfg.Retry.MaxRetries),
		RepeatCount: is.Int(queue.FieldSignatureRepeatCount, 0),
	}
	is.SetSection(queue.SectionFailureDetails, FormatOutput(f.Output))
	followSummary(is, f)
	if f.Gate != "" {
		if _, ok := is.Get(FieldGate); !ok {
			is.Set(FieldGate, f.Gate)
		}
	}
	r.Counted = class != signature.Infra && !signature.Empty(normalized)
	if r.Counted {
		prev, _ := is.Get(queue.FieldFailureSignature)
		if sig == prev {
			r.RepeatCount++
		} else {
			if prev != "" {
				is.Set(queue.FieldPreviousSignatures, queue.FormatList(previous(is.List(queue.FieldPreviousSignatures), prev)))
			}
			is.Set(queue.FieldFailureSignature, sig)
			r.RepeatCount = 1
		}
		is.SetInt(queue.FieldSignatureRepeatCount, r.RepeatCount)
		recent := append(is.List(FieldRecentSignatures), sig[:shortSig])
		if len(recent) > recentWindow {
			recent = recent[len(recent)-recentWindow:]
		}
		is.Set(FieldRecentSignatures, queue.FormatList(recent))
		heads := f.headlines
		if len(heads) == 0 {
			heads = []string{signature.Headline(normalized)}
		}
		noteFailureSeen(is, sig[:shortSig], heads, recent)
		same := 0
		for _, s := range recent {
			if s == sig[:shortSig] {
				same++
			}
		}
		switch {
		case r.RepeatCount >= cfg.Retry.HaltAfterIdentical:
			r.Halted, r.Reason = true, ReasonIdentical
		case same >= cfg.Retry.HaltAfterIdentical:
			r.Halted, r.Reason = true, ReasonOscillation
		}
	}
	switch {
	case class == signature.NonRetryable:
		r.Reason = ReasonNonRetryable
		r.Status = queue.StatusStuck
	case r.Halted:
		r.Status = queue.StatusStuck
		is.SetBool(queue.FieldHalted, true)
	case is.Bool(queue.FieldAutoRetry, false) && r.RetryCount >= r.MaxRetries:
		r.Reason = ReasonExhausted
		r.Status = queue.StatusStuck
	case wasStuck:
		r.Status = queue.StatusStuck
		r.Halted = is.Bool(queue.FieldHalted, false)
		r.Reason, _ = is.Get(FieldHaltReason)
	default:
		r.Status = queue.StatusPending
	}
	if r.Reason != "" && !wasStuck {
		is.Set(FieldHaltReason, r.Reason)
	}
	r.stopped = r.Status == queue.StatusStuck && !wasStuck
	is.Set(queue.FieldStatus, r.Status)
	return r
}

// followSummary gives an issue whose Summary its gate wrote the gate's
// Summary of the failure: the latest cause, not the first.
func followSummary(is *queue.Issue, f Failure) {
	if f.Summary == "" || f.Gate == "" {
		return
	}
	sec := is.Section(queue.SectionSummary)
	if sec == nil {
		return
	}
	cur := strings.TrimSpace(sec.Body())
	if strings.HasPrefix(cur, gateSummaryPrefix(f.Gate)) && cur != f.Summary {
		is.SetSection(queue.SectionSummary, f.Summary)
	}
}

func recordOutcome(f Failure) string {
	switch f.Class() {
	case signature.Infra:
		return analytics.OutcomeTimeout
	case signature.NonRetryable:
		return analytics.OutcomeError
	}
	return analytics.OutcomeFail
}

func recordDetail(r Recorded) string {
	if !r.Counted {
		if r.Class == string(signature.Infra) {
			return "class=infra"
		}
		return "empty output"
	}
	return "repeat=" + strconv.Itoa(r.RepeatCount)
}

// Config loads config.yaml; a config with problems is an error naming the
// first one.
func (w Workspace) Config() (*config.Config, error) {
	if err := w.mustExist(); err != nil {
		return nil, err
	}
	cfg, problems, err := config.Load(w.Path(ConfigFile))
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		msg := problems[0].String()
		if len(problems) > 1 {
			msg += fmt.Sprintf(" (and %d more; see orchestrate validate)", len(problems)-1)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return cfg, nil
}

// runID returns the session's run ID, or analytics.NoRun before any session start.
func (w Workspace) runID() string {
	s, err := session.Load(w.Path(StateFile))
	if err != nil {
		return analytics.NoRun
	}
	return runIDOf(s)
}

// runIDOf is runID for a state already read.
// A run ID that could not be one (a path, a shell command, …) is NoRun:
// it names a directory, runs/<run-id>/, and history rows.
func runIDOf(s *session.State) string {
	if id, ok := s.Get(session.RunID); ok && analytics.ValidID(id) {
		return id
	}
	return analytics.NoRun
}

// appendHistory adds events to history.csv; the caller holds the lock.
// It leaves analytics.html as it is (see AnalyticsStampFile).
func (w Workspace) appendHistory(events ...analytics.Event) error {
	if w.loop > 0 {
		for i := range events {
			if events[i].Loop == 0 && events[i].Event != analytics.EventRunStart {
				events[i].Loop = w.loop
			}
		}
	}
	// The command's own write is done: what follows may warn, never fail
	// it (see Notify).
	if err := analytics.AppendHistory(w.Path(HistoryFile), events...); err != nil {
		return w.warn(fmt.Errorf("appending history: %w", err))
	}
	return nil
}

// loadQueue reads the queue. A Stop hook's workspace reads only the
// pieces of it that hold its session's key (queue.LoadSome), as every
// issue it looks at is tagged with it: its cost does not grow with the
// other issues.
func (w Workspace) loadQueue() (*queue.Queue, error) {
	if w.session != "" {
		return queue.LoadSome(w.Path(QueueFile), w.session)
	}
	return queue.Load(w.Path(QueueFile))
}

// updateQueue runs fn on the queue; the caller holds the lock. A Stop
// hook's workspace reads and changes only the pieces of it that hold its
// session's key, or the IDs of its day, for the issues it files
// (queue.UpdateSome): a problem in another issue does not stop it.
//
// A workspace a claim's holder uses (Fenced) changes nothing once the
// claim was taken over.
func (w Workspace) updateQueue(fn func(*queue.Queue) error) error {
	fn = w.fenced(fn)
	if w.session != "" {
		return queue.UpdateSome(w.Path(QueueFile), w.queueNeedles(), fn)
	}
	return queue.Update(w.Path(QueueFile), fn)
}

// fenced is fn, after a check that the claim the workspace's writes carry
// (Fenced), if any, still holds.
func (w Workspace) fenced(fn func(*queue.Queue) error) func(*queue.Queue) error {
	if w.fence == nil {
		return fn
	}
	return func(q *queue.Queue) error {
		if err := w.checkFenced(q); err != nil {
			return err
		}
		return fn(q)
	}
}
