// Package jsonsettings merges orchestrate's hooks into an agent's JSON
// settings file (Claude Code's .claude/settings.json, Codex's and Cursor's
// hooks.json, Gemini CLI's settings.json): every other key and hook stays,
// in its order, and a file that already has them is left byte for byte.
package jsonsettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
)

// Hook is one hook to install: its event, the orchestrate hook
// subcommand it runs (Sub) and its command line, and the numbers its
// entry needs at least (timeout, loop_limit).
type Hook struct {
	Event   string
	Sub     string
	Command string
	Nums    []Number
}

// Number is a numeric member a hook's entry needs at least: Key (timeout,
// loop_limit) of at least Min; none is written when Min is 0 or less.
type Number struct {
	Key string
	Min int
}

// member is a key of a JSON object with its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// MergeHooks adds hooks to an agent's hooks file: hooks.EVENT is a list of
// groups, {"hooks": [{"type": "command", "command": …}]} (Claude Code,
// Codex, Gemini CLI), or with flat, a list of hooks, {"command": …}, in a
// file with "version": 1 (Cursor). A hook running the same orchestrate
// hook subcommand, whatever the path to orchestrate, is ours already; its
// numbers are raised to the ones wanted. changed is false when nothing had
// to be.
func MergeHooks(data []byte, flat bool, specs []Hook) (out []byte, changed bool, err error) {
	top, err := objectMembers(data)
	if err != nil {
		return nil, false, err
	}
	if flat && memberIndex(top, "version") < 0 {
		top = append([]member{{"version", json.RawMessage("1")}}, top...)
		changed = true
	}
	hooksAt := memberIndex(top, "hooks")
	var hooks []member
	if hooksAt >= 0 {
		if hooks, err = objectMembers(top[hooksAt].value); err != nil {
			return nil, false, fmt.Errorf("hooks: %v", err)
		}
	}
	for _, spec := range specs {
		var c bool
		if hooks, c, err = mergeEvent(hooks, flat, spec); err != nil {
			return nil, false, err
		}
		changed = changed || c
	}
	if !changed {
		return data, false, nil
	}
	top = setMember(top, hooksAt, "hooks", encodeObject(hooks))
	var b bytes.Buffer
	if err := json.Indent(&b, encodeObject(top), "", "  "); err != nil {
		return nil, false, err
	}
	b.WriteByte('\n')
	return b.Bytes(), true, nil
}

// mergeEvent adds the hook to the list of its event in hooks, or raises
// the numbers of ours found there.
func mergeEvent(hooks []member, flat bool, spec Hook) ([]member, bool, error) {
	at := memberIndex(hooks, spec.Event)
	var list []json.RawMessage
	if at >= 0 {
		v := bytes.TrimSpace(hooks[at].value)
		if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &list) != nil {
			return nil, false, fmt.Errorf("hooks.%s is not an array", spec.Event)
		}
	}
	found, changed := false, false
	for i, entry := range list {
		var f, c bool
		if flat {
			entry, f, c = raiseOurs(entry, spec)
		} else {
			entry, f, c = raiseInGroup(entry, spec)
		}
		list[i] = entry
		found, changed = found || f, changed || c
	}
	if !found {
		list = append(list, newEntry(flat, spec))
		changed = true
	}
	if !changed {
		return hooks, false, nil
	}
	value, err := json.Marshal(list)
	if err != nil {
		return nil, false, err
	}
	return setMember(hooks, at, spec.Event, value), true, nil
}

// newEntry is the hook's entry in its event's list: a group of one hook,
// or with flat the hook itself.
func newEntry(flat bool, spec Hook) json.RawMessage {
	ours := []member{}
	if !flat {
		ours = append(ours, member{"type", json.RawMessage(`"command"`)})
	}
	cmd, _ := json.Marshal(spec.Command)
	ours = append(ours, member{"command", cmd})
	for _, n := range spec.Nums {
		if n.Min > 0 {
			ours = append(ours, member{n.Key, json.RawMessage(fmt.Sprint(n.Min))})
		}
	}
	entry := encodeObject(ours)
	if !flat {
		entry = encodeObject([]member{{"hooks", json.RawMessage("[" + string(entry) + "]")}})
	}
	return entry
}

// raiseInGroup looks for our hook in a group's hooks list.
func raiseInGroup(group json.RawMessage, spec Hook) (json.RawMessage, bool, bool) {
	ms, err := objectMembers(group)
	if err != nil {
		return group, false, false
	}
	at := memberIndex(ms, "hooks")
	if at < 0 {
		return group, false, false
	}
	var list []json.RawMessage
	if json.Unmarshal(ms[at].value, &list) != nil {
		return group, false, false
	}
	found, changed := false, false
	for i, h := range list {
		var f, c bool
		list[i], f, c = raiseOurs(h, spec)
		found, changed = found || f, changed || c
	}
	if !changed {
		return group, found, false
	}
	value, _ := json.Marshal(list)
	ms[at].value = value
	return encodeObject(ms), found, true
}

// raiseOurs reports whether a hook object is ours, and raises its numbers
// to the wanted ones when they are smaller or missing.
func raiseOurs(h json.RawMessage, spec Hook) (json.RawMessage, bool, bool) {
	ms, err := objectMembers(h)
	if err != nil {
		return h, false, false
	}
	at := memberIndex(ms, "command")
	var command string
	if at < 0 || json.Unmarshal(ms[at].value, &command) != nil || !isOurHook(command, spec.Sub) {
		return h, false, false
	}
	changed := false
	for _, n := range spec.Nums {
		if n.Min <= 0 {
			continue
		}
		i := memberIndex(ms, n.Key)
		var have float64
		if i >= 0 && json.Unmarshal(ms[i].value, &have) == nil && have >= float64(n.Min) {
			continue
		}
		ms = setMember(ms, i, n.Key, json.RawMessage(fmt.Sprint(n.Min)))
		changed = true
	}
	if !changed {
		return h, true, false
	}
	return encodeObject(ms), true, true
}

// isOurHook reports whether a hook command runs orchestrate hook SUB.
func isOurHook(command, sub string) bool {
	f := strings.Fields(command)
	return len(f) >= 3 && filepath.Base(strings.Trim(f[0], `"'`)) == "orchestrate" && f[1] == "hook" && f[2] == sub
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

// Found is an orchestrate hook found in a hooks file: its event, the
// hook subcommand it runs, its command line and its timeout (0: none set).
type Found struct {
	Event   string
	Sub     string
	Command string
	Timeout float64
}

// FindHooks lists the orchestrate hooks of an agent's hooks file, in
// either shape MergeHooks writes (groups of hooks, or with flat, hooks).
func FindHooks(data []byte, flat bool) ([]Found, error) {
	var file struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	type hook struct {
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
	}
	var found []Found
	add := func(event string, h hook) {
		for _, sub := range []string{"stop", "session-start"} {
			if isOurHook(h.Command, sub) {
				found = append(found, Found{Event: event, Sub: sub, Command: h.Command, Timeout: h.Timeout})
			}
		}
	}
	for event, entries := range file.Hooks {
		for _, e := range entries {
			if flat {
				var h hook
				if json.Unmarshal(e, &h) == nil {
					add(event, h)
				}
				continue
			}
			var g struct {
				Hooks []hook `json:"hooks"`
			}
			if json.Unmarshal(e, &g) == nil {
				for _, h := range g.Hooks {
					add(event, h)
				}
			}
		}
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		return a.Event < b.Event || a.Event == b.Event && a.Command < b.Command
	})
	return found, nil
}
