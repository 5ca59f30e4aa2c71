package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/orchestrate-dev/orchestrate", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-01-21T10:30:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}
	if got, want := versionOf(bi).String(), "orchestrate v1.2.3 (rev 0123456789ab, 2026-01-21T10:30:00Z, modified) go1.26.0 linux/arm64"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "amd64"}}}
	if got, want := versionOf(bi).String(), "orchestrate (devel) go1.26.0 darwin/amd64"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestVersionFromBuild builds the command as a user does, in a git checkout of
// this module (a copy of the working files, committed and tagged v1.2.3), and
// checks that --version reports the tag and the commit, then "modified" once
// the tree changes.
func TestVersionFromBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	t.Parallel()
	for _, tool := range []string{"git", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true -mod=mod", "GOPROXY=off",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
		}
		return strings.TrimSpace(string(b))
	}
	run("git", "init", "-q")
	run("git", "add", "-A")
	run("git", "commit", "-q", "-m", "release")
	run("git", "tag", "v1.2.3")
	rev := run("git", "rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "orchestrate")
	if st := run("git", "status", "--porcelain"); st != "" {
		t.Fatalf("the copy is not clean:\n%s", st)
	}

	run("go", "build", "-o", bin, "./cmd/orchestrate")
	var v buildVersion
	if err := json.Unmarshal([]byte(run(bin, "version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != "v1.2.3" || v.Revision != rev || v.Modified || v.Time == "" {
		t.Errorf("version --json = %#v; want v1.2.3 at %s, not modified", v, rev)
	}
	if got := run(bin, "--version"); !strings.HasPrefix(got, "orchestrate v1.2.3 (rev "+rev[:12]+", ") {
		t.Errorf("--version = %q", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "NEW"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("go", "build", "-o", bin, "./cmd/orchestrate")
	if got := run(bin, "--version"); !strings.Contains(got, ", modified) ") || !strings.Contains(got, "v1.2.3") {
		t.Errorf("--version of a modified tree = %q; want the tag and modified", got)
	}
}
