package git

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// repo makes a git repository with one commit, and returns its directory.
func repo(t *testing.T) string {
	t.Helper()
	if !Installed() {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := In(dir)
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "a.txt"},
		{"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"},
	} {
		if _, err := g.Output(context.Background(), args...); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestErrorOfAFailingCommand(t *testing.T) {
	dir := repo(t)
	out, err := In(dir).Output(context.Background(), "rev-parse", "--verify", "nosuch^{commit}")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("rev-parse of no commit: %v (%T); want an *Error", err, err)
	}
	if e.ExitCode != 128 || e.Stderr != "fatal: Needed a single revision" || e.Dir != dir || strings.Join(e.Args, " ") != "rev-parse --verify nosuch^{commit}" {
		t.Errorf("rev-parse of no commit: %+v; want exit 128, git's message, the directory and the arguments", e)
	}
	if got, want := err.Error(), "git rev-parse: Needed a single revision"; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
	if x := (*exec.ExitError)(nil); !errors.As(err, &x) || out != "" {
		t.Errorf("rev-parse of no commit: %v, output %q; want the *exec.ExitError within, no output", err, out)
	}

	// Exit 1 and nothing said: a key git config does not have.
	_, err = In(dir).Output(context.Background(), "config", "--get", "orchestrate.nosuch")
	if !errors.As(err, &e) || e.ExitCode != 1 || e.Stderr != "" || err.Error() != "git config: exit status 1" {
		t.Errorf("git config of no key: %#v; want exit 1, nothing said", err)
	}
}

func TestOutputOfAFailingCommand(t *testing.T) {
	dir := repo(t)
	// rev-parse prints the path, then fails on the revision.
	out, err := In(dir).Output(context.Background(), "rev-parse", "--git-path", "index", "-q", "--verify", "nosuch^{commit}")
	if err == nil || strings.TrimSpace(out) != ".git/index" {
		t.Errorf("rev-parse = %q, %v; want the index's path and an error", out, err)
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		stderr     string
		err        error
		timeout    time.Duration
		want       string
		remoteSaid string
	}{
		{args: []string{"diff", "HEAD"}, stderr: "fatal: bad revision 'x'", want: "git diff: bad revision 'x'"},
		{args: []string{"-c", "core.fsmonitor=false", "-c", "a=b", "add", "x"}, stderr: "error: one\nfatal: two\n", want: "git add: error: one; two"},
		{args: []string{"worktree", "add", "--quiet", "/p", "b"}, stderr: "fatal: '/p' already exists", want: "git worktree add: '/p' already exists"},
		{args: []string{"worktree", "--help"}, err: errors.New("exit status 1"), want: "git worktree: exit status 1"},
		{args: []string{"fetch", "far", "x"}, stderr: "fatal: '/g.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.",
			want: "git fetch: '/g.git' does not appear to be a git repository; Could not read from remote repository."},
		{args: []string{"push", "o"}, stderr: "remote: no pushes today  \nremote:\nerror: failed to push some refs to 'o'", want: "git push: remote: no pushes today; remote:; error: failed to push some refs to 'o'", remoteSaid: "no pushes today"},
		{args: []string{"fetch"}, err: errors.New("signal: killed"), timeout: time.Minute, want: "git fetch: signal: killed; no answer in 1m0s"},
		{args: []string{"--version"}, err: errors.New("exit status 2"), want: "git --version: exit status 2"},
	} {
		e := &Error{Args: tc.args, Stderr: tc.stderr, Err: tc.err, Timeout: tc.timeout}
		if got := e.Error(); got != tc.want {
			t.Errorf("Error() of %q, %q = %q; want %q", tc.args, tc.stderr, got, tc.want)
		}
		if got := strings.Join(e.RemoteSaid(), "; "); got != tc.remoteSaid {
			t.Errorf("RemoteSaid() of %q = %q; want %q", tc.stderr, got, tc.remoteSaid)
		}
	}
}

func TestTimeoutKillsTheCommand(t *testing.T) {
	dir := repo(t)
	// git hash-object --stdin reads its input to the end, which a pipe
	// no one writes to never has.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	start := time.Now()
	err = Runner{Dir: dir, Timeout: 200 * time.Millisecond}.Run(context.Background(), r, nil, "hash-object", "--stdin")
	var e *Error
	if !errors.As(err, &e) || e.Timeout != 200*time.Millisecond || e.ExitCode != -1 || !strings.HasSuffix(err.Error(), "no answer in 200ms") {
		t.Fatalf("hash-object of a pipe never closed: %v; want it killed at its timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the command ran %v after its timeout of 200ms", d)
	}

	// The caller's context ends a command with no timeout of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = Runner{Dir: dir, Timeout: NoTimeout}.Run(ctx, r, nil, "hash-object", "--stdin")
	if !errors.As(err, &e) || e.Timeout != 0 || e.ExitCode != -1 {
		t.Errorf("hash-object with a context that ends: %v (%+v); want it killed, with no timeout of its own", err, e)
	}
}

func TestAProcessLeftBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for waitDelay")
	}
	dir := repo(t)
	// The alias's background sleep holds git's standard output after git
	// exits: the command succeeded, and does not wait for the sleep.
	start := time.Now()
	out, err := In(dir).Output(context.Background(), "-c", "alias.bg=!sleep 8 & echo done", "bg")
	if err != nil || strings.TrimSpace(out) != "done" {
		t.Errorf("an alias that leaves a process behind = %q, %v; want its output, and no error", out, err)
	}
	if d := time.Since(start); d > waitDelay+5*time.Second {
		t.Errorf("the command returned after %v; want about waitDelay (%v)", d, waitDelay)
	}
}

func TestEnvironment(t *testing.T) {
	dir := repo(t)
	// A hook's variables point at another repository: none leaks.
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "nosuch"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(t.TempDir(), "index"))
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	top, err := In(dir).Output(context.Background(), "rev-parse", "--show-toplevel")
	if err != nil {
		t.Fatalf("rev-parse with GIT_DIR set: %v; want GIT_DIR not to reach git", err)
	}
	if want, _ := filepath.EvalSymlinks(dir); strings.TrimSpace(top) != want {
		t.Errorf("rev-parse --show-toplevel = %q; want %q", top, want)
	}

	// What a command's own processes see: an alias prints its environment.
	g := Runner{Dir: dir, Env: []string{"GIT_INDEX_FILE=/tmp/own-index"}}
	out, err := g.Output(context.Background(), "-c", "alias.env=!env", "env")
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(out, "\n")
	for _, want := range []string{"LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_INDEX_FILE=/tmp/own-index"} {
		if !contains(env, want) {
			t.Errorf("the environment lacks %s:\n%s", want, out)
		}
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "LC_ALL=de") || kv == "GIT_TERMINAL_PROMPT=1" {
			t.Errorf("the environment has %s: want the process's to be replaced", kv)
		}
	}
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func TestInput(t *testing.T) {
	dir := repo(t)
	out, err := In(dir).Input(context.Background(), "", "hash-object", "-t", "tree", "--stdin")
	if err != nil || strings.TrimSpace(out) != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("hash-object of the empty tree = %q, %v; want the empty tree", out, err)
	}
}

func TestStream(t *testing.T) {
	dir := repo(t)
	s, err := In(dir).Start(context.Background(), "cat-file", "--batch")
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(s.Stdout)
	for range 2 {
		if _, err := io.WriteString(s.Stdin, "HEAD:a.txt\n"); err != nil {
			t.Fatal(err)
		}
		head, err := out.ReadString('\n')
		if err != nil || !strings.HasSuffix(head, " blob 2\n") {
			t.Fatalf("cat-file said %q, %v; want a blob of 2 bytes", head, err)
		}
		if data, err := out.Peek(3); err != nil || string(data) != "a\n\n" {
			t.Fatalf("cat-file's blob = %q, %v", data, err)
		}
		out.Discard(3)
	}
	if err := s.Wait(); err != nil {
		t.Errorf("Wait = %v", err)
	}

	// A command that fails says so when it is waited for.
	s, err = In(dir).Start(context.Background(), "cat-file", "--batch", "--nosuch-option")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, s.Stdout)
	var e *Error
	if err := s.Wait(); !errors.As(err, &e) || e.ExitCode != 129 || e.Stderr == "" {
		t.Errorf("cat-file with an unknown option: Wait = %v; want its exit code and what it said", err)
	}

	// Its timeout ends a stream no one closes.
	s, err = Runner{Dir: dir, Timeout: 200 * time.Millisecond}.Start(context.Background(), "cat-file", "--batch")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, s.Stdout) // until git is killed
	if err := s.Wait(); !errors.As(err, &e) || e.Timeout != 200*time.Millisecond {
		t.Errorf("cat-file past its timeout: Wait = %v; want it killed at its timeout", err)
	}
}

func TestNotARepository(t *testing.T) {
	if !Installed() {
		t.Skip("git is not installed")
	}
	_, err := In(t.TempDir()).Output(context.Background(), "rev-parse", "--git-dir")
	if err == nil || !strings.HasPrefix(err.Error(), "git rev-parse: not a git repository") {
		t.Errorf("rev-parse outside a repository: %v", err)
	}
}

// A command runs no program the repository's configuration names: not
// its hooks, not its file system monitor, not its gpg.program.
func TestNoProgramOfTheRepository(t *testing.T) {
	dir := repo(t)
	marks := filepath.Join(t.TempDir(), "marks")
	script := "#!/bin/sh\necho ran >> " + marks + "\nexit 1\n"
	for _, h := range []string{"pre-commit", "post-commit", "reference-transaction", "prepare-commit-msg", "post-index-change"} {
		if err := os.WriteFile(filepath.Join(dir, ".git", "hooks", h), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g := In(dir)
	ctx := context.Background()
	for _, kv := range [][2]string{{"core.fsmonitor", prog}, {"commit.gpgSign", "true"}, {"gpg.program", prog}} {
		if _, err := g.Output(ctx, "config", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"status", "--porcelain"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "b"}} {
		if out, err := g.Output(ctx, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if data, _ := os.ReadFile(marks); len(data) > 0 {
		t.Errorf("git ran the repository's programs %d times", strings.Count(string(data), "ran"))
	}
}
