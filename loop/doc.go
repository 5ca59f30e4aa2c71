// Package loop ties the queue, the session state, the failure signatures,
// the gates and the history together into the retry policy and its loop.
//
// # Where each rule lives
//
// The rules of the auto-retry mechanism (seed 004) and of the quality-gate
// loop (seeds 000 to 003), with the ones added to them, by file. A name in
// parentheses is declared in the file of its line.
//
//   - record.go: a failure recorded against an issue (Record, applyFailure).
//     Its signature (Signature); the same signature again adds one to
//     Signature-Repeat-Count, a new one starts it at 1 and keeps the old in
//     Previous-Signatures; halt_after_identical in a row, or as many within
//     the last 5 attempts, halts the issue (ReasonIdentical,
//     ReasonOscillation); exit 126 or 127 is stuck at once
//     (ReasonNonRetryable); Retry-Count at Max-Retries is stuck too
//     (ReasonExhausted); a timeout or an output that normalizes to nothing
//     counts toward no halt.
//   - add.go: an issue filed with the seed's fields and defaults (AddIssue,
//     Defaults), or, when an open issue of the same session has the
//     failure's signature, the failure recorded against that one instead
//     (openWithSignature).
//   - check.go: the seed's checkAutoRetry, step for step (Check): the
//     no_auto_retry sentinel and auto_retry_enabled (disabled, Disabled);
//     the candidates (candidate); the global cap, which holds them all back
//     (retryQueue, retryStep); Retry-Count + 1 and in_progress, then
//     total_auto_retries + 1 and last_retry_reason (countRetry); the issues
//     that wait for a person, and why (needsPerson); the seed's TRIGGERED
//     and EXHAUSTED messages and the cap's (TriggeredMessage,
//     ExhaustedMessage, CapMessage).
//   - intent.go: check's two files, the queue then the state, as one step:
//     a crash between them is completed by the next command that takes the
//     lock (writeIntent, recoverCheck).
//   - messages.go: the seed's SUCCEEDED message (SucceededMessage).
//   - issues.go: a person's choice for an issue that waits (seed 002):
//     retry it with its counts back to 0, skip it, or resolve it (Retry,
//     Skip, Resolve).
//   - session.go: a run's start: a new run ID, total_auto_retries back to 0
//     (StartSession).
//   - gates.go: one evaluation of the gates (RunGates): a failing auto_retry
//     gate files its issues or records against them (recordFailure; which
//     issues, the next file says), a passing gate resolves them
//     (resolveGateIssues); a review gate's failure is signed from its
//     blocking findings (gateFailure); the feedback's
//     attempt count, from the first failing blocking gate with an issue
//     (attemptOf); the gate results and the summary of seed 001 for the
//     whole fix cycle (previousAttempts).
//   - filing.go: a failing gate's issues. A failing suite files one issue
//     per failing test (recordUnits, fileUnits), each listing its test in
//     Tests and signed over its own block (unitsFailure); at most
//     MaxFiledPerGate a gate and evaluation, the last holding the rest
//     (capUnits); a test an open issue holds is recorded against it, never
//     filed again, and an issue filed before issues listed their tests
//     holds its whole gate (holderOf). A gate failing as a whole files one
//     issue, or records against the one that holds it (fileGateFailure,
//     openGateIssue).
//   - teststate.go: where an issue's tests stand in the last gate results
//     kept (LastResults, TestStates).
//   - judge.go: an attempt judged by its issue (judgeClaimed,
//     JudgeClaimed): the gates' test-level results (reportsOf), the units
//     an issue holds (ownUnits: its Tests, or the gate that filed it), the
//     failures that count against it and none other recorded, signed and
//     fed back (recordClaimed, verdictFailure, judgedEvaluation), or, not
//     judged, every blocking gate's failure as one; the tests an issue
//     without any learns from a pass (learn); with the open issues, each
//     issue whose tests pass with nothing regressed resolved while the
//     others go on (resolveHeld).
//   - baseline.go: the gates' results on the commit the work starts from,
//     kept by tree and gates' config in runs/baseline/ (TakeBaseline,
//     KeptBaseline, keepBaseline).
//   - seen.go: each failure an issue saw, for the feedback's already tried
//     (noteFailureSeen, failuresSeen): its failing tests in the output's
//     order (headlines), and what tells two of them apart
//     (distinctHeadline).
//   - human.go: human gates: an approval request per gate and diff, given or
//     rejected by a person (decideHuman, requestApproval, Approve, Reject,
//     WaitApprovals).
//   - run.go: the loop (Run, RunScope): the prompt and the agent, the
//     gates, then the check decides whether to loop again; the sentinel
//     before each loop (stopBefore); the same agent or a fresh one
//     (fresh); on_exhaustion (exhausted); one run at a time (TryRunLock,
//     StartRun).
//   - launch.go: one launch of the agent (launch): its prompt
//     (writePrompt) and environment (agentEnv); an agent that could not
//     work at all, which counts for nothing (couldNotStart); what it
//     reported, and its usage, priced by agent.prices when it reported no
//     cost (takeReport, priced); an issue closed since its claim, not
//     launched on again (stillOpen, ClosedError).
//   - report.go: what a run reports: each step as it happens (Step), each
//     launch (AgentRun), its end (RunResult), and what each of several
//     agents did (Worked).
//   - scope.go: what a run's loop works on, and how its passing work
//     lands (Scope, Loop): for Run's one agent, the workspace's task or
//     open issues, its work committed (oneAgent); for each of several
//     agents, its claimed issue, its work on the merge train (package
//     pool). What package pool asks of a workspace besides (Warn,
//     AppendHistory, CheckFence, RecordClaimed, Claimable).
//   - git.go: the files a loop changed, for the next prompt, and the stash
//     on_exhaustion keeps (filesChanged, stashExhausted).
//   - commit.go: on_success: commit, the agent's work committed when every
//     blocking gate passes, only when the run started from a clean tree,
//     with a message from the task and the resolved issues (noteStartTree,
//     commitSuccess, commitMessage).
//   - byproducts.go: the files the gates wrote and the agent did not,
//     which the commit leaves out (byproducts, noteAgentTree,
//     settleGates).
//   - preflight.go: a run with no gate is refused before any agent is
//     launched (checkGates, ErrNoGates).
//   - compact.go: what an agent session is told of its open issues after
//     its conversation was compacted (SessionContext).
//   - resume.go: a resumed agent told the workspace is unchanged only when
//     git shows it so, else the files changed since it stopped (noteLeft,
//     resumeState).
//   - workstate.go: where a work tree stands, read with one git status and
//     the content of the paths it lists, and what changed between two
//     looks (readWorkState, changedSince); the start of a run reads it too
//     (gitStatus).
//   - stall.go: an agent that keeps saying it cannot reach its model API
//     and never exits (codex's reconnects) stopped at its profile's Nth
//     such line, unless it finished a model turn first (stallWatch); the
//     run then stops as for an agent that could not work. The lines are
//     agentcli's.
//   - budget.go: a launch counted before it starts, against each issue it
//     works on (spendLaunch): Launch-Count + 1, and for an auto-retry
//     issue no check retried, Retry-Count with it; none past 1 +
//     Max-Retries. The run's own counts, the floor of what the files say
//     once its agent exited, a count that went down said (keepCounts).
//   - launches.go: each launch also counted apart from the queue
//     (LaunchesFile), the floor of every later run's counts and of what a
//     sync shares (raiseCounts), the counts a sync brings kept too
//     (learnCounts); a person's retry, here or learnt at a sync, drops
//     it (forgetLaunches, retriedOn).
//   - maxloops.go: the check at run's --max-loops limit, asked without
//     writing, so that no loop is announced or counted that will not run
//     (wouldRetry).
//   - advisory.go: the advisory gates that failed while the blocking ones
//     passed, told to the person (AdvisoryMessage).
//   - hook.go: where an agent's hook stands (its input and the agents'
//     protocols are package agentcli's): the workspace it works on
//     (FindWorkspace), and a session's baseline, where it began
//     or where its gates last passed, so that a session that changed
//     nothing stops at once (SessionStart, readBaseline, treeState).
//   - stophook.go: an agent's Stop hook (StopHook): the gates with the
//     session's own issues, their changes of the queue one batch
//     (gatesHook), attempts counted as check counts them (retrySession),
//     blocking with the feedback or saying why the agent may stop
//     (retryHook); a failure whose signature belongs to an issue that
//     waits for a person is not filed again, nor recorded against it,
//     under every driver (waitingFor); a halted issue's evidence is never
//     rewritten: a different failure of its gate files an issue of its
//     own.
//   - checked.go: a check's gates that all passed outside a Stop hook (an
//     agent's gates call through the MCP server) spare the Stop hook a
//     second run on the same tree (RecordChecked, unchanged).
//   - batch.go: where the steps that file, record, resolve and retry read
//     and change the queue (queueTx): a command's own lock, read and write
//     for each change (direct); a Stop hook's one write of the queue, its
//     batch, begun once its gates ran and committed before its baseline:
//     the records of its failing gates, the issues it files and resolves
//     and the session's retry, each made in memory as its own write would
//     have made it, under the lock from the gates' end to the write, their
//     history rows after it (batch, beginBatch, commit).
//   - claims.go: the claims (Claims): kept in the queue, under the lock
//     (localClaims), or on a remote, chosen once by whether one is given;
//     their history rows; and the fence every change of a holder carries
//     (Fenced).
//   - epochs.go: the epochs given to each issue's claims, kept apart from
//     the queue (EpochsFile): a Lease-Epoch set back is set up again, so
//     that no epoch is given twice (raiseEpochs, noteEpoch); a takeover on
//     a remote, learned, fences the old holder here (learnEpoch), and its
//     changes are not shared (staleHere).
//   - remote.go: claims on a git remote, for agents on several machines
//     (remoteClaims): the remote's ref is the claim, mirrored into the
//     queue (mirror); a ref that holds no record orchestrate wrote skipped
//     and said (noteBad); clocks seen apart stop the claims (Next, Claim)
//     and are said by a renewal or a release (changeOn); an issue let go
//     since the last sync claimed only after a sync that came after its
//     release was fetched (releasedSince).
//   - remotequeue.go: the queue shared through the remote, merged with
//     this machine's before each claim, launch and release, this
//     machine's history shared beside it as its host's, every other
//     host's kept (SyncQueue, ownHistory).
//   - lostpush.go: a push to the remote lost to another machine's tried
//     again after a pause that grows with each loss in a row, drawn so
//     that machines that lost together try again apart (pauseAfterLost,
//     lostPause); how many times (syncTries, nextRounds).
//
// And the rest: workspace.go, the files, the lock and runs/ (Lock, RunDir);
// runlock.go, the run's lock and its agent's process group (runLock,
// noteGroup); prompt.go, the agent's prompts (renderPrompt); agentusage.go,
// what an agent reports of its usage, read by package agentcli, in the
// history's terms (ParseAgentOutput); retention.go, the
// runs kept (pruneRuns); analytics.go, analytics.html kept up to date, of
// this clone's history and the other hosts' on a remote (RefreshAnalytics,
// RefreshAnalyticsFrom, PageHistories); watch.go, the workspace watched for
// changes (Watch); supervisor.go, the warning that commands run without
// their supervisor (noteSupervisor); limits.go, the most of a file read
// whole (MaxTaskFile); testhooks.go, in a test build only, how long a run
// waits for a killed run's agent group (leftoverWaitEnv).
//
// # API
//
// Workspace and its methods are the API: what the orchestrate command does,
// callable from Go with the same rules and the same files. The constants
// and helpers beside them (field and section names, prompt data) serve the
// command and may change with it; the module is at v0. The agents' hook
// protocols are package agentcli's.
package loop
