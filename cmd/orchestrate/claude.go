package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/prompts"
)

// stopHookCommand is the command of the Stop hook init --claude installs.
const stopHookCommand = "orchestrate hook stop"

// claudeSetup is what init --claude writes, planned before anything is:
// the slash command unless it is there, settings.json when the hook is not.
type claudeSetup struct {
	commandPath  string
	command      []byte // nil: keep the file there
	settingsPath string
	settings     []byte // nil: the hook is there already
}

// planClaude plans the Claude Code setup of the workspace's repository; a
// settings.json it cannot merge with is an error, and nothing is written.
func planClaude(ws loop.Workspace) (*claudeSetup, error) {
	dir := filepath.Join(ws.Root(), ".claude")
	s := &claudeSetup{
		commandPath:  filepath.Join(dir, "commands", "orchestrate.md"),
		settingsPath: filepath.Join(dir, "settings.json"),
	}
	if _, err := os.Stat(s.commandPath); errors.Is(err, fs.ErrNotExist) {
		text, err := prompts.Load(ws.Path(loop.PromptsDir), "commands/orchestrate.md")
		if err != nil {
			return nil, err
		}
		s.command = []byte(text)
	} else if err != nil {
		return nil, err
	}
	old, exists, err := fsx.ReadFile(s.settingsPath)
	if err != nil {
		return nil, err
	}
	if !exists {
		old = []byte("{}")
	}
	merged, changed, err := mergeStopHook(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %v; fix it, or add the hook by hand (see orchestrate help hook)", s.settingsPath, err)
	}
	if changed {
		s.settings = merged
	}
	return s, nil
}

// apply writes what was planned.
func (s *claudeSetup) apply() (written, kept []string, err error) {
	for _, f := range []struct {
		path string
		data []byte
	}{{s.commandPath, s.command}, {s.settingsPath, s.settings}} {
		if f.data == nil {
			kept = append(kept, f.path)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return written, kept, err
		}
		if err := fsx.WriteFile(f.path, f.data, 0o644); err != nil {
			return written, kept, err
		}
		written = append(written, f.path)
	}
	return written, kept, nil
}

// member is a key of a JSON object with its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// mergeStopHook adds our Stop hook to a Claude Code settings file, keeping
// every other key and hook in its order; changed is false when a Stop hook
// running orchestrate hook stop is there already.
func mergeStopHook(data []byte) (out []byte, changed bool, err error) {
	top, err := objectMembers(data)
	if err != nil {
		return nil, false, err
	}
	hooksAt := memberIndex(top, "hooks")
	var hooks []member
	if hooksAt >= 0 {
		if hooks, err = objectMembers(top[hooksAt].value); err != nil {
			return nil, false, fmt.Errorf("hooks: %v", err)
		}
	}
	stopAt := memberIndex(hooks, "Stop")
	var stop []json.RawMessage
	if stopAt >= 0 {
		v := bytes.TrimSpace(hooks[stopAt].value)
		if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &stop) != nil {
			return nil, false, errors.New("hooks.Stop is not an array")
		}
	}
	for _, entry := range stop {
		var e struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(entry, &e) != nil {
			continue
		}
		for _, h := range e.Hooks {
			if isStopHook(h.Command) {
				return data, false, nil
			}
		}
	}
	type hook struct {
		Type    string `json:"type"`
		Command string `json:"command"`
	}
	ours, _ := json.Marshal(struct {
		Hooks []hook `json:"hooks"`
	}{[]hook{{"command", stopHookCommand}}})
	stopValue, err := json.Marshal(append(stop, ours))
	if err != nil {
		return nil, false, err
	}
	hooks = setMember(hooks, stopAt, "Stop", stopValue)
	top = setMember(top, hooksAt, "hooks", encodeObject(hooks))
	var b bytes.Buffer
	if err := json.Indent(&b, encodeObject(top), "", "  "); err != nil {
		return nil, false, err
	}
	b.WriteByte('\n')
	return b.Bytes(), true, nil
}

// isStopHook reports whether a hook command runs orchestrate hook stop.
func isStopHook(command string) bool {
	f := strings.Fields(command)
	return len(f) >= 3 && filepath.Base(f[0]) == "orchestrate" && f[1] == "hook" && f[2] == "stop"
}

// objectMembers returns the members of a JSON object, in order.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		key := t.(string)
		if memberIndex(out, key) >= 0 {
			return nil, fmt.Errorf("the key %q comes twice", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("invalid JSON: %v", err)
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: more after the object")
	}
	return out, nil
}

func memberIndex(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}

// setMember changes the member at i, or appends one when i < 0.
func setMember(ms []member, i int, key string, v json.RawMessage) []member {
	if i < 0 {
		return append(ms, member{key, v})
	}
	ms[i].value = v
	return ms
}

func encodeObject(ms []member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}
