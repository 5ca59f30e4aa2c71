// Package e2e holds the end-to-end tests that drive the real agent CLIs from
// npm (Claude Code, Codex CLI, opencode, Gemini CLI) against scripted stand-ins
// for their model APIs on 127.0.0.1 (Anthropic Messages, OpenAI Responses,
// OpenAI Chat Completions, Gemini), with orchestrate's own binary as the agent's Stop
// hook, as orchestrate run, and as the review gate.
//
// The tests find each CLI through ORCHESTRATE_CLAUDE, ORCHESTRATE_CODEX,
// ORCHESTRATE_OPENCODE or ORCHESTRATE_GEMINI (a path), then the copy .ci/run
// installs in .cache/, then PATH. Without it they skip, unless
// ORCHESTRATE_REQUIRE_CLAUDE=1 (and so on, as CI sets) makes that a failure.
// The plugin's load test runs on the oldest Claude Code its docs claim too,
// found only through ORCHESTRATE_CLAUDE_OLDEST or .ci/run's copy.
//
// The tests of realprojects_test.go run orchestrate with a script agent on
// real projects vendored in testdata/projects (Go, Python under pytest,
// TypeScript under vitest), each with bugs written as patches; the Python
// and JavaScript ones skip without their runner, unless
// ORCHESTRATE_REQUIRE_PYTEST=1 or ORCHESTRATE_REQUIRE_VITEST=1.
package e2e
