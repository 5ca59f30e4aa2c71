package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/jsonsettings"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/prompts"
)

// hookCommand is the command of an agent's hook: hook stop or hook
// session-start, with --agent but for Claude Code's.
func hookCommand(agent, sub string) string {
	c := "orchestrate hook " + sub
	if agent != agentcli.Claude {
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
	file     agentcli.Hooks
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
	cli, ok := agentcli.Lookup(agent)
	if !ok || cli.Hooks == nil {
		return nil, fmt.Errorf("no such agent %q", agent)
	}
	s := &agentSetup{agent: agent, file: *cli.Hooks, repo: ws.Root()}
	if cli.Hooks.SlashCommand != "" {
		p := filepath.Join(s.repo, filepath.FromSlash(cli.Hooks.SlashCommand))
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
	return filepath.Join(s.repo, filepath.FromSlash(s.file.Path))
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

// merge adds the agent's two hooks to its hooks file, keeping every other
// key and hook in its order; a hook of ours that is there already gets
// the timeout (and Cursor's loop_limit) if its own is smaller or missing.
func (s *agentSetup) merge(timeout time.Duration, loopLimit int) ([]byte, bool, error) {
	stop := jsonsettings.Hook{Event: s.file.StopEvent, Sub: "stop", Command: hookCommand(s.agent, "stop"),
		Nums: []jsonsettings.Number{{Key: "timeout", Min: s.file.Units(timeout)}}}
	if s.file.LoopLimit {
		stop.Nums = append(stop.Nums, jsonsettings.Number{Key: "loop_limit", Min: loopLimit})
	}
	start := jsonsettings.Hook{Event: s.file.StartEvent, Sub: "session-start", Command: hookCommand(s.agent, "session-start"),
		Nums: []jsonsettings.Number{{Key: "timeout", Min: s.file.Units(sessionStartTimeout)}}}
	return jsonsettings.MergeHooks(s.old, s.file.Flat, []jsonsettings.Hook{start, stop})
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

// agentNames lists the agents init --agent knows, sorted.
func agentNames() []string {
	var names []string
	for _, n := range agentcli.Profiles {
		if n != agentcli.Custom {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
