package loop

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// ClosedError says that the issue a loop works on (Scope.Issue) is no
// longer one to work on: resolved or skipped since it was claimed (by a
// person, or on another machine, as the queue's sync before the launch
// brought it), or gone from the queue. Its agent is not launched again.
type ClosedError struct {
	ID     string
	Status string // "" when the issue is gone
}

func (e *ClosedError) Error() string {
	if e.Status == "" {
		return e.ID + " is no longer in the queue: its agent is not launched again"
	}
	return fmt.Sprintf("%s is %s in the queue since it was claimed: its agent is not launched again", e.ID, e.Status)
}

// stillOpen checks, before a launch, that the issue the loop works on, if
// one, is still open in the queue q, as the launch read it (see
// ClosedError).
func (r *runner) stillOpen(q *queue.Queue) error {
	id := r.scope.Issue()
	if id == "" {
		return nil
	}
	switch is := q.Issue(id); {
	case is == nil:
		return &ClosedError{ID: id}
	case !open(is):
		return &ClosedError{ID: id, Status: is.Status()}
	}
	return nil
}

// launch builds loop n's prompt and runs the agent with it.
func (r *runner) launch(ctx context.Context, n int) (*AgentRun, error) {
	fresh := r.fresh(n)
	if fresh {
		r.sameFailures = 0
	}
	if err := r.scope.Launching(ctx); err != nil {
		return nil, err
	}
	// The queue as the sync before the launch left it: its issue still
	// open, and the prompt's issues.
	q, err := queue.Load(r.w.Path(QueueFile))
	if err != nil {
		return nil, err
	}
	if err := r.stillOpen(q); err != nil {
		return nil, err
	}
	r.launched++
	c := r.callOf(n, fresh)
	a, err := r.writePrompt(ctx, n, c, q)
	if err != nil {
		return nil, err
	}
	env, err := r.agentEnv(n, a, c)
	if err != nil {
		return nil, err
	}
	r.step(Step{Kind: StepLaunch, Loop: n, Agent: a})

	// A fresh agent gets a session of its own: one orchestrate chooses, or
	// the one it will report.
	session := r.session
	if fresh {
		session = ""
		if r.cfg.Agent.Session != agentcli.SessionReported {
			if session, err = newSessionID(); err != nil {
				return nil, err
			}
		}
	}
	env[config.EnvSessionID] = session

	// The agent runs as a gate does (sh -c, its own process group, killed
	// whole at its timeout or when ctx ends), with the prompt file as its
	// standard input. ORCHESTRATE_CHILD tells orchestrate's own hooks in it
	// that the run runs the gates itself.
	g := config.Gate{
		Name:    "agent",
		Command: "exec <\"$ORCHESTRATE_PROMPT_FILE\"\n" + c.command,
		Timeout: r.cfg.Agent.Timeout,
		Env:     env,
	}
	actx, stop := context.WithCancel(ctx)
	defer stop()
	watch := newStallWatch(r.cfg.Agent.CLI().Stalls(), stop)
	res, logErr := gate.Run(actx, g, gate.Options{RepoRoot: r.w.Root(), Output: r.cfg.Output, Now: r.opt.Now,
		Started: noteGroup(r.held, r.res.RunID), Watch: watch.writer()}, a.Log)
	r.watch = watch
	if logErr != nil {
		a.Log = ""
	}
	a.ExitCode, a.Duration, a.Output, a.Reason = res.ExitCode, res.Duration, res.Output, res.Reason()
	a.Outcome = agentOutcome(res.Outcome)
	if res.Outcome == gate.Pass {
		a.Reason = ""
	}
	a.Key = c.key
	r.noteLeft(ctx)
	r.noteAgentTree(ctx)
	r.scope.Launched(ctx)
	r.takeReport(a, res.Output, session)
	r.res.Agents = append(r.res.Agents, *a)
	if err := r.history(ctx, r.agentEvents(n, a, c)...); err != nil {
		return a, err
	}
	r.step(Step{Kind: StepAgent, Loop: n, Agent: a})
	return a, nil
}

