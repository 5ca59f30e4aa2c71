package agentcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// Hooks is how an agent keeps its hooks: the file, its shape, the events
// of a session's start and of its stop, and the unit of a hook's timeout.
type Hooks struct {
	Path       string // relative to the repository, and to the home directory for the user's
	Local      string // a second file of the repository's that can hold them (Claude Code's local settings); "" none
	Flat       bool   // Cursor: hooks.EVENT is a list of hooks, not of groups of them
	StartEvent string
	StopEvent  string
	Millis     bool   // the timeout in milliseconds (Gemini CLI), not seconds
	LoopLimit  bool   // Cursor: loop_limit bounds the follow-ups of a stop
	Note       string // what init says of them beside the timeout
	// SlashCommand is where init installs the /orchestrate slash command,
	// relative to the repository; "" for a CLI that has none.
	SlashCommand string
}

// DefaultHookTimeout is the timeout of a hook that sets none (Claude
// Code's, Codex's and Gemini CLI's default).
const DefaultHookTimeout = 60 * time.Second

// Units is a duration in the hooks file's unit, rounded up.
func (h Hooks) Units(d time.Duration) int {
	if h.Millis {
		return int(math.Ceil(float64(d) / float64(time.Millisecond)))
	}
	return int(math.Ceil(d.Seconds()))
}

// Timeout is a hook's timeout as its file gives it (n in the file's unit;
// 0 or less when it gives none).
func (h Hooks) Timeout(n float64) time.Duration {
	if n <= 0 {
		return DefaultHookTimeout
	}
	unit := time.Second
	if h.Millis {
		unit = time.Millisecond
	}
	return time.Duration(n * float64(unit))
}

// HookAgents lists the agents whose hooks orchestrate hook answers, each
// in its protocol: the profiles with hooks.
var HookAgents = hookAgents()

func hookAgents() []string {
	var out []string
	for _, n := range Profiles {
		if profiles[n].Hooks != nil {
			out = append(out, n)
		}
	}
	return out
}

// ProjectDirEnv lists, for an agent, the environment variables that name
// its project's root in a hook's environment, its own first.
func ProjectDirEnv(agent string) []string {
	if p, ok := profiles[agent]; ok && p.projectDirs != nil {
		return p.projectDirs
	}
	return claude.projectDirs
}

// SettingsFiles are the settings files of an agent that can hold its
// hooks, for a session in repo: Gemini CLI's project and user
// settings.json, or Claude Code's (claudeSettings).
func SettingsFiles(agent, repo, home string) []string {
	if agent != Gemini {
		return claudeSettings(repo, home)
	}
	return geminiSettings(repo, home)
}

// HookInput is the JSON object an agent gives its hook on stdin: Claude
// Code's and Codex's Stop and SessionStart, Gemini CLI's AfterAgent and
// SessionStart, Cursor's stop and sessionStart. The fields one agent does
// not send stay empty.
type HookInput struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	StopHookActive bool   `json:"stop_hook_active"`
	Source         string `json:"source"`    // SessionStart: startup, resume, clear, compact
	TurnID         string `json:"turn_id"`   // Codex
	Timestamp      string `json:"timestamp"` // Gemini CLI

	// Cursor: the conversation is its session; cwd is the first workspace
	// root; status is completed, aborted or error.
	ConversationID string   `json:"conversation_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	Status         string   `json:"status"`
	LoopCount      int      `json:"loop_count"`
}

// Agent names the agent that sent the input, by its event name and the
// fields only it sends: Gemini CLI's AfterAgent, Cursor's lower-case
// events and conversation_id, Codex's turn_id; Claude Code otherwise.
func (in HookInput) Agent() string {
	switch {
	case in.HookEventName == "AfterAgent":
		return Gemini
	case in.HookEventName == "stop" || in.HookEventName == "sessionStart" || in.ConversationID != "" || len(in.WorkspaceRoots) > 0:
		return Cursor
	case in.TurnID != "":
		return Codex
	case in.Timestamp != "" && in.HookEventName == "SessionStart":
		return Gemini
	}
	return Claude
}

// IsStop reports whether the input is an agent's stop event (or names no
// event at all).
func (in HookInput) IsStop() bool {
	switch in.HookEventName {
	case "", "Stop", "SubagentStop", "AfterAgent", "stop":
		return true
	}
	return false
}

// IsSessionStart reports whether the input is an agent's session start (or
// names no event at all).
func (in HookInput) IsSessionStart() bool {
	switch in.HookEventName {
	case "", "SessionStart", "sessionStart":
		return true
	}
	return false
}

// Session returns the agent's session ID: Cursor's conversation_id (its
// stop has no other), or session_id.
func (in HookInput) Session() string {
	if in.ConversationID != "" {
		return in.ConversationID
	}
	return in.SessionID
}

// Dir returns the directory the agent works in: cwd, or Cursor's first
// workspace root.
func (in HookInput) Dir() string {
	if in.Cwd != "" || len(in.WorkspaceRoots) == 0 {
		return in.Cwd
	}
	return in.WorkspaceRoots[0]
}

// Limits on a Stop hook's input: it is a small JSON object, and a hook
// must never hang on a stdin that does not end.
const (
	MaxHookInput     = 1 << 20
	HookInputTimeout = 10 * time.Second
)

// ReadHookInput reads and parses a Stop hook's input: at most MaxHookInput
// bytes, ending within timeout.
func ReadHookInput(r io.Reader, timeout time.Duration) (HookInput, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() {
		data, err := io.ReadAll(io.LimitReader(r, MaxHookInput+1))
		done <- read{data, err}
	}()
	var got read
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case got = <-done:
	case <-t.C:
		return HookInput{}, fmt.Errorf("stdin did not end within %s", timeout)
	}
	if got.err != nil {
		return HookInput{}, fmt.Errorf("reading stdin: %w", got.err)
	}
	if len(got.data) > MaxHookInput {
		return HookInput{}, fmt.Errorf("input larger than %d bytes", MaxHookInput)
	}
	data := bytes.TrimSpace(got.data)
	if len(data) == 0 || data[0] != '{' {
		return HookInput{}, fmt.Errorf("input is not a JSON object")
	}
	var in HookInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return HookInput{}, fmt.Errorf("malformed JSON input: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return HookInput{}, fmt.Errorf("malformed JSON input: more after the object")
	}
	return in, nil
}

// HookOutput is a Stop hook's answer as Claude Code and Codex read it on
// stdout. Decision "block" keeps the agent working, with Reason as its
// next instruction; otherwise the agent may stop, and SystemMessage, if
// any, is shown to the person.
type HookOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

// HookAnswer renders a hook's decision in an agent's protocol: what to
// print on stdout (nil: nothing) and what on stderr ("" nothing).
//
//	claude, codex  block: {"decision":"block","reason":…}; else {"systemMessage":…} or nothing
//	gemini         block: {"decision":"deny","reason":…};  else {"systemMessage":…} or {}
//	cursor         block: {"followup_message":…};          else {}, the message on stderr
func HookAnswer(agent string, out HookOutput) (stdout []byte, stderr string) {
	var v any = out
	switch agent {
	case Gemini:
		v = geminiAnswer(out)
	case Cursor:
		v, stderr = cursorAnswer(out)
	default:
		if out == (HookOutput{}) {
			return nil, ""
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings only: it cannot fail
	return b.Bytes(), stderr
}
