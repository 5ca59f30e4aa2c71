package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/prompts"
)

// hookFile is how an agent keeps its hooks: the file, its shape, the
// events of a session's start and of its stop, and the unit of a hook's
// timeout.
type hookFile struct {
	path       string // relative to the repository
	flat       bool   // Cursor: hooks.EVENT is a list of hooks, not of groups of them
	startEvent string
	stopEvent  string
	millis     bool // the timeout in milliseconds (Gemini CLI), not seconds
	loopLimit  bool // Cursor: loop_limit bounds the follow-ups of a stop
	note       string
}

var hookFiles = map[string]hookFile{
	loop.AgentClaude: {path: ".claude/settings.json", startEvent: "SessionStart", stopEvent: "Stop"},
	loop.AgentCodex: {path: ".codex/hooks.json", startEvent: "SessionStart", stopEvent: "Stop",
		note: "codex runs a project's hooks once you trust them: /hooks in codex"},
	loop.AgentGemini: {path: ".gemini/settings.json", startEvent: "SessionStart", stopEvent: "AfterAgent", millis: true},
	loop.AgentCursor: {path: ".cursor/hooks.json", flat: true, startEvent: "sessionStart", stopEvent: "stop", loopLimit: true},
}

// hookCommand is the command of an agent's hook: hook stop or hook
// session-start, with --agent but for Claude Code's.
func hookCommand(agent, sub string) string {
	c := "orchestrate hook " + sub
	if agent != loop.AgentClaude {
		c += " --agent " + agent
	}
	return c
}

// sessionStartTimeout bounds the session-start hook: a git add of the tree
// into a copy of the index.
const sessionStartTimeout = 60 * time.Second

// hookMargin is the stop hook's time beyond its gates: git, the lock, the
// queue.
const hookMargin = 60 * time.Second

// gatesTimeout is how long the gates can take, by their timeouts: the
// serial ones one after another, then the parallel phase (the longest, or
// with more gates than slots, their sum over the slots plus the longest,
// which bounds any order they run in). Human gates take none of it.
func gatesTimeout(cfg *config.Config) time.Duration {
	var serial, sum, longest time.Duration
	n := 0
	for _, g := range cfg.Gates {
		if g.IsHuman() {
			continue
		}
		t := g.Timeout
		if t <= 0 { // config refuses it; were it there, it would be the default
			t = config.DefaultGateTimeout
		}
		if g.Serial {
			serial += t
			continue
		}
		n++
		sum += t
		longest = max(longest, t)
	}
	slots := cfg.Parallelism
	if slots <= 0 {
		slots = runtime.NumCPU()
	}
	parallel := longest
	if n > slots {
		parallel = sum/time.Duration(slots) + longest
	}
	return serial + parallel
}

// agentSetup is what init --agent NAME writes for one agent, planned before
// anything is: the slash command (Claude Code) unless it is there, and the
// hooks file when the hooks are not there as they should be.
type agentSetup struct {
	agent    string
	file     hookFile
	repo     string
	old      []byte // the hooks file as it is ("{}" when there is none)
	files    []plannedFile
	timeout  time.Duration // the stop hook's
	warnings []string
}

type plannedFile struct {
	path string
	data []byte // nil: keep the file there
}

// planAgent plans an agent's setup in the workspace's repository; a hooks
// file it cannot merge with is an error, and nothing is written.
func planAgent(ws loop.Workspace, agent string) (*agentSetup, error) {
	hf, ok := hookFiles[agent]
	if !ok {
		return nil, fmt.Errorf("no such agent %q", agent)
	}
	s := &agentSetup{agent: agent, file: hf, repo: ws.Root()}
	if agent == loop.AgentClaude {
		p := filepath.Join(s.repo, ".claude", "commands", "orchestrate.md")
		f := plannedFile{path: p}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			text, err := prompts.Load(ws.Path(loop.PromptsDir), "commands/orchestrate.md")
			if err != nil {
				return nil, err
			}
			f.data = []byte(text)
		} else if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	old, exists, err := fsx.ReadFile(s.settingsPath())
	if err != nil {
		return nil, err
	}
	if !exists {
		old = []byte("{}")
	}
	s.old = old
	// The timeout is the config's, once init wrote it: this merge only
	// finds what is wrong with the file.
	if _, _, err := s.merge(0, 0); err != nil {
		return nil, fmt.Errorf("%s: %v; fix it, or add the hook by hand (see orchestrate help hook)", s.settingsPath(), err)
	}
	return s, nil
}

func (s *agentSetup) settingsPath() string {
	return filepath.Join(s.repo, filepath.FromSlash(s.file.path))
}

// finish works out the stop hook's timeout from the workspace's config
// and the hooks file's content.
func (s *agentSetup) finish(ws loop.Workspace) error {
	cfg, err := ws.Config()
	loopLimit := 0
	if err != nil {
		s.timeout = config.DefaultGateTimeout + hookMargin
		s.warnings = append(s.warnings, fmt.Sprintf("%v: the %s hook's timeout is %s", err, s.agent, s.timeout))
	} else {
		s.timeout = gatesTimeout(cfg) + hookMargin
		for _, g := range cfg.Gates {
			loopLimit = max(loopLimit, cfg.GateMaxRetries(g))
		}
	}
	if loopLimit == 0 {
		loopLimit = config.DefaultMaxRetries
	}
	data, changed, err := s.merge(s.timeout, loopLimit)
	if err != nil {
		return fmt.Errorf("%s: %v", s.settingsPath(), err)
	}
	f := plannedFile{path: s.settingsPath()}
	if changed {
		f.data = data
	}
	s.files = append(s.files, f)
	return nil
}

