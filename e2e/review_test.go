package e2e

import (
	"os"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// Each profile's review_command, run for real by a review gate: a reviewer
// whose model tries to write files cannot; the files never appear.

// writingReviewer is a reviewer that tries to write, through each tool it
// is given a script for, then finds nothing.
func writingReviewer(tools ...tool) route {
	return route{"You are reviewing a change", func(c *conv) turn {
		if c.calls() == 0 {
			return turn{Text: "Let me fix it myself.", Tools: tools}
		}
		return say("no findings")
	}}
}

// reviewCannotWrite runs profile's review_command as a review gate
// (orchestrate gate) on a change, and reports the reviewer's conversation.
func reviewCannotWrite(t *testing.T, a agentCLI, profile string, tools []tool, written ...string) {
	prof, ok := agentcli.Lookup(profile)
	if !ok || prof.Review == "" {
		t.Fatalf("profile %s has no review_command", profile)
	}
	m := newModel(t, writingReviewer(tools...), route{"SUBAGENT", func(c *conv) turn {
		if c.answered() {
			return say("done")
		}
		return turn{Tools: []tool{write("subagent.txt", "written by a reviewer's subagent\n")}}
	}})
	p := newAgentProject(t, m, a, stepsProject)
	p.mustOrchestrate("init", "--agent", profile)
	p.config("agent:\n  profile: " + profile + "\ngates:\n  - name: review\n    type: review\n    command: '" + strings.ReplaceAll(prof.Review, "'", "''") + "'\n")
	p.git("add", "-A")
	p.git("commit", "-qm", "orchestrate")
	if a == codexCLI {
		p.trustCodexProject()
	}
	p.write("state.txt", "fixed=2\n")

	out, code := p.orchestrate("gate")
	revs := m.requests("You are reviewing a change")
	if len(revs) == 0 {
		t.Fatalf("no reviewer asked the model; orchestrate gate: exit %d\n%s\n%s", code, out, m.dump(1500))
	}
	var answered bool
	for _, c := range revs {
		if c.answered() {
			answered = true
			t.Logf("what the reviewer's write attempts got back:\n%s", tail(c.last(), 1500))
		}
	}
	if !answered {
		t.Errorf("the reviewer's tool calls never came back (orchestrate gate: exit %d)\n%s", code, out)
	}
	for _, f := range written {
		if _, err := os.Stat(p.path(f)); err == nil {
			t.Errorf("the %s reviewer (%s) wrote %s", profile, prof.Review, f)
		}
	}
	if st := strings.TrimSpace(p.git("status", "--porcelain", "--", ".", ":!.orchestrator")); st != "M state.txt" {
		t.Errorf("git status after the review: %q; want only the change under review", st)
	}
}

// codex exec --sandbox read-only: its shell tool runs in a sandbox that
// writes nowhere.
func TestCodexReviewerCannotWrite(t *testing.T) {
	reviewCannotWrite(t, codexCLI, agentcli.Codex,
		[]tool{write("reviewer.txt", "written by a reviewer\n"), bash("echo x > reviewer2.txt")},
		"reviewer.txt", "reviewer2.txt")
}

// opencode run --agent plan: the plan agent denies edits (and the general
// subagent), but not its shell: with --agent plan alone, opencode 1.18.33's
// reviewer wrote reviewer.txt through bash. The profile's reviewer denies
// bash and task too, in OPENCODE_CONFIG_CONTENT.
func TestOpencodeReviewerCannotWrite(t *testing.T) {
	reviewCannotWrite(t, opencodeCLI, agentcli.Opencode,
		[]tool{write("reviewer.txt", "written by a reviewer\n"), {"write", map[string]any{"filePath": "reviewer2.txt", "content": "x\n"}},
			{"edit", map[string]any{"filePath": "state.txt", "oldString": "fixed=2", "newString": "fixed=3"}},
			{"task", map[string]any{"description": "write a file", "prompt": "SUBAGENT: write subagent.txt", "subagent_type": "general"}}},
		"reviewer.txt", "reviewer2.txt", "subagent.txt")
}

// gemini --approval-mode plan: no edits, no shell.
func TestGeminiReviewerCannotWrite(t *testing.T) {
	reviewCannotWrite(t, geminiCLI, agentcli.Gemini,
		[]tool{write("reviewer.txt", "written by a reviewer\n"), bash("echo x > reviewer2.txt"),
			{"replace", map[string]any{"file_path": "state.txt", "instruction": "say fixed=3", "old_string": "fixed=2", "new_string": "fixed=3"}}},
		"reviewer.txt", "reviewer2.txt")
}
