// Package e2e holds the end-to-end tests that drive the real Claude Code CLI
// (the npm package @anthropic-ai/claude-code) against a scripted stand-in for
// the Anthropic Messages API on 127.0.0.1, with orchestrate's own binary as the
// agent's Stop hook, as orchestrate run, and as the review gate.
//
// The tests find the CLI through ORCHESTRATE_CLAUDE (a path), then PATH. Without
// it they skip, unless ORCHESTRATE_REQUIRE_CLAUDE=1 (as CI sets) makes that a
// failure.
package e2e
