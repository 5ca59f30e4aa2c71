package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/signature"
)

// The same failing test in two worktrees of one repository, with random
// names of mixed and single case, is one signature: each worktree's root,
// where its gate runs, is <workdir>, and so is a gate's working directory.
// Run with the root left unmasked, the panic's paths tell them apart,
// which is what the test rests on.
func TestTwoWorktreesOneSignature(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go test in two worktrees")
	}
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	base := t.TempDir()
	main := filepath.Join(base, "repo")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	files := map[string]string{
		"go.mod":            "module calc\n\ngo 1.22\n",
		"calc/calc.go":      "package calc\n\nfunc At(xs []int, i int) int { return xs[i] }\n",
		"calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAt(t *testing.T) {\n\tif At([]int{1, 2}, 5) != 2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
	}
	for name, content := range files {
		p := filepath.Join(main, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(base, "init", "-q", "-b", "main", main)
	git(main, "add", "-A")
	git(main, "commit", "-qm", "start")
	a := filepath.Join(base, "wt-a-0XIPUPMY")
	b := filepath.Join(base, "wt-b-L3KwvTd9")
	git(main, "worktree", "add", "-q", "-b", "a", a)
	git(main, "worktree", "add", "-q", "-b", "b", b)

	g := gateOf("tests", "go test ./...")
	g.WorkingDir = "calc"
	g.Env = map[string]string{"GOFLAGS": "-count=1", "GOTOOLCHAIN": "local"}
	sig := func(root string) (string, string) {
		r := runOne(t, g, Options{RepoRoot: root})
		if r.Outcome != Fail || r.Digest == nil {
			t.Fatalf("in %s: %s (%s)\n%s", root, r.Outcome, r.Reason(), r.Output)
		}
		if !strings.Contains(r.Output, root) {
			t.Fatalf("in %s: the panic names no path of the worktree:\n%s", root, r.Output)
		}
		return r.Digest.Signature(signature.Fail), r.Digest.Normalized
	}
	sa, na := sig(a)
	sb, nb := sig(b)
	if sa != sb {
		t.Errorf("two worktrees, one failure: signatures differ\n--- %s\n%s\n--- %s\n%s", a, na, b, nb)
	}
	// The same outputs signed with nothing of the checkouts masked differ.
	ra := runOne(t, g, Options{RepoRoot: a})
	rb := runOne(t, g, Options{RepoRoot: b})
	plain := func(out string) string {
		s, _ := signature.Of([]byte(out), signature.Fail, signature.Options{})
		return s
	}
	if plain(ra.Output) == plain(rb.Output) {
		t.Errorf("unmasked, the two outputs sign alike: the test proves nothing")
	}
}

// A gate's working directory is one <workdir> with the repository's root:
// a path under it signs the same whichever directory the gate runs in.
func TestWorkingDirIsWorkdir(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	g := gateOf("lint", `echo "$PWD/x.go:3: boom"; exit 1`)
	g.WorkingDir = "sub"
	r := runOne(t, g, Options{RepoRoot: root})
	if r.Digest == nil || r.Digest.Normalized != "<workdir>/x.go:N: boom\n" {
		t.Errorf("normalized %q; want the working directory masked as <workdir>", r.Digest.Normalized)
	}
}
