package loop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/orchestrate-dev/orchestrate/worktree"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/internal/git"
)

// FieldSession ties an issue to the agent session whose Stop hook filed
// it: the hook counts a session's attempts on its own issues only.
const FieldSession = "Session"

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

// The agents whose hooks orchestrate hook answers, each in its protocol.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
	AgentGemini = "gemini"
	AgentCursor = "cursor"
)

// HookAgents lists them.
var HookAgents = []string{AgentClaude, AgentCodex, AgentGemini, AgentCursor}

// Agent names the agent that sent the input, by its event name and the
// fields only it sends: Gemini CLI's AfterAgent, Cursor's lower-case
// events and conversation_id, Codex's turn_id; Claude Code otherwise.
func (in HookInput) Agent() string {
	switch {
	case in.HookEventName == "AfterAgent":
		return AgentGemini
	case in.HookEventName == "stop" || in.HookEventName == "sessionStart" || in.ConversationID != "" || len(in.WorkspaceRoots) > 0:
		return AgentCursor
	case in.TurnID != "":
		return AgentCodex
	case in.Timestamp != "" && in.HookEventName == "SessionStart":
		return AgentGemini
	}
	return AgentClaude
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

// ProjectDirEnv lists, for an agent, the environment variables that name
// its project's root in a hook's environment, its own first.
func ProjectDirEnv(agent string) []string {
	switch agent {
	case AgentGemini:
		return []string{"GEMINI_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}
	case AgentCursor:
		return []string{"CURSOR_PROJECT_DIR", "CLAUDE_PROJECT_DIR"}
	}
	return []string{"CLAUDE_PROJECT_DIR"}
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
	case AgentGemini:
		if out.Decision == "block" {
			out.Decision = "deny"
		}
		v = out
	case AgentCursor:
		type cursorOutput struct {
			FollowupMessage string `json:"followup_message,omitempty"`
		}
		c := cursorOutput{}
		if out.Decision == "block" {
			c.FollowupMessage = out.Reason
		} else {
			stderr = out.SystemMessage
		}
		v = c
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

// ChildEnv is set (to 1) in the environment of every process orchestrate
// launches (agents under orchestrate run, reviewers, synthesis, gate
// commands): a hook that finds it does nothing, so that a child never runs
// the gates again.
const ChildEnv = gate.EnvChild

// IsChild reports whether the environment is that of a process
// orchestrate launched: ORCHESTRATE_CHILD set to anything but "", "0" or
// "false", or ORCHESTRATE_RUN_ID set (an agent under orchestrate run).
func IsChild(getenv func(string) string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv(ChildEnv))) {
	case "", "0", "false":
	default:
		return true
	}
	return strings.TrimSpace(getenv("ORCHESTRATE_RUN_ID")) != ""
}

// FindWorkspace finds the workspace directory named name (relative, as
// .orchestrator is) of the project an agent's hook runs for: in the first
// of projectDirs (e.g. $CLAUDE_PROJECT_DIR) that holds one, else in cwd or
// the nearest parent of it that does, up to the repository's root (the
// first directory with a .git), or the file system's outside a repository.
// In a linked git worktree (git worktree add, claude --worktree, an agent
// of run --agents), it is the main worktree's: one queue for all. It
// returns "" when there is none.
func FindWorkspace(name string, projectDirs []string, cwd string) string {
	ws, _ := FindWorkspaceTree(name, projectDirs, cwd)
	return ws
}

// FindWorkspaceTree is FindWorkspace, and the root of the linked worktree
// through which the workspace was found ("" when it was not): the tree the
// gates are to run in (see Workspace.InTree).
func FindWorkspaceTree(name string, projectDirs []string, cwd string) (ws, tree string) {
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	// A linked worktree's workspace is its main worktree's, whatever copy
	// of it the worktree's own checkout holds.
	inMain := func(d string) string {
		if main := worktree.MainRoot(d); main != "" && !filepath.IsAbs(name) && isDir(filepath.Join(main, name)) {
			tree = d
			return filepath.Join(main, name)
		}
		return ""
	}
	for _, d := range projectDirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if ws := inMain(d); ws != "" {
			return ws, tree
		}
		if isDir(filepath.Join(d, name)) {
			return filepath.Join(d, name), ""
		}
	}
	if cwd == "" {
		return "", ""
	}
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		_, gitErr := os.Lstat(filepath.Join(d, ".git"))
		if gitErr == nil {
			if ws := inMain(d); ws != "" {
				return ws, tree
			}
		}
		if isDir(filepath.Join(d, name)) {
			return filepath.Join(d, name), ""
		}
		if gitErr == nil || filepath.Dir(d) == d {
			return "", "" // the repository's root, or the file system's
		}
	}
}

