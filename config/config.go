// Package config reads .orchestrator/config.yaml strictly, reporting every problem with its line.
//
// Its API is what a program reading config.yaml needs: Load and ParseIn; the
// Config they return, with the types of its fields (Retry, Agent, Output,
// Human, Gate, Dimension, When, Clause, Enforcement); Problem; and the names
// of the values the file takes and its defaults (the Strategy, Exhaustion,
// HumanWait, Preset, Priority and Type constants, the Default constants,
// Default and DefaultOutput, Presets, ReviewPriorities,
// BuiltinDimensions). The profiles of agent.profile and what each one's
// commands are come from package agentcli. The
// other exported names serve the orchestrate command and its packages
// (DefaultGates, FormatGates and FormatAgent for init and validate --explain;
// Agent.CLI, CheckCommands and EnvSessionID for starting agents): they are
// not API and may change with it. The module is at v0: the API follows config.yaml and changes with it.
package config

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/problem"
)

// Defaults. The retry limits are those of the auto-retry mechanism (seed 004);
// the output sizes bound the memory a gate's output may take and the size of
// the excerpt the agent is shown.
const (
	DefaultMaxRetries         = 10
	DefaultGlobalCap          = 15
	DefaultHaltAfterIdentical = 3
	DefaultFreshAfterFailures = 2
	DefaultAgentTimeout       = 30 * time.Minute
	DefaultGateTimeout        = 10 * time.Minute
	DefaultHeadBytes          = 16 << 10
	DefaultTailBytes          = 16 << 10
	DefaultFeedbackLines      = 40
	DefaultFeedbackBytes      = 4 << 10

	// MaxCaptureBytes caps head_bytes and tail_bytes: a gate's captured
	// output is meant to stay small whatever the command prints.
	MaxCaptureBytes = 64 << 20

	// A gate's log on disk keeps its first and its last bytes, so that a
	// command that prints without end cannot fill the disk.
	DefaultLogHeadBytes = 4 << 20
	DefaultLogTailBytes = 4 << 20
	// DefaultKeepRuns is how many runs runs/ keeps.
	DefaultKeepRuns = 20
)

// Retry strategies: resume the same agent session, start a fresh one, or
// switch to a fresh one after FreshAfterFailures failures of the same.
const (
	StrategySame  = "same"
	StrategyFresh = "fresh"
	StrategyAuto  = "auto"
)

// What to do with a failed attempt's changes once retries are exhausted.
const (
	ExhaustionKeep  = "keep"
	ExhaustionStash = "stash"

	// on_success: what run does with the agent's work when every blocking
	// gate passes. Commit commits it (only when the run started from a
	// clean tree); leave leaves it in the tree.
	SuccessCommit = "commit"
	SuccessLeave  = "leave"
)

// Enforcement says what a gate's failure does to the evaluation (seed 002).
type Enforcement string

const (
	// Blocking: a failure fails the evaluation.
	Blocking Enforcement = "blocking"
	// Advisory: a failure is a warning; the evaluation still passes.
	Advisory Enforcement = "advisory"
	// Informational: a failure is only recorded.
	Informational Enforcement = "informational"
)

// Priorities a gate may declare; they give the default enforcement.
const (
	PriorityCritical = "critical"
	PriorityHigh     = "high"
	PriorityMedium   = "medium"
	PriorityLow      = "low"
)

// PriorityFor is the priority of the issues a gate files when it sets no
// priority: seed 002's map read the other way, blocking is critical,
// advisory high, informational low, so that a blocking gate's failure is a
// "Critical issue" (seed 004) and a when: condition on priority 1 matches it.
func PriorityFor(priority string, e Enforcement) string {
	if priority != "" {
		return priority
	}
	switch e {
	case Advisory:
		return PriorityHigh
	case Informational:
		return PriorityLow
	}
	return PriorityCritical
}

// enforcementForPriority is seed 002's SEVERITY_TO_ENFORCEMENT mapping:
// critical is blocking, high and medium are advisory, low is informational.
// A gate with no priority is blocking, as a gate with no enforcement mode is in
// the seed ("Default enforcement mode = blocking").
func enforcementForPriority(priority string) Enforcement {
	switch priority {
	case PriorityHigh, PriorityMedium:
		return Advisory
	case PriorityLow:
		return Informational
	}
	return Blocking
}

// Config is the content of config.yaml.
type Config struct {
	Retry        Retry
	Agent        Agent
	Parallelism  int // gates run at once in the parallel phase; 0 = number of CPUs
	OnExhaustion string
	OnSuccess    string // commit | leave
	Output       Output
	Human        Human
	Agents       Agents // run --agents
	KeepRuns     int    // keep_runs: how many runs runs/ keeps (the newest); 0 keeps every run
	Preset       string // gates.preset: the preset the gates were expanded from; "" for none
	Gates        []Gate // the preset's gates, changed and extended by gates.list, or the plain list
}