// couldNotStart returns why the agent could not work at all, when its
// launch failed with no model turn and its output says so in the words its
// profile knows (agentcli.Profile.CouldNotStart): not an attempt, and nothing
// is counted; the run stops, quoting the agent.
func (r *runner) couldNotStart(a *AgentRun) error {
	if a.Usage != nil && (a.Usage.Turns > 0 || a.Usage.Tokens() > 0) {
		return nil // it worked, then failed: an attempt like any other
	}
	// A launch stopped as stalled, then the agent's own words (Claude
	// Code's result: "API Error: Request rejected (429) · …"), then its
	// whole output.
	var f agentcli.StartFailure
	var line string
	ok := r.watch != nil && r.watch.stalled != nil
	if ok {
		f, line = *r.watch.stalled, r.watch.line
	} else {
		f, line, ok = r.cfg.Agent.CLI().CouldNotStart(a.ExitCode, r.said)
	}
	if !ok {
		f, line, ok = r.cfg.Agent.CLI().CouldNotStart(a.ExitCode, a.Output)
	}
	if !ok {
		return nil
	}
	return fmt.Errorf("the agent could not work: %s (exit %d: %q; all of it in %s): %s; nothing was counted", f.What, a.ExitCode, quoteLine(line), a.Log, f.Fix)
}

// quoteMax is how many characters of the agent's own line a start failure
// quotes: a longer line is cut to quoteMax-1 and "…".
const quoteMax = 200

// quoteLine is the agent's line as a start failure quotes it: one line of
// text, at most quoteMax characters.
func quoteLine(line string) string {
	line = textclean.Line(line)
	if r := []rune(line); len(r) > quoteMax {
		line = string(r[:quoteMax-1]) + "…"
	}
	return line
}

// agentCall is how a loop calls the agent: the prompt it renders, the
// command, how the history names the call, and the command's config key.
type agentCall struct {
	fresh                     bool
	prompt, command, how, key string
}

// callOf says how loop n calls the agent: a fresh one with the first
// prompt, or the continue prompt after the first loop, or the one before
// resumed.
func (r *runner) callOf(n int, fresh bool) agentCall {
	c := agentCall{fresh: fresh, prompt: PromptAgent, command: r.cfg.Agent.Command, how: "fresh", key: "agent.command"}
	switch {
	case !fresh:
		c.prompt, c.command, c.how, c.key = PromptResume, r.cfg.Agent.ResumeCommand, "resumed", "agent.resume_command"
	case n > 1:
		c.prompt = PromptContinue
	}
	return c
}

// writePrompt renders loop n's prompt into runs/<run-id>/prompt-<n>.md
// from the queue q and returns the agent run it starts.
func (r *runner) writePrompt(ctx context.Context, n int, c agentCall, q *queue.Queue) (*AgentRun, error) {
	d := PromptData{
		Task: r.task, Loop: n, MaxLoops: r.opt.MaxLoops, Fresh: c.fresh,
		Workspace: filepath.Base(r.w.Dir), Issues: r.issues(q),
		Feedback: r.feedback, WorkSummary: r.summary, Attempts: r.tried,
	}
	d.Title = titleOf(r.task, d.Issues)
	for _, is := range d.Issues {
		if is.Gate == "" && !slices.Contains(r.named, is.ID) {
			r.named = append(r.named, is.ID)
		}
	}
	for _, g := range r.cfg.Gates {
		d.Gates = append(d.Gates, g.Name)
	}
	if c.prompt == PromptContinue && r.start.git {
		d.FilesChanged = r.w.filesChanged(ctx)
	}
	if c.prompt == PromptResume {
		r.resumeState(ctx, &d)
	}
	r.settleGates(ctx, workState{}, false)
	text, err := r.w.renderPrompt(c.prompt, d)
	if err != nil {
		return nil, err
	}
	dir, err := r.w.RunDir(r.artifacts())
	if err != nil {
		return nil, err
	}
	r.w.noteSupervisor(dir)
	a := &AgentRun{
		Loop: n, Fresh: c.fresh, Command: c.command,
		Prompt: filepath.Join(dir, fmt.Sprintf("prompt-%d.md", n)),
		Log:    filepath.Join(dir, fmt.Sprintf("agent-%d.log", n)),
	}
	if err := fsx.WriteFile(a.Prompt, []byte(text), 0o644); err != nil {
		return nil, err
	}
	return a, nil
}

// agentEnv is the agent's environment but for its session
// (config.EnvSessionID): where its prompt and workspace are, which run
// and loop it is.
func (r *runner) agentEnv(n int, a *AgentRun, c agentCall) (map[string]string, error) {
	promptAbs, err := filepath.Abs(a.Prompt)
	if err != nil {
		return nil, err
	}
	wsAbs, err := filepath.Abs(r.w.Dir)
	if err != nil {
		return nil, err
	}
	env := map[string]string{
		"ORCHESTRATE_PROMPT_FILE": promptAbs,
		"ORCHESTRATE_RUN_ID":      r.res.RunID,
		"ORCHESTRATE_LOOP":        strconv.Itoa(n),
		"ORCHESTRATE_AGENT":       c.how,
		"ORCHESTRATOR_DIR":        wsAbs,
		gate.EnvChild:             "1",
	}
	r.scope.Env(env)
	return env, nil
}

