package loop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// agentsRepo makes a git repository on main with one commit, its
// workspace (ignored by git) with config, and an issue per summary.
func agentsRepo(t *testing.T, configOf func(Workspace) string, summaries ...string) Workspace {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // where the worktrees go
	gitIn(t, root, "init", "-q", "-b", "main")
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	config := configOf(w)
	if err := os.MkdirAll(w.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{ConfigFile: config, filepath.Join("..", ".gitignore"): DefaultDir + "/\n", filepath.Join("..", "shared.txt"): "base\n"} {
		if err := os.WriteFile(w.Path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, root, "add", ".")
	gitIn(t, root, "commit", "-qm", "init")
	for _, s := range summaries {
		if _, err := w.AddIssue(context.Background(), ruleNow, NewIssue{
			Fields:   map[string]string{queue.FieldAutoRetry: "true"},
			Sections: map[string]string{queue.SectionSummary: s},
		}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Claims.Next reads at a look the first open issues only; when none of them
// is ready (here: halted, and an approval request), the whole queue is
// read, and the first ready one past them is claimed. Claimed issues are
// always read: a holder gets back what it holds.
func TestClaimNextPastTheFirstLook(t *testing.T) {
	t.Parallel()
	var q strings.Builder
	q.WriteString("# Issue Queue\n\n")
	for i := 1; i <= chooseOpen+4; i++ {
		fields := []string{"Status", "pending", "Priority", "critical", "Created", fmt.Sprintf("2026-01-01T00:00:%02dZ", i)}
		switch {
		case i <= chooseOpen:
			fields = append(fields, "Halted", "true")
		case i == chooseOpen+1:
			fields = append(fields, "Type", TypeApproval)
		case i == chooseOpen+2:
			fields[3] = "low"
		}
		q.WriteString(issueText(fmt.Sprintf("ISSUE-20260101-%03d", i), fields...))
	}
	w := ruleWorkspace(t, "", q.String())
	ctx := context.Background()
	c, err := w.Claims(nil).Next(ctx, ruleNow, "a@h/1", time.Minute, nil)
	if err != nil || c == nil {
		t.Fatal(c, err)
	}
	if want := fmt.Sprintf("ISSUE-20260101-%03d", chooseOpen+3); c.ID != want {
		t.Errorf("claimed %s, want %s (the first ready one by priority past the first look)", c.ID, want)
	}
	again, err := w.Claims(nil).Next(ctx, ruleNow, "a@h/1", time.Minute, nil)
	if err != nil || again == nil || again.ID != c.ID || again.Epoch != 1 {
		t.Errorf("claimed again: %+v, %v", again, err)
	}
}

// The same failure in two checkouts of one repository is one signature,
// whichever checkout's path the output names.
func TestSignatureAcrossCheckouts(t *testing.T) {
	w := agentsRepo(t, func(Workspace) string { return "" })
	linked := filepath.Join(t.TempDir(), "linked")
	gitIn(t, w.Root(), "worktree", "add", "-q", linked)
	code := 1
	sig := func(ws Workspace, path string) string {
		s, _ := ws.Signature(Failure{Output: []byte("--- FAIL: TestX\n    " + path + "/calc_test.go:12: want 5\n"), ExitCode: &code})
		return s
	}
	inMain, inLinked := w, w.InTree(linked)
	want := sig(inMain, w.Root())
	for _, got := range []string{sig(inMain, linked), sig(inLinked, linked), sig(inLinked, w.Root())} {
		if got != want {
			t.Errorf("signature %s, want %s: a checkout's path is not masked", got[:12], want[:12])
		}
	}
}