// SessionDirName is the name of a hook session's directory under runs/,
// where its gates' artifacts and its baseline go: hook-<id> for an ID of
// at most 64 letters, digits, '.', '_' and '-' that starts with a letter
// or digit, hook-sha256-<16 hex> for any other, hook-none for none. No ID
// becomes a path of its own choosing.
func SessionDirName(id string) string {
	if id == "" {
		return "hook-none"
	}
	safe := len(id) <= 64
	for i, c := range id {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._-", c)) {
			safe = false
			break
		}
	}
	if safe {
		return "hook-" + id
	}
	sum := sha256.Sum256([]byte(id))
	return "hook-sha256-" + hex.EncodeToString(sum[:8])
}

// HookOutput is a Stop hook's answer on stdout. Decision "block" keeps the
// agent working, with Reason as its next instruction; otherwise the agent
// may stop, and SystemMessage, if any, is shown to the person.
type HookOutput struct {
	Decision      string `json:"decision,omitempty"`
	Reason        string `json:"reason,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
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

// SessionKey is the value of an issue's Session field for a session ID.
// An empty ID is a session of its own, "(none)", never a wildcard; an ID
// with characters a table cell should not hold is hashed.
func SessionKey(id string) string {
	if id == "" {
		return "(none)"
	}
	safe := len(id) <= 128
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:", c)) {
			safe = false
			break
		}
	}
	if safe {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// TreeState is where a repository stands: its HEAD (empty before the first
// commit) and the git tree object of its working tree, every file git does
// not ignore, tracked or not, the workspace directory left out.
type TreeState struct {
	Head string `json:"head"`
	Tree string `json:"tree"`
}

// Baseline is where a hook session stands for its Stop hook: where it
// began, or where its gates last passed.
type Baseline struct {
	TreeState
	SessionID string `json:"session_id"`
	Source    string `json:"source,omitempty"` // the agent's session start source
	By        string `json:"by"`               // session start, gates passed
	Recorded  string `json:"recorded"`         // RFC 3339
}

// BaselineFile is the baseline's file in a hook session's directory.
const BaselineFile = "baseline.json"

// treeState returns the repository's state; false outside a git work tree
// or when git fails. The tree is written with a copy of the index, which
// is left as it is.
func (w Workspace) treeState(ctx context.Context) (TreeState, bool) {
	if !w.inGit(ctx) {
		return TreeState{}, false
	}
	return w.gitTreeState(ctx)
}

// gitTreeState is treeState in a repository known to be a git work tree:
// three git processes.
func (w Workspace) gitTreeState(ctx context.Context) (TreeState, bool) {
	var st TreeState
	// The index's path, then HEAD's commit, which an unborn HEAD lacks
	// (git exits 1, having printed the path). The index's copy goes next
	// to the index, in the git directory, which git add never adds (a
	// temporary directory might be in the tree).
	out, err := w.git(ctx, "rev-parse", "--git-path", "index", "-q", "--verify", "HEAD^{commit}")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	p := strings.TrimSpace(lines[0])
	if p == "" {
		return TreeState{}, false
	}
	if err == nil && len(lines) == 2 {
		st.Head = strings.TrimSpace(lines[1])
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.Root(), p)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), "orchestrate-index-*")
	if err != nil {
		return TreeState{}, false
	}
	index := tmp.Name()
	defer os.Remove(index)
	defer os.Remove(index + ".lock")
	// A copy of the real index gives git the tree's entries, and keeps its
	// mtime: git trusts an entry's cached stat only when the file is older
	// than the index, and checks the content of the others ("racily
	// clean"), so the copy is as safe as the index is for git status. With
	// a new mtime, an edit of the same size in the second the index was
	// written would pass for unchanged.
	if data, err := os.ReadFile(p); err == nil {
		fi, serr := os.Stat(p)
		_, err = tmp.Write(data)
		if cerr := tmp.Close(); err != nil || cerr != nil || serr != nil {
			return TreeState{}, false
		}
		if os.Chtimes(index, fi.ModTime(), fi.ModTime()) != nil {
			return TreeState{}, false
		}
	} else {
		tmp.Close()
		os.Remove(index) // no index yet: git starts an empty one
	}
	gitEnv := func(args ...string) (string, error) {
		return git.Runner{Dir: w.Root(), Env: []string{"GIT_INDEX_FILE=" + index}}.Output(ctx, args...)
	}
	if _, err := gitEnv(append([]string{"add", "-A", "--ignore-errors"}, w.outsideWorkspace()...)...); err != nil {
		return TreeState{}, false
	}
	tree, err := gitEnv("write-tree")
	if err != nil {
		return TreeState{}, false
	}
	st.Tree = strings.TrimSpace(tree)
	return st, st.Tree != ""
}

// readBaseline reads a hook session's baseline; false when it has none
// (or an unreadable one: the gates then run).
func (w Workspace) readBaseline(dirName string) (Baseline, bool) {
	data, _, err := fsx.ReadFileMax(filepath.Join(w.Path(RunsDir), dirName, BaselineFile), maxArtifact)
	if err != nil {
		return Baseline{}, false
	}
	var b Baseline
	if json.Unmarshal(data, &b) != nil || b.Tree == "" {
		return Baseline{}, false
	}
	return b, true
}

// recordBaseline records where the repository stands as the session's
// baseline; nothing outside a git work tree.
func (w Workspace) recordBaseline(ctx context.Context, now time.Time, dirName, sessionID, source, by string) error {
	st, ok := w.treeState(ctx)
	if !ok {
		return nil
	}
	b := Baseline{TreeState: st, SessionID: sessionID, Source: source, By: by, Recorded: now.UTC().Format(time.RFC3339)}
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Join(w.Path(RunsDir), dirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fsx.WriteFile(filepath.Join(dir, BaselineFile), append(data, '\n'), 0o644)
}

// The outcomes of a SessionStart hook call.
const (
	SessionRecorded = "recorded" // the baseline is where the repository stands now
	SessionKept     = "kept"     // the session had one (a resume, a compaction): kept
	SessionNoGit    = "no_git"   // not a git work tree: the Stop hook always runs the gates
)

// SessionStart records where an agent's session begins, for its Stop hook
// to tell whether the session changed anything: HEAD and the tree, in
// runs/<SessionDirName>/baseline.json. A session that has a baseline keeps
// it: a resumed or compacted session goes on from where it was.
func (w Workspace) SessionStart(ctx context.Context, now time.Time, sessionID, source string) (string, error) {
	if err := w.mustExist(); err != nil {
		return "", err
	}
	dirName := SessionDirName(sessionID)
	if _, err := os.Stat(filepath.Join(w.Path(RunsDir), dirName, BaselineFile)); err == nil {
		return SessionKept, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if !w.inGit(ctx) {
		return SessionNoGit, nil
	}
	if err := w.recordBaseline(ctx, now, dirName, sessionID, source, "session start"); err != nil {
		return "", err
	}
	return SessionRecorded, nil
}