// units is a duration in the hooks file's unit, rounded up.
func (s *agentSetup) units(d time.Duration) int {
	if s.file.millis {
		return int(math.Ceil(float64(d) / float64(time.Millisecond)))
	}
	return int(math.Ceil(d.Seconds()))
}

// merge adds the agent's two hooks to its hooks file, keeping every other
// key and hook in its order; a hook of ours that is there already gets
// the timeout (and Cursor's loop_limit) if its own is smaller or missing.
func (s *agentSetup) merge(timeout time.Duration, loopLimit int) ([]byte, bool, error) {
	stop := hookSpec{event: s.file.stopEvent, sub: "stop", command: hookCommand(s.agent, "stop"),
		nums: []numMember{{"timeout", s.units(timeout)}}}
	if s.file.loopLimit {
		stop.nums = append(stop.nums, numMember{"loop_limit", loopLimit})
	}
	start := hookSpec{event: s.file.startEvent, sub: "session-start", command: hookCommand(s.agent, "session-start"),
		nums: []numMember{{"timeout", s.units(sessionStartTimeout)}}}
	return mergeHooks(s.old, s.file.flat, []hookSpec{start, stop})
}

// apply writes what was planned.
func (s *agentSetup) apply() (written, kept []string, err error) {
	for _, f := range s.files {
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

// hookSpec is one hook to install: its event, the orchestrate hook
// subcommand it runs and its command line, and the numbers its entry
// needs at least (timeout, loop_limit).
type hookSpec struct {
	event   string
	sub     string
	command string
	nums    []numMember
}

type numMember struct {
	key string
	min int
}

// member is a key of a JSON object with its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// mergeHooks adds hooks to an agent's hooks file: hooks.EVENT is a list of
// groups, {"hooks": [{"type": "command", "command": …}]} (Claude Code,
// Codex, Gemini CLI), or with flat, a list of hooks, {"command": …}, in a
// file with "version": 1 (Cursor). A hook running the same orchestrate
// hook subcommand, whatever the path to orchestrate, is ours already; its
// numbers are raised to the ones wanted. changed is false when nothing had
// to be.
func mergeHooks(data []byte, flat bool, specs []hookSpec) (out []byte, changed bool, err error) {
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
		at := memberIndex(hooks, spec.event)
		var list []json.RawMessage
		if at >= 0 {
			v := bytes.TrimSpace(hooks[at].value)
			if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &list) != nil {
				return nil, false, fmt.Errorf("hooks.%s is not an array", spec.event)
			}
		}
		found, listChanged := false, false
		for i, entry := range list {
			var f, c bool
			if flat {
				entry, f, c = raiseOurs(entry, spec)
			} else {
				entry, f, c = raiseInGroup(entry, spec)
			}
			list[i] = entry
			found, listChanged = found || f, listChanged || c
		}
		if !found {
			ours := []member{}
			if !flat {
				ours = append(ours, member{"type", json.RawMessage(`"command"`)})
			}
			cmd, _ := json.Marshal(spec.command)
			ours = append(ours, member{"command", cmd})
			for _, n := range spec.nums {
				if n.min > 0 {
					ours = append(ours, member{n.key, json.RawMessage(fmt.Sprint(n.min))})
				}
			}
			entry := encodeObject(ours)
			if !flat {
				entry = encodeObject([]member{{"hooks", json.RawMessage("[" + string(entry) + "]")}})
			}
			list = append(list, entry)
			listChanged = true
		}
		if !listChanged {
			continue
		}
		value, err := json.Marshal(list)
		if err != nil {
			return nil, false, err
		}
		hooks = setMember(hooks, at, spec.event, value)
		changed = true
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

// raiseInGroup looks for our hook in a group's hooks list.
func raiseInGroup(group json.RawMessage, spec hookSpec) (json.RawMessage, bool, bool) {
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
func raiseOurs(h json.RawMessage, spec hookSpec) (json.RawMessage, bool, bool) {
	ms, err := objectMembers(h)
	if err != nil {
		return h, false, false
	}
	at := memberIndex(ms, "command")
	var command string
	if at < 0 || json.Unmarshal(ms[at].value, &command) != nil || !isOurHook(command, spec.sub) {
		return h, false, false
	}
	changed := false
	for _, n := range spec.nums {
		if n.min <= 0 {
			continue
		}
		i := memberIndex(ms, n.key)
		var have float64
		if i >= 0 && json.Unmarshal(ms[i].value, &have) == nil && have >= float64(n.min) {
			continue
		}
		ms = setMember(ms, i, n.key, json.RawMessage(fmt.Sprint(n.min)))
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

// agentNames lists the agents init --agent knows, sorted.
func agentNames() []string {
	var names []string
	for n := range hookFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
