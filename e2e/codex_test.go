package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The scenarios with the real Codex CLI (codex exec), against the scripted
// model's Responses API.

// orchestrate run with what init --agent codex writes: codex runs the
// project's check, edits the file through its shell tool in its sandbox,
// the gates pass, the run exits 0, and history.csv has what codex reported
// of its use.
func TestCodexRunWithInitDefaults(t *testing.T) {
	m := newModel(t, route{"FIXCALC", fixCalc})
	p := newAgentProject(t, m, codexCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "codex")
	reqs := runFixCalc(t, p, m, "codex")
	us := p.usage()
	if len(us) != 1 {
		t.Fatalf("usage rows = %+v; want 1", us)
	}
	u, n := us[0], int64(len(reqs))
	if u.Session == "" || u.Session != reqs[0].Thread || u.InputTokens != n*usageIn || u.OutputTokens != n*usageOut || u.CacheReadTokens != n*usageCached {
		t.Errorf("usage = %+v; want the thread, %d input, %d output and %d cached tokens (%d requests)", u, n*usageIn, n*usageOut, n*usageCached, n)
	}
}

// Go's build cache, outside the working tree, is writable in the sandbox
// of what init --agent codex writes for a Go project (--add-dir): go test
// writes there what it builds, and fails with "read-only file system" on a
// package it has not built before when it cannot (seen in a run whose
// cache did not hold calc's test yet).
func TestCodexGoCacheWritable(t *testing.T) {
	probe := "orchestrate-e2e-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	m := newModel(t, route{"GOCACHE", func(c *conv) turn {
		if c.calls() == 0 {
			return turn{Tools: []tool{bash(`touch "$(go env GOCACHE)/` + probe + `"`)}}
		}
		return say("Done.")
	}})
	p := newAgentProject(t, m, codexCLI, calcProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.orchestrate("run", "--task", "GOCACHE: touch a file in Go's build cache")
	cache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(strings.TrimSpace(string(cache)), probe)
	defer os.Remove(file)
	if _, err := os.Stat(file); err != nil {
		reqs := m.requests("GOCACHE")
		t.Errorf("the agent could not write in Go's build cache (%v); what it saw:\n%s", err, tail(reqs[len(reqs)-1].all(), 600))
	}
}

// The codex profile's gates and retries, with init's commands.
const codexSteps = "retry:\n  strategy: same\nagent:\n  profile: codex\ngates:\n  - name: check\n    command: sh check.sh\n"

// The second loop resumes codex's own thread (codex exec resume ID): the
// model sees the same thread, with the first launch's conversation and the
// gate's feedback. Each launch's usage row holds what that launch used,
// though codex reports a resumed thread's running totals.
func TestCodexResumeAndUsagePerLaunch(t *testing.T) {
	m := newModel(t, route{"STEPS", fixInSteps})
	p := newAgentProject(t, m, codexCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.config(codexSteps)

	reqs := runResumes(t, p, m)
	first, last := reqs[0], reqs[3]
	if first.Thread == "" || last.Thread != first.Thread {
		t.Errorf("threads %q, then %q: the resume did not reach codex's own thread", first.Thread, last.Thread)
	}
	us := p.usage()
	if len(us) != 2 {
		t.Fatalf("usage rows = %+v; want 2", us)
	}
	for i, u := range us {
		if u.Session != first.Thread || u.Turns != 1 || u.InputTokens != 2*usageIn || u.OutputTokens != 2*usageOut || u.CacheReadTokens != 2*usageCached {
			t.Errorf("launch %d: usage %+v; want thread %s, 1 turn, what its 2 requests used: %d input, %d output, %d cached tokens",
				i+1, u, first.Thread, 2*usageIn, 2*usageOut, 2*usageCached)
		}
	}
}

// codex never fixes it: the same failure three times halts the issue and
// the run stops for a person (exit 11).
func TestCodexHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", neverFixes})
	p := newAgentProject(t, m, codexCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.config(codexSteps)
	runHalts(t, p, m)
}

// codexExec runs codex exec headless in the repository, as orchestrate's
// profile does, the prompt on stdin.
func (p *project) codexExec(prompt string, args ...string) (string, int) {
	p.t.Helper()
	return p.exec(p.Dir, prompt, "codex", append(append([]string{"exec", "--json", "--sandbox", "workspace-write"}, args...), "-")...)
}

// trustCodexProject trusts the repository in $CODEX_HOME/config.toml, as
// init --agent codex says to.
func (p *project) trustCodexProject() {
	p.t.Helper()
	cfg := filepath.Join(p.Home, ".codex", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		p.t.Fatal(err)
	}
	data = append(data, fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", p.Dir)...)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// The Stop hook init --agent codex writes, once codex trusts the project
// and the hooks: codex says it is done, the gate fails, the hook sends it
// back with the feedback, it fixes the file, the issue is resolved.
func TestCodexStopHookFixes(t *testing.T) {
	m := newModel(t, route{"HOOKFIX", fixInSteps})
	p := newAgentProject(t, m, codexCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	p.trustCodexProject()
	p.trustCodexHooks()
	out, code := p.codexExec("HOOKFIX: make check.sh pass")
	hookFixes(t, p, m, out, code)
}

// The Stop hook when codex never fixes it: blocked twice, then the third
// identical failure halts the issue and the hook lets codex stop.
func TestCodexStopHookHalts(t *testing.T) {
	m := newModel(t, route{"NEVER", neverFixes})
	p := newAgentProject(t, m, codexCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.config("gates:\n  - name: check\n    command: sh check.sh\n")
	p.trustCodexProject()
	p.trustCodexHooks()
	out, code := p.codexExec("NEVER: make check.sh pass")
	hookHalts(t, p, m, out, code)
}

// trustCodexHooks trusts the project's hooks as codex's /hooks does, from a
// script: codex app-server lists them with their current hashes
// (hooks/list), and config/batchWrite records each hash as trusted in
// $CODEX_HOME/config.toml (hooks.state."KEY".trusted_hash). A change to
// .codex/hooks.json changes the hashes, and the hooks are untrusted again.
func (p *project) trustCodexHooks() {
	p.t.Helper()
	s := p.codexAppServer()
	defer s.close()
	s.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "e2e", "version": "0"}})
	s.notify("initialized")
	var list struct {
		Data []struct {
			Hooks []struct {
				Key, CurrentHash, TrustStatus string
			}
		}
	}
	s.call("hooks/list", map[string]any{"cwds": []string{p.Dir}}, &list)
	state := map[string]any{}
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
		}
	}
	if len(state) != 2 {
		p.t.Fatalf("codex lists %d hooks of the project; want init's 2 (SessionStart, Stop): %+v", len(state), list)
	}
	s.call("config/batchWrite", map[string]any{"edits": []any{map[string]any{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}}})
	s.call("hooks/list", map[string]any{"cwds": []string{p.Dir}}, &list)
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			if h.TrustStatus != "trusted" {
				p.t.Fatalf("hook %s is %s after config/batchWrite", h.Key, h.TrustStatus)
			}
		}
	}
}