// Agents tunes orchestrate run --agents.
type Agents struct {
	// PortBase, when not 0, gives agent N of a run the environment variable
	// PORT=PortBase+N (agents.port_base): servers the agents start do not
	// collide.
	PortBase int
	// Worktrees, when set, is the directory the issues' worktrees go in
	// (agents.worktrees; relative to the repository); by default the
	// user's data directory (see package worktree).
	Worktrees string
}

// What orchestrate run does while a human gate awaits a person's approval.
const (
	HumanWaitExit  = "exit"  // stop with exit code 11; run again once a person decided
	HumanWaitBlock = "block" // wait in place until a person decides, then evaluate again
)

// Human holds the settings of human gates.
type Human struct {
	Wait string // human.wait: HumanWaitExit or HumanWaitBlock
}

// Retry holds the retry limits and the agent strategy between attempts.
type Retry struct {
	MaxRetries         int // per issue, unless a gate sets its own
	GlobalCap          int // auto-retry loops per run
	HaltAfterIdentical int // the same failure signature this many times in a row halts an issue
	Strategy           string
	FreshAfterFailures int
}

// Agent is the command that runs the coding agent; the prompt goes to its
// stdin. What the file leaves out comes from the agent's profile.
type Agent struct {
	Profile       string // agent.profile: one of agentcli.Profiles; claude when not set
	Command       string // a fresh agent, in a session of its own
	ResumeCommand string // the same agent again, in its pinned session; "" when it cannot resume
	ReviewCommand string // a review gate's reviewer, read-only (presets use it)
	Timeout       time.Duration
	Session       string // how the session is pinned: agentcli.SessionChosen, agentcli.SessionReported, or "" (none)
	Usage         string // how the agent reports its session and usage: one of agentcli's Usage* formats, or ""
	CommandSet    bool   // agent.command is set in the file
	ResumeSet     bool   // agent.resume_command is set in the file
	// Prices (agent.prices) price the tokens of an agent that reports
	// tokens but no cost, by model; PriceDefault's for a model not listed
	// or not reported. None by default: prices change.
	Prices map[string]Price
}

// Price is what a model's tokens cost, in US dollars per million tokens.
type Price struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	CacheRead float64 `json:"cache_read"`
}

// PriceDefault is the agent.prices entry for a model the others do not
// name, or a launch that names none.
const PriceDefault = "default"

// PriceOf returns the price of model's tokens and the agent.prices entry
// it comes from; false when there is none.
func (a *Agent) PriceOf(model string) (Price, string, bool) {
	if p, ok := a.Prices[model]; ok && model != "" {
		return p, model, true
	}
	p, ok := a.Prices[PriceDefault]
	return p, PriceDefault, ok
}

// Output bounds what is kept of a gate's output in memory (the whole of it
// goes to the gate's log file) and what the agent is shown of a failure.
type Output struct {
	HeadBytes     int // first bytes kept (output.head_bytes)
	TailBytes     int // last bytes kept (output.tail_bytes)
	FeedbackLines int // at most this many last lines of a failure in the feedback (output.feedback_lines)
	FeedbackBytes int // and at most this many bytes (output.feedback_bytes)
	LogHeadBytes  int // first bytes of the log on disk (output.log_head_bytes)
	LogTailBytes  int // last bytes of the log on disk, after a marker (output.log_tail_bytes)
}

// Gate types: what judges the agent's work.
const (
	TypeCommand = "command" // a shell command's exit status
	TypeReview  = "review"  // reviewers' findings on the diff (P0 to P3)
	TypeHuman   = "human"   // a person's approval, recorded in the issue queue
)

// Review priorities, worst first. A review gate fails on findings at its
// fail_on priority or worse.
var ReviewPriorities = []string{"P0", "P1", "P2", "P3"}

// DefaultFailOn is a review gate's fail_on when it does not set one:
// critical and major findings fail the gate, minor ones and nits do not.
const DefaultFailOn = "P1"

// DefaultDiffBase is what the working tree is compared with for review and
// human gates when diff_base is not set.
const DefaultDiffBase = "HEAD"

