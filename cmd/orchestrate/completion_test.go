package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completionScript writes orchestrate completion SHELL to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"completion", shell}, nil, &out, &errb); err != nil {
		t.Fatalf("completion %s: %v %s", shell, err, errb.String())
	}
	path := filepath.Join(t.TempDir(), "orchestrate."+shell)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func requireShell(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err != nil {
		if os.Getenv("ORCHESTRATE_REQUIRE_SHELLS") == "1" {
			t.Fatalf("ORCHESTRATE_REQUIRE_SHELLS=1 but %s is missing", shell)
		}
		t.Skipf("%s is missing", shell)
	}
	return p
}

// The completions as a user meets them: typed words (the last one being
// completed, possibly empty) and the candidates the shell offers.
var completionCases = []struct {
	words []string
	want  []string
}{
	{[]string{"iss"}, []string{"issue"}},
	{[]string{"s"}, []string{"session", "signature", "status"}},
	{[]string{"issue", ""}, []string{"add", "resolve", "retry", "set", "show", "skip"}},
	{[]string{"issue", "add", "--sum"}, []string{"--summary"}},
	{[]string{"--dir", "x", "ses"}, []string{"session"}},
	{[]string{"--json", "session", "s"}, []string{"show", "start"}},
	{[]string{"prompt", "fe"}, []string{"feedback"}},
	{[]string{"prompt", "commands/"}, []string{"commands/orchestrate"}},
	{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	{[]string{"help", "val"}, []string{"validate"}},
	{[]string{"--ver"}, []string{"--version"}},
	{[]string{"run", "--ta"}, []string{"--task", "--task-file"}},
	{[]string{"watch", "--d"}, []string{"--debounce", "--dir"}},
	{[]string{"run", "--task", "x", "--on"}, []string{"--once"}},
	{[]string{"hook", "--cl"}, nil}, // --claude is init's, named in hook's usage
	{[]string{"hook", ""}, []string{"session-start", "stop"}},
	{[]string{"hook", "stop", "--ag"}, []string{"--agent"}},
	{[]string{"init", "--ag"}, []string{"--agent"}},
}

func sorted(s []string) []string {
	s = slices.DeleteFunc(s, func(x string) bool { return x == "" })
	slices.Sort(s)
	return s
}

// TestCompletionBash sources the script in a real bash and asks its
// completion function, as bash does on Tab.
func TestCompletionBash(t *testing.T) {
	bash := requireShell(t, "bash")
	script := completionScript(t, "bash")
	for _, tc := range completionCases {
		words := append([]string{"orchestrate"}, tc.words...)
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1" || exit 9
complete -p orchestrate >/dev/null || exit 8
shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_orchestrate
printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
		cmd.Args = append(cmd.Args, words...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", words, err, out)
		}
		if got := sorted(strings.Split(string(out), "\n")); !slices.Equal(got, tc.want) {
			t.Errorf("bash: orchestrate %s<Tab> = %q; want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
	// --dir completes directories.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "work-a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "work-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1"; COMP_WORDS=(orchestrate --dir work); COMP_CWORD=2; _orchestrate; printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "work-a" {
		t.Errorf("bash: orchestrate --dir work<Tab> = %q, %v; want work-a", out, err)
	}
}

// TestCompletionZsh loads the script in zsh (compinit, bashcompinit) and asks
// the same function with zsh's emulation of bash's completion words. zsh's
// compgen leaves the matching of the typed prefix to compadd, which does it
// when a user presses Tab: the test does the same.
func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	zsh := requireShell(t, "zsh")
	script := completionScript(t, "zsh")
	// One zsh for all the cases (compinit takes a while): each argument is a
	// case's words joined by ":", and each case's candidates end with "==".
	cmd := exec.Command(zsh, "-f", "-c", `source "$1" || exit 9
(( $+functions[_orchestrate] )) || exit 8
shift
setopt ksharrays
for arg in "$@"; do
  COMP_WORDS=("${(@s.:.)arg}"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _orchestrate
  print -l -- "${COMPREPLY[@]}" "=="
done`, "zsh", script)
	for _, tc := range completionCases {
		cmd.Args = append(cmd.Args, strings.Join(append([]string{"orchestrate"}, tc.words...), ":"))
	}
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "ZDOTDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	results := strings.Split(string(out), "==\n")
	if len(results) != len(completionCases)+1 {
		t.Fatalf("zsh printed %d results for %d cases:\n%s", len(results)-1, len(completionCases), out)
	}
	for i, tc := range completionCases {
		cur := tc.words[len(tc.words)-1]
		got := slices.DeleteFunc(strings.Split(results[i], "\n"), func(s string) bool { return !strings.HasPrefix(s, cur) })
		if got = sorted(got); !slices.Equal(got, tc.want) {
			t.Errorf("zsh: orchestrate %s<Tab> = %q; want %q", strings.Join(tc.words, " "), got, tc.want)
		}
	}
}

// TestCompletionFish loads the script in fish and asks complete -C, which is
// what fish offers on Tab.
func TestCompletionFish(t *testing.T) {
	t.Parallel()
	fish := requireShell(t, "fish")
	script := completionScript(t, "fish")
	for _, tc := range completionCases {
		line := "orchestrate " + strings.Join(tc.words, " ")
		cmd := exec.Command(fish, "--no-config", "-c", `source $argv[1]; or exit 9; complete -C $argv[2]`, script, line)
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", line, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			name, _, _ := strings.Cut(l, "\t")
			got = append(got, name)
		}
		// fish offers files where nothing else fits; the cases hold no file names.
		got = slices.DeleteFunc(sorted(got), func(s string) bool { _, err := os.Stat(s); return err == nil })
		if !slices.Equal(got, tc.want) {
			t.Errorf("fish: %s<Tab> = %q; want %q", line, got, tc.want)
		}
	}
}

// Every command and every subcommand its usage names is completed.
func TestCompletionSpecCoversUsage(t *testing.T) {
	spec := completionSpec()
	if len(spec) != len(commands) {
		t.Fatalf("%d commands completed, %d registered", len(spec), len(commands))
	}
	for _, c := range spec {
		usage := lookup(c.name).usage
		for _, w := range subcommands[c.name] {
			if !strings.Contains(usage, "orchestrate "+c.name+" "+w) && !strings.Contains(usage, w+"|") && !strings.Contains(usage, "|"+w) {
				t.Errorf("%s: completes %q, which its usage does not name", c.name, w)
			}
		}
	}
}