// appServer is codex app-server on pipes: JSON-RPC, one message a line.
type appServer struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (p *project) codexAppServer() *appServer {
	p.t.Helper()
	cmd := exec.Command(p.lookPath("codex"), "app-server")
	cmd.Dir, cmd.Env = p.Dir, p.env
	in, err := cmd.StdinPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	return &appServer{t: p.t, cmd: cmd, in: in, out: sc}
}

func (s *appServer) send(msg map[string]any) {
	s.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("codex app-server: %v", err)
	}
}

func (s *appServer) notify(method string) { s.send(map[string]any{"method": method}) }

// call sends a request and decodes its result into each of into; a
// notification in between is passed over.
func (s *appServer) call(method string, params any, into ...any) {
	s.t.Helper()
	s.id++
	s.send(map[string]any{"id": s.id, "method": method, "params": params})
	for s.out.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(s.out.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != s.id {
			continue
		}
		if msg.Error != nil {
			s.t.Fatalf("codex app-server %s: %s", method, msg.Error)
		}
		for _, v := range into {
			if err := json.Unmarshal(msg.Result, v); err != nil {
				s.t.Fatalf("codex app-server %s: %v: %s", method, err, msg.Result)
			}
		}
		return
	}
	s.t.Fatalf("codex app-server %s: no answer (%v)", method, s.out.Err())
}

func (s *appServer) close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// Codex that cannot reach its model API says so every few seconds
// ("Reconnecting... waiting for network") and never exits. orchestrate run
// stops it at the third time, and stops: one line that quotes it and says
// what to do, nothing counted. Before, the launch ran until agent.timeout
// (30 minutes).
func TestCodexNoNetwork(t *testing.T) {
	m := newModel(t)
	p := newAgentProject(t, m, codexCLI, stepsProject)
	p.mustOrchestrate("init", "--agent", "codex")
	p.config(codexSteps)
	// The provider's base URL is a closed port.
	p.writeHome(".codex/config.toml", strings.ReplaceAll(codexConfig(m), m.URL, "http://127.0.0.1:9"))
	start := time.Now()
	out, code := p.orchestrate("run", "--task", "NONET: make check.sh pass")
	if code != 1 || !strings.Contains(out, "orchestrate: the agent could not work: codex could not reach its model API") ||
		!strings.Contains(out, "Reconnecting... waiting for network") || !strings.Contains(out, "nothing was counted") {
		t.Fatalf("orchestrate run: exit %d after %s\n%s", code, time.Since(start).Round(time.Second), out)
	}
	if q := p.read(".orchestrator/issue_queue.md"); strings.Contains(q, "## ISSUE-") {
		t.Errorf("an issue was filed:\n%s", q)
	}
}
