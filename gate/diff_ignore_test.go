package gate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffExcludeIgnored: the workspace directory is left out of the diff
// whether .gitignore ignores all of it, part of it, or none of it; a
// .gitignore that ignores all of it once made git add fail on the exclude
// ("The following paths are ignored by one of your .gitignore files").
func TestDiffExcludeIgnored(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, tt := range []struct {
		name, gitignore string
	}{
		{"whole directory ignored", ".orchestrator/\n"},
		{"whole directory ignored, no slash", ".orchestrator\n"},
		{"runs ignored", ".orchestrator/runs/\n"},
		{"ignored, then un-ignored", ".orchestrator/\n!.orchestrator/\n"},
		{"nothing ignored", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			git := func(args ...string) {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			write := func(name, content string) {
				t.Helper()
				path := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			git("init", "-q")
			write("main.go", "package main\n")
			write(".gitignore", tt.gitignore)
			git("add", ".")
			git("commit", "-q", "-m", "one")
			write("main.go", "package main // changed\n")
			write("new.go", "package main // new\n")
			write(".orchestrator/config.yaml", "gates: []\n")
			write(".orchestrator/runs/r1/summary.md", "# run\n")

			var b strings.Builder
			if err := Diff(context.Background(), dir, "HEAD", []string{".orchestrator"}, false, &b); err != nil {
				t.Fatalf("Diff: %v", err)
			}
			got := b.String()
			for _, want := range []string{"+++ b/main.go", "+++ b/new.go"} {
				if !strings.Contains(got, want) {
					t.Errorf("diff lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, ".orchestrator") {
				t.Errorf("diff shows the excluded .orchestrator:\n%s", got)
			}
		})
	}
}
