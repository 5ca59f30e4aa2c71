package loop

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

func TestSessionKey(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"", "(none)"},
		{"b1c2d3e4-0000-4000-8000-123456789abc", "b1c2d3e4-0000-4000-8000-123456789abc"},
		{"a|b", "sha256:"},    // a pipe, hashed
		{"(none)", "sha256:"}, // no real ID becomes the empty one's key
		{strings.Repeat("a", 129), "sha256:"},
	} {
		got := SessionKey(tc.id)
		if tc.want == "sha256:" {
			if !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+16 {
				t.Errorf("SessionKey(%q) = %q; want a sha256: key", tc.id, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("SessionKey(%q) = %q; want %q", tc.id, got, tc.want)
		}
	}
	if SessionKey("a|b") == SessionKey("a b") {
		t.Errorf("SessionKey(%q) = SessionKey(%q); want them apart", "a|b", "a b")
	}
}