// issues are the issues loop's prompt names: the open ones, or the
// claimed one of one of several agents.
func (r *runner) issues(q *queue.Queue) []PromptIssue {
	all := openIssues(q, r.cfg.Retry.MaxRetries)
	id := r.scope.Issue()
	if id == "" {
		return all
	}
	return slices.DeleteFunc(all, func(p PromptIssue) bool { return p.ID != id })
}

// agentOutcome is an agent run's outcome for the history.
func agentOutcome(o gate.Outcome) string {
	switch o {
	case gate.Pass:
		return "ok"
	case gate.Fail:
		return analytics.OutcomeFail
	case gate.TimedOut:
		return analytics.OutcomeTimeout
	}
	return analytics.OutcomeError
}

// takeReport keeps what the agent reported (its output, or the log when
// kept): its last words for the next prompt, the session a resume
// continues (the one it reported, else the one it was given), and its
// usage.
func (r *runner) takeReport(a *AgentRun, output, session string) {
	rep := ParseAgentOutput(r.cfg.Agent.Usage, agentOutput(a.Log, output))
	r.summary, r.said = workSummary(output), rep.Result
	if rep.Result != "" {
		r.summary = workSummary(rep.Result)
	}
	r.session = session
	if rep.Usage.Session != "" {
		r.session = rep.Usage.Session
	}
	if !rep.Usage.Zero() {
		if rep.Usage.Session == "" {
			rep.Usage.Session = r.session
		}
		u := r.launchUsage(rep.Usage)
		a.Usage = &u
	}
}

// launchUsage is what one launch used, from what the agent reported. Codex
// reports a resumed thread's running totals: this launch's share is what
// they grew by since the thread's last launch.
func (r *runner) launchUsage(u analytics.Usage) analytics.Usage {
	return priced(&r.cfg.Agent, r.launchShare(u))
}

// launchShare is launchUsage before pricing.
func (r *runner) launchShare(u analytics.Usage) analytics.Usage {
	if !agentcli.RunningTotals(r.cfg.Agent.Usage) || u.Session == "" {
		return u
	}
	if r.totals == nil {
		r.totals = map[string]analytics.Usage{}
	}
	prev, seen := r.totals[u.Session]
	r.totals[u.Session] = u
	if !seen || u.InputTokens < prev.InputTokens || u.OutputTokens < prev.OutputTokens || u.CacheReadTokens < prev.CacheReadTokens {
		return u // a thread of its own, or totals that did not grow: as reported
	}
	u.InputTokens -= prev.InputTokens
	u.OutputTokens -= prev.OutputTokens
	u.CacheReadTokens -= prev.CacheReadTokens
	return u
}

// priced prices the tokens of a launch whose agent reported tokens but no
// cost, with agent.prices (the launch's model's entry, or the default);
// Priced names the entry. Codex and Gemini count cached tokens within the
// input tokens; the others apart.
func priced(a *config.Agent, u analytics.Usage) analytics.Usage {
	if u.CostUSD != 0 || u.Tokens() == 0 {
		return u
	}
	p, from, ok := a.PriceOf(u.Model)
	if !ok {
		return u
	}
	input := u.InputTokens
	if agentcli.CacheInInput(a.Usage) {
		input = max(0, input-u.CacheReadTokens)
	}
	cost := (float64(input)*p.Input + float64(u.OutputTokens)*p.Output + float64(u.CacheReadTokens)*p.CacheRead) / 1e6
	// To a millionth of a dollar: no float noise in the history.
	u.CostUSD, u.Priced = math.Round(cost*1e6)/1e6, from
	return u
}

// agentEvents are the history rows of loop n's agent run: the run, and
// its usage when it reported some.
func (r *runner) agentEvents(n int, a *AgentRun, c agentCall) []analytics.Event {
	ev := analytics.Event{
		Time: r.opt.Now(), RunID: r.res.RunID, Loop: n, Event: analytics.EventAgent, Attempt: n,
		Outcome: a.Outcome, DurationMS: a.Duration.Milliseconds(), Detail: c.how + ": " + c.command,
	}
	if a.ExitCode >= 0 {
		ev.ExitCode = &a.ExitCode
	}
	events := []analytics.Event{ev}
	if a.Usage != nil {
		events = append(events, analytics.Event{Time: ev.Time, RunID: ev.RunID, Loop: n, Event: analytics.EventUsage,
			Attempt: n, Detail: analytics.FormatUsage(*a.Usage)})
	}
	return events
}
