package agentcli

// Cursor is the profile of Cursor's agent CLI, and the agent of its hooks.
const Cursor = "cursor"

// UsageCursorJSON is cursor-agent's --output-format json: one result
// object, as Claude Code's.
const UsageCursorJSON = "cursor-json"

var cursor = Profile{
	Name:        Cursor,
	Command:     `cursor-agent -p --output-format json --trust --force "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
	Resume:      `cursor-agent -p --output-format json --trust --force --resume "$ORCHESTRATE_SESSION_ID" "$(cat "$ORCHESTRATE_PROMPT_FILE")"`,
	Review:      `cursor-agent -p --trust "$ORCHESTRATE_REVIEW_PROMPT"`,
	Session:     SessionReported,
	Usage:       UsageCursorJSON,
	Permissions: "applies its file changes and runs commands unless .cursor/cli.json denies them (--force); narrow it with deny rules there",
	Program:     "cursor-agent",
	Install:     "curl https://cursor.com/install -fsS | bash",
	Hooks:       &Hooks{Path: ".cursor/hooks.json", Flat: true, StartEvent: "sessionStart", StopEvent: "stop", LoopLimit: true},
	projectDirs: []string{"CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"},
}

// cursorOutput is a stop hook's answer as Cursor reads it.
type cursorOutput struct {
	FollowupMessage string `json:"followup_message,omitempty"`
}

// cursorAnswer is a hook's answer as Cursor reads it: a block is a
// follow-up message; anything else an empty object, the message for the
// person on stderr.
func cursorAnswer(out HookOutput) (v cursorOutput, stderr string) {
	if out.Decision == "block" {
		v.FollowupMessage = out.Reason
	} else {
		stderr = out.SystemMessage
	}
	return v, stderr
}
