package agentcli

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadHookInput(t *testing.T) {
	in, err := ReadHookInput(strings.NewReader(`{"session_id":"abc","transcript_path":"/t.jsonl","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":true,"extra":1}`), time.Second)
	want := HookInput{SessionID: "abc", TranscriptPath: "/t.jsonl", Cwd: "/repo", HookEventName: "Stop", StopHookActive: true}
	if err != nil || !reflect.DeepEqual(in, want) {
		t.Errorf("ReadHookInput = %+v, %v; want %+v", in, err, want)
	}
	for _, tc := range []struct{ input, err string }{
		{"", "not a JSON object"},
		{"null", "not a JSON object"},
		{`"abc"`, "not a JSON object"},
		{`{"session_id": 3}`, "malformed JSON input"},
		{`{"session_id": "a"`, "malformed JSON input"},
		{`{} {}`, "more after the object"},
		{`{"cwd": "` + strings.Repeat("a", MaxHookInput) + `"}`, "input larger than"},
	} {
		if _, err := ReadHookInput(strings.NewReader(tc.input), time.Second); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ReadHookInput(%.20q) error = %v; want one saying %q", tc.input, err, tc.err)
		}
	}
}

// An input of exactly 1 MiB is read; one byte more is refused (docs/hooks.md:
// "over 1 MiB" is malformed).
func TestReadHookInputMiB(t *testing.T) {
	const mib = 1 << 20
	pad := func(n int) string { // an object of n bytes: {"cwd":"/aaa…"}
		return `{"cwd":"/` + strings.Repeat("a", n-len(`{"cwd":"/"}`)) + `"}`
	}
	in, err := ReadHookInput(strings.NewReader(pad(mib)), time.Second)
	if err != nil || len(in.Cwd) != mib-len(`{"cwd":""}`) {
		t.Errorf("ReadHookInput(1 MiB) = cwd of %d bytes, %v; want it read", len(in.Cwd), err)
	}
	if _, err := ReadHookInput(strings.NewReader(pad(mib+1)), time.Second); err == nil || !strings.Contains(err.Error(), "input larger than") {
		t.Errorf("ReadHookInput(1 MiB + 1) error = %v; want it refused", err)
	}
}

// A stdin that never ends is an error after the timeout, not a hang.
func TestReadHookInputTimeout(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	go w.Write([]byte(`{"session_id": "abc"`))
	start := time.Now()
	_, err := ReadHookInput(r, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "did not end within 50ms") {
		t.Errorf("ReadHookInput(a pipe that never ends) error = %v; want a timeout", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("ReadHookInput took %v to time out after 50ms", took)
	}
}

func TestHookInputAgent(t *testing.T) {
	for _, tc := range []struct {
		in   HookInput
		want string
	}{
		{HookInput{HookEventName: "Stop"}, Claude},
		{HookInput{HookEventName: "SessionStart"}, Claude},
		{HookInput{HookEventName: "Stop", TurnID: "t"}, Codex},
		{HookInput{HookEventName: "AfterAgent"}, Gemini},
		{HookInput{HookEventName: "SessionStart", Timestamp: "2026-01-28T10:00:00Z"}, Gemini},
		{HookInput{HookEventName: "stop"}, Cursor},
		{HookInput{HookEventName: "sessionStart"}, Cursor},
		{HookInput{ConversationID: "c"}, Cursor},
	} {
		if got := tc.in.Agent(); got != tc.want {
			t.Errorf("%+v.Agent() = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestHookAnswer(t *testing.T) {
	block := HookOutput{Decision: "block", Reason: "fix <it>"}
	say := HookOutput{SystemMessage: "done"}
	for _, tc := range []struct {
		agent      string
		out        HookOutput
		want, errs string
	}{
		{Claude, block, `{"decision":"block","reason":"fix <it>"}` + "\n", ""},
		{Claude, say, `{"systemMessage":"done"}` + "\n", ""},
		{Claude, HookOutput{}, "", ""},
		{Codex, block, `{"decision":"block","reason":"fix <it>"}` + "\n", ""},
		{Codex, HookOutput{}, "", ""},
		{Gemini, block, `{"decision":"deny","reason":"fix <it>"}` + "\n", ""},
		{Gemini, say, `{"systemMessage":"done"}` + "\n", ""},
		{Gemini, HookOutput{}, "{}\n", ""},
		{Cursor, block, `{"followup_message":"fix <it>"}` + "\n", ""},
		{Cursor, say, "{}\n", "done"},
		{Cursor, HookOutput{}, "{}\n", ""},
	} {
		out, errs := HookAnswer(tc.agent, tc.out)
		if string(out) != tc.want || errs != tc.errs {
			t.Errorf("HookAnswer(%s, %+v) = %q, %q; want %q, %q", tc.agent, tc.out, out, errs, tc.want, tc.errs)
		}
	}
}

// A hook's timeout in its file's unit, rounded up, and back; a hook that
// sets none has the CLIs' default.
func TestHooksTimeout(t *testing.T) {
	claudeHooks, geminiHooks := *profiles[Claude].Hooks, *profiles[Gemini].Hooks
	if got := claudeHooks.Units(1500 * time.Millisecond); got != 2 {
		t.Errorf("claude Units(1.5s) = %d; want 2", got)
	}
	if got := geminiHooks.Units(1500 * time.Millisecond); got != 1500 {
		t.Errorf("gemini Units(1.5s) = %d; want 1500", got)
	}
	if got := claudeHooks.Timeout(90); got != 90*time.Second {
		t.Errorf("claude Timeout(90) = %s; want 1m30s", got)
	}
	if got := geminiHooks.Timeout(90); got != 90*time.Millisecond {
		t.Errorf("gemini Timeout(90) = %s; want 90ms", got)
	}
	if got := geminiHooks.Timeout(0); got != DefaultHookTimeout {
		t.Errorf("Timeout(0) = %s; want %s", got, DefaultHookTimeout)
	}
}

// The agents with hooks, in the profiles' order, and where each finds its
// project.
func TestHookAgents(t *testing.T) {
	if got, want := strings.Join(HookAgents, ","), "claude,codex,gemini,cursor"; got != want {
		t.Errorf("HookAgents = %s; want %s", got, want)
	}
	for agent, want := range map[string]string{Claude: "CLAUDE_PROJECT_DIR", Codex: "CLAUDE_PROJECT_DIR",
		Gemini: "GEMINI_PROJECT_DIR,CLAUDE_PROJECT_DIR", Cursor: "CURSOR_PROJECT_DIR,CLAUDE_PROJECT_DIR"} {
		if got := strings.Join(ProjectDirEnv(agent), ","); got != want {
			t.Errorf("ProjectDirEnv(%s) = %s; want %s", agent, got, want)
		}
	}
}