// Gate is one quality gate: a shell command whose exit status judges the
// agent's work, reviewers whose findings do (type: review), or a person
// (type: human).
type Gate struct {
	Name       string
	Command    string
	Timeout    time.Duration // DefaultGateTimeout when not set in the file
	WorkingDir string        // relative to the repository root; "" or "." is the root
	// Report is the file the command writes its test results to, JUnit
	// XML or go test -json, relative to WorkingDir; "" reads the output.
	Report      string
	Env         map[string]string
	Enforcement Enforcement
	MaxRetries  int // with MaxRetriesSet; otherwise retry.max_retries
	// MaxRetriesSet: max_retries is set, 0 included (retrying off, seed
	// 001's "0 retries: disable iterative fixing").
	MaxRetriesSet bool
	Serial        bool
	// NotPrerequisite: a serial gate's failure does not skip the parallel
	// gates (prerequisite: false). By default a blocking serial gate is a
	// prerequisite of them, as in seed 003: the cheap checks first, and
	// the expensive ones only on a change that passes them.
	NotPrerequisite bool
	FailFast        bool
	AutoRetry       bool // defaults to true for a blocking gate, false otherwise
	Priority        string
	Hints           []string
	Line            int // line of the gate in config.yaml; 0 when not read from a file

	Type       string      // TypeCommand, TypeReview or TypeHuman; "" is TypeCommand
	Prompt     string      // review: added to every reviewer's prompt; human: what the person is asked
	Dimensions []Dimension // review: one reviewer per dimension, run in parallel; none: one reviewer
	FailOn     string      // review: findings at this priority (P0 to P3) or worse fail the gate
	Synthesis  string      // review: a command that reads all findings (JSON lines) and prints the final set
	DiffBase   string      // review, human: the revision the working tree is compared with
	When       *When       // human: which open issues need the approval; nil = always
	Preset     string      // the preset the gate comes from; "" for a gate of the list's own
}

// Dimension is one aspect a review gate looks at, with its own reviewer.
type Dimension struct {
	Name   string // correctness, security, …
	Prompt string // what its reviewer is asked to look for
}

// IsReview reports whether g is a review gate.
func (g Gate) IsReview() bool { return g.Type == TypeReview }

// IsHuman reports whether g is a human gate.
func (g Gate) IsHuman() bool { return g.Type == TypeHuman }

// Kind returns g's type, TypeCommand when unset.
func (g Gate) Kind() string {
	if g.Type == "" {
		return TypeCommand
	}
	return g.Type
}

// Problem is one thing wrong in a config file.
type Problem = problem.Problem

// Default returns the configuration used when there is no config.yaml: the
// default limits and no gates.
func Default() *Config {
	return &Config{
		Retry: Retry{
			MaxRetries:         DefaultMaxRetries,
			GlobalCap:          DefaultGlobalCap,
			HaltAfterIdentical: DefaultHaltAfterIdentical,
			Strategy:           StrategyAuto,
			FreshAfterFailures: DefaultFreshAfterFailures,
		},
		Agent:        defaultAgent(),
		OnExhaustion: ExhaustionKeep,
		OnSuccess:    SuccessCommit,
		Output:       DefaultOutput(),
		Human:        Human{Wait: HumanWaitExit},
		KeepRuns:     DefaultKeepRuns,
	}
}

// defaultAgent is the claude profile's agent, allowing no check command.
func defaultAgent() Agent {
	a := Agent{Profile: agentcli.Claude, Timeout: DefaultAgentTimeout}
	a.reviewer()
	a.applyProfile(nil)
	return a
}

// DefaultOutput returns the default output bounds.
func DefaultOutput() Output {
	return Output{
		HeadBytes:     DefaultHeadBytes,
		TailBytes:     DefaultTailBytes,
		FeedbackLines: DefaultFeedbackLines,
		FeedbackBytes: DefaultFeedbackBytes,
		LogHeadBytes:  DefaultLogHeadBytes,
		LogTailBytes:  DefaultLogTailBytes,
	}
}

// MaxConfigSize is the most of config.yaml that Load reads: a larger file
// is an error, never parsed.
const MaxConfigSize = 1 << 20

// Load reads and parses the config file at path. A missing file means the
// defaults. The returned error is for I/O errors only; everything wrong in the
// file's content is a Problem. The Config is meant to be used only when there
// are no problems.
func Load(path string) (*Config, []Problem, error) {
	data, exists, err := fsx.ReadFileMax(path, MaxConfigSize)
	if err != nil {
		return nil, nil, fmt.Errorf("reading config: %w", err)
	}
	if !exists {
		return Default(), nil, nil
	}
	// The repository is the directory that holds the workspace directory,
	// where a preset looks for the language's test and type-check commands.
	repo := ""
	if abs, err := filepath.Abs(path); err == nil {
		repo = filepath.Dir(filepath.Dir(abs))
	}
	cfg, problems := ParseIn(path, data, repo)
	return cfg, problems, nil
}

// GateMaxRetries returns the retry limit for the issues g files: its own
// max_retries (0 turns retrying off), or retry.max_retries.
func (c *Config) GateMaxRetries(g Gate) int {
	if g.MaxRetriesSet || g.MaxRetries > 0 {
		return g.MaxRetries
	}
	return c.Retry.MaxRetries
}

// Gate returns the gate named name, or false.
func (c *Config) Gate(name string) (Gate, bool) {
	for _, g := range c.Gates {
		if g.Name == name {
			return g, true
		}
	}
	return Gate{}, false
}
