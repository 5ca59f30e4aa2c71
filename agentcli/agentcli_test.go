package agentcli

import (
	"slices"
	"strings"
	"testing"
)

// claudeAllowedTools: a rule per check command, its first two words and
// any arguments after them; an option as second word allows the command
// exactly; nothing that would need quoting.
func TestClaudeAllowedTools(t *testing.T) {
	for _, tc := range []struct {
		checks []string
		want   string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"make"}, ` --allowedTools "Bash(make *)"`},
		{[]string{"go test ./...", "go vet ./...", "go test -race ./..."}, ` --allowedTools "Bash(go test *)" "Bash(go vet *)"`},
		{[]string{`sh -c "exit 1"`}, ""},
		{[]string{`sh -c true`, "python3 -m pytest -q"}, ` --allowedTools "Bash(sh -c true)" "Bash(python3 -m pytest -q)"`},
		{[]string{`"$HOME/bin/check"`}, ""},
		{[]string{"npm test", "pytest"}, ` --allowedTools "Bash(npm test *)" "Bash(pytest *)"`},
	} {
		if got := claudeAllowedTools(tc.checks); got != tc.want {
			t.Errorf("claudeAllowedTools(%q) = %q; want %q", tc.checks, got, tc.want)
		}
	}
}

// geminiAllowedTools: claudeAllowedTools' rules, as Gemini CLI's prefixes
// of its shell tool.
func TestGeminiAllowedTools(t *testing.T) {
	for _, tc := range []struct {
		checks []string
		want   string
	}{
		{nil, ""},
		{[]string{"go test ./...", "go vet ./...", "go test -race ./..."}, ` --allowed-tools "run_shell_command(go test)" "run_shell_command(go vet)"`},
		{[]string{`sh -c true`, `sh -c "exit 1"`, "pytest"}, ` --allowed-tools "run_shell_command(sh -c true)" "run_shell_command(pytest)"`},
	} {
		if got := geminiAllowedTools(tc.checks); got != tc.want {
			t.Errorf("geminiAllowedTools(%q) = %q; want %q", tc.checks, got, tc.want)
		}
	}
}

// DisallowedChecks: the gates' commands that a claude command line's
// --allowedTools rules leave out, by Claude Code's rules for Bash.
func TestDisallowedChecks(t *testing.T) {
	checks := []string{"go test ./...", "make lint", "npm test"}
	for _, tc := range []struct {
		command string
		missing string
		ok      bool
	}{
		{`claude -p`, "", false},
		{`claude -p --allowedTools "Bash(go test *)" "Bash(make:*)"`, "npm test", true},
		{`claude -p --allowedTools Bash`, "", true},
		{`claude -p --allowedTools "Bash(go test ./...)",Read --verbose "Bash(npm test)"`, "make lint,npm test", true},
	} {
		missing, ok := DisallowedChecks(tc.command, checks)
		if got := strings.Join(missing, ","); got != tc.missing || ok != tc.ok {
			t.Errorf("DisallowedChecks(%s) = %q, %v; want %q, %v", tc.command, got, ok, tc.missing, tc.ok)
		}
	}
}

// claude plugin list --json: a plugin's load errors, each once, past a
// notice printed before the list.
func TestPluginLoadErrors(t *testing.T) {
	out := []byte("A notice.\n" + `[{"id":"other@x","errors":["e0"]},{"id":"orchestrate@m","errors":["e1","e2","e1"]}]`)
	errs, listed, err := PluginLoadErrors(out, "orchestrate@m")
	if err != nil || !listed || !slices.Equal(errs, []string{"e1", "e2"}) {
		t.Errorf("PluginLoadErrors = %q, %v, %v; want [e1 e2], listed", errs, listed, err)
	}
	if errs, listed, err := PluginLoadErrors([]byte(`[{"id":"orchestrate@m"}]`), "orchestrate@m"); err != nil || !listed || errs != nil {
		t.Errorf("clean: %q, %v, %v", errs, listed, err)
	}
	if _, listed, err := PluginLoadErrors([]byte(`[]`), "orchestrate@m"); err != nil || listed {
		t.Errorf("not installed: listed %v, %v", listed, err)
	}
	if _, _, err := PluginLoadErrors([]byte("2.1.330 (Claude Code)"), "orchestrate@m"); err == nil {
		t.Error("no list: no error")
	}
}
