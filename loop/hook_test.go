package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

func TestSessionKey(t *testing.T) {
	t.Parallel()
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

func TestFindWorkspace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("repo/.git")
	ws := mk("repo/.orchestrator")
	deep := mk("repo/src/a/b")
	mk("repo/nested/.git")
	nested := mk("repo/nested/x")
	outer := mk("outer/.orchestrator")
	plain := mk("outer/plain/deeper")
	for _, tc := range []struct {
		name     string
		projects []string
		cwd      string
		want     string
	}{
		{"the repository's root", nil, filepath.Join(root, "repo"), ws},
		{"a subdirectory", nil, deep, ws},
		{"a nested repository stops the search", nil, nested, ""},
		{"the project directory first", []string{filepath.Join(root, "repo")}, nested, ws},
		{"a project directory without one is passed over", []string{filepath.Join(root, "repo/src"), ""}, deep, ws},
		{"a relative project directory is none", []string{"repo"}, nested, ""},
		{"outside a repository, up to the file system's root", nil, plain, outer},
		{"no cwd", nil, "", ""},
	} {
		if got := FindWorkspace(".orchestrator", tc.projects, tc.cwd); got != tc.want {
			t.Errorf("%s: FindWorkspace(%q, %q) = %q; want %q", tc.name, tc.projects, tc.cwd, got, tc.want)
		}
	}
}

func TestSessionDirName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ id, want string }{
		{"", "hook-none"},
		{"b1c2d3e4-0000-4000-8000-123456789abc", "hook-b1c2d3e4-0000-4000-8000-123456789abc"},
		{"a.b_c", "hook-a.b_c"},
		{strings.Repeat("a", 64), "hook-" + strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), "sha"},
		{"..", "sha"},
		{".hidden", "sha"},
		{"-x", "sha"},
		{"a/b", "sha"},
		{`a\b`, "sha"},
		{"a:b", "sha"},
		{"é", "sha"},
	} {
		got := SessionDirName(tc.id)
		if tc.want == "sha" {
			if !strings.HasPrefix(got, "hook-sha256-") || len(got) != len("hook-sha256-")+16 {
				t.Errorf("SessionDirName(%q) = %q; want a hook-sha256- name", tc.id, got)
			}
		} else if got != tc.want {
			t.Errorf("SessionDirName(%q) = %q; want %q", tc.id, got, tc.want)
		}
		if filepath.Base(got) != got {
			t.Errorf("SessionDirName(%q) = %q: not one path element", tc.id, got)
		}
	}
}

func TestIsChild(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		child, run string
		want       bool
	}{
		{"", "", false},
		{"1", "", true},
		{"true", "", true},
		{"0", "", false},
		{"false", "", false},
		{" ", "", false},
		{"", "20241213-100000-abcdef", true},
	} {
		env := map[string]string{ChildEnv: tc.child, "ORCHESTRATE_RUN_ID": tc.run}
		if got := IsChild(func(k string) string { return env[k] }); got != tc.want {
			t.Errorf("IsChild(ORCHESTRATE_CHILD=%q, ORCHESTRATE_RUN_ID=%q) = %v; want %v", tc.child, tc.run, got, tc.want)
		}
	}
}

// BenchmarkTreeState measures what the Stop hook pays to tell an unchanged
// session (a git tree of the working tree, with a copy of the index) on a
// repository of 2,000 files, against git status --porcelain on the same
// tree in the same run: the ratio is the figure.
func BenchmarkTreeState(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	root := b.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for i := 0; i < 2000; i++ {
		p := filepath.Join(root, "pkg"+strconv.Itoa(i%40), "f"+strconv.Itoa(i)+".go")
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("package p\n\n// "+strings.Repeat("x", i%200)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	git("add", "-A")
	git("commit", "-qm", "init")
	os.WriteFile(filepath.Join(root, "pkg0", "f0.go"), []byte("package p // changed\n"), 0o644)
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	os.MkdirAll(w.Dir, 0o755)
	ctx := context.Background()
	b.Run("git-status", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := w.git(ctx, "status", "--porcelain"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tree-state", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok := w.treeState(ctx); !ok {
				b.Fatal("no tree state")
			}
		}
	})
}

// FuzzReadHookInput: any input is an error or an object whose agent is one
// of ours, whose answer in that agent's protocol is one JSON object (or
// nothing), and whose session directory is one plain path element.
func FuzzReadHookInput(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"abc","cwd":"/repo","hook_event_name":"Stop","stop_hook_active":true}`,
		`{"session_id":"019a","turn_id":"t","transcript_path":null,"cwd":"/r","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":false,"last_assistant_message":null}`,
		`{"session_id":"g","cwd":"/r","hook_event_name":"AfterAgent","timestamp":"2026-01-28T10:00:00Z","prompt":"p","prompt_response":"r"}`,
		`{"conversation_id":"c","generation_id":"g","hook_event_name":"stop","workspace_roots":["/r"],"status":"completed","loop_count":0}`,
		`{"session_id":"../../x"}`, `[]`, `{} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := agentcli.ReadHookInput(bytes.NewReader(data), time.Second)
		if err != nil {
			return
		}
		agent := in.Agent()
		found := false
		for _, a := range agentcli.HookAgents {
			found = found || a == agent
		}
		if !found {
			t.Fatalf("Agent() = %q: not one of %v", agent, agentcli.HookAgents)
		}
		_ = in.Dir()
		if d := SessionDirName(in.Session()); filepath.Base(d) != d || d == "." || d == ".." || strings.ContainsAny(d, `/\`) {
			t.Fatalf("SessionDirName(%q) = %q: not a plain name", in.Session(), d)
		}
		for _, out := range []agentcli.HookOutput{{}, {Decision: "block", Reason: in.Session()}, {SystemMessage: in.Cwd}} {
			stdout, _ := agentcli.HookAnswer(agent, out)
			if len(stdout) == 0 {
				continue
			}
			var v map[string]any
			if err := json.Unmarshal(stdout, &v); err != nil {
				t.Fatalf("HookAnswer(%s, %+v) = %q: %v", agent, out, stdout, err)
			}
		}
	})
}

// TestTreeStateRacyGit: a same-size edit made in the second the index was
// written ("racy git": the file's stat matches what the index cached) is a
// change of the tree, or the Stop hook would let an edited session stop
// without its gates.
func TestTreeStateRacyGit(t *testing.T) {
	t.Parallel()
	dir, racyEdit := racyRepo(t)
	w := Workspace{Dir: filepath.Join(dir, DefaultDir)}
	before, ok := w.treeState(context.Background())
	if !ok {
		t.Fatal("no tree state for a clean tree")
	}
	if again, _ := w.treeState(context.Background()); again != before {
		t.Fatalf("tree state of an unchanged tree moved: %v, then %v", before, again)
	}

	racyEdit()
	after, ok := w.treeState(context.Background())
	if !ok || after == before {
		t.Errorf("tree state unchanged (%v) after a same-size edit in the second of the index (racy git)", after)
	}
	if after.Head != before.Head {
		t.Errorf("HEAD moved: %s, then %s", before.Head, after.Head)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".git")); true {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "orchestrate-index-") {
				t.Errorf("the index's copy is left behind: %s", e.Name())
			}
		}
	}
}
