package loop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTreeStateHead: the tree state names HEAD's commit, and none before
// the first commit (an unborn HEAD), where the tree is still read.
func TestTreeStateHead(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := Workspace{Dir: filepath.Join(dir, DefaultDir)}
	unborn, ok := w.treeState(context.Background())
	if !ok || unborn.Head != "" || unborn.Tree == "" {
		t.Errorf("unborn HEAD: %+v, %v; want no head, a tree", unborn, ok)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "a")
	born, ok := w.treeState(context.Background())
	if head := git("rev-parse", "HEAD"); !ok || born.Head != head || born.Tree != unborn.Tree {
		t.Errorf("after a commit: %+v, %v; want head %s and the same tree %s", born, ok, head, unborn.Tree)
	}
}
