package main

import (
	"fmt"

	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/prompts"
)

var promptCmd = &command{
	name:    "prompt",
	summary: "print a bundled prompt or slash-command template",
	usage: `Usage: orchestrate prompt [NAME] [--json]

Prints the template NAME as orchestrate uses it: your version in
.orchestrator/prompts/NAME when there is one, the bundled one if not. With
no NAME, lists the bundled templates.

  agent.md                 the first prompt of orchestrate run
  continuation.md          a fresh agent continuing the work (seed 003)
  resume.md                the same agent, resumed, with the feedback
  feedback.md              the quality gates' feedback
  testing_agent.md         for a QA agent: when and how to file an issue
  commands/orchestrate.md  the /orchestrate slash command for Claude Code

To change one, copy it and edit the copy:
  mkdir -p .orchestrator/prompts
  orchestrate prompt feedback > .orchestrator/prompts/feedback.md

Examples:
  orchestrate prompt
  orchestrate prompt commands/orchestrate > .claude/commands/orchestrate.md

Exit codes: 0 printed, 1 error (no such template), 2 usage.
`,
	run: runPrompt,
}

func runPrompt(e *env, args []string) error {
	fs := e.flags("prompt")
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
		names := prompts.Names()
		if e.json {
			return e.printJSON(map[string]any{"prompts": names})
		}
		for _, n := range names {
			fmt.Fprintln(e.stdout, n)
		}
		return nil
	case 1:
	default:
		return usageError("prompt", "prompt takes one name, got %d", len(pos))
	}
	text, err := prompts.Load(e.ws().Path(loop.PromptsDir), pos[0])
	if err != nil {
		return err
	}
	if e.json {
		return e.printJSON(map[string]any{"name": pos[0], "text": text})
	}
	_, err = fmt.Fprint(e.stdout, text)
	return err
}
