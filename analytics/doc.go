// Package analytics keeps history.csv, the append-only record of what the loop did,
// and turns it into analytics.html, the report that says whether the loop is working.
//
// # history.csv
//
// A header, then one row per event, with the columns
//
//	time,run_id,loop,event,issue_id,gate,attempt,outcome,exit_code,duration_ms,signature,detail
//
// time is RFC 3339 in UTC with exactly three fractional digits
// (2026-01-21T10:30:00.123Z), so rows sort as text; readers also take any RFC 3339
// time, with or without fractions or an offset. loop, attempt and duration_ms are
// integers (empty means 0); exit_code is empty when there is none. Every row is one
// line: a carriage return or line feed inside a field is written as a space, so line N
// of the file is one row, a torn row is the text after the last newline, and tail and
// grep work on the file.
//
// run_id is the run's ID, or norun (NoRun) for a row written outside any run: an
// orchestrate gate, issue add or record before the first run. Such a row counts for
// its gate and its issue, and under no run.
//
// Readers find columns by the header's names and ignore columns they do not know, so a
// later version may add columns at the end.
//
// # Events
//
// The event column takes these values; the other columns are set as listed, and left
// empty otherwise.
//
//	run_start        a run began (session start, orchestrate run)
//	run_end          outcome: why it stopped: passed, nothing_to_retry, cap_reached,
//	                 halted, aborted, interrupted, gates_failed (after --once or
//	                 --max-loops), awaiting_approval, error; detail says more
//	                 (a disabled run is nothing_to_retry, with the reason)
//	agent            one agent launch: loop, attempt, outcome ok|fail|timeout|error,
//	                 exit_code, duration_ms
//	gate             one gate run: gate, outcome pass|fail|timeout|error|skipped,
//	                 exit_code, duration_ms, signature; issue_id when it filed or
//	                 updated one
//	issue_add        an issue was filed: issue_id, gate, signature, detail = summary.
//	                 It is the first sighting of its failure: no record row is
//	                 written for the failure that filed the issue
//	record           a later failed verification recorded against issue_id: attempt =
//	                 the Retry-Count, outcome fail|timeout|error, exit_code,
//	                 signature, detail such as repeat=2 or class=infra
//	halt             issue_id halted: detail = identical|oscillation|nonretryable
//	check            the end-of-loop auto-retry check: outcome triggered|nothing|
//	                 disabled|cap_reached|exhausted, detail = the issue IDs it
//	                 concerned, separated by spaces or commas
//	retry_triggered  one per issue that check retried: issue_id, attempt = the new
//	                 Retry-Count
//	resolve          issue_id passed: attempt = the retries it took, duration_ms = time
//	                 since the issue was created when known; detail = manual when a
//	                 person resolved it by hand (orchestrate issue resolve)
//	cap              the run reached the global auto-retry cap
//	skip             a person skipped issue_id
//	retry            a person reset issue_id's counts (orchestrate issue retry)
//	abort            a person aborted the run
//	claim            an issue changed hands (run --agents, orchestrate claim):
//	                 issue_id, attempt = the new Lease-Epoch, detail =
//	                 holder=NAME@HOST/PID, and from=… when it was taken over
//	release          a claim ended: issue_id, attempt = its epoch, detail = holder=…
//	merge            run --agents merged issue_id's work (outcome pass, detail = the
//	                 commit and the branch) or could not (fail, detail = why: the
//	                 conflicting files, the gates after the rebase)
//	usage            what one agent launch reported of its own use: loop and attempt
//	                 as its agent row, detail = key=value pairs (FormatUsage):
//	                 session, model, turns, input_tokens, output_tokens,
//	                 cache_read_tokens, cost_usd, and priced when agent.prices
//	                 priced the tokens (the entry that did)
//	judge            an attempt at issue_id judged by its own tests against the
//	                 baseline: outcome pass|fail, detail = key=value pairs
//	                 (ParseJudged): fixed=N, the tests failing on the baseline
//	                 that pass now; regressions=M, the tests that passed on the
//	                 baseline and fail now
//
// Unknown event names are counted and otherwise ignored, so writers can add events
// before the report knows them.
//
// # Writing and reading
//
// AppendHistory adds rows with one write and an fsync. Compute streams rows in
// bounded memory and skips rows it cannot parse, counting them and reporting the
// first of them with their line numbers, so that one damaged row never hides the
// report.
//
// # The report
//
// Compute reduces a history to Metrics in one pass and bounded memory; Render draws
// them as a self-contained page with go-echarts charts and plain tables; Generate does
// both from histories to a file, atomically.
//
// # Several machines
//
// Machines that share a queue each append to a history.csv of their own (no two
// write one file). ComputeAll reads their histories (each a Source) as one: their
// rows merged in time order, a row held by several counted once (see ComputeAll for
// when two rows are one), what each gave in Metrics.Sources.
//
// # API
//
// All of its exported names are API: the history (Event and the names of its events,
// outcomes and details, TimeFormat, ValidID, AppendHistory, Usage
// with ParseUsage and FormatUsage for usage rows, and Judged with
// ParseJudged, CountJudged and CountJudgedFile for judge rows) and the report (Compute, Metrics
// and the types of its fields, Render with RenderOptions, ComputeAll and Generate
// with Source). The module is
// at v0: the API follows history.csv and analytics.html and changes with them.
package analytics
