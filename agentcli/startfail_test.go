package agentcli

import "testing"

// What each agent says when it cannot work, as the real CLIs print it, and
// what must not read as such.
func TestCouldNotStart(t *testing.T) {
	for _, tc := range []struct {
		profile string
		code    int
		output  string
		want    string // the What's start; "" for a launch that worked
	}{
		{Gemini, 55, "Approval mode overridden to \"default\" because the current folder is not trusted.\nGemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.", "Gemini CLI does not trust"},
		{Gemini, 41, "{\n  \"error\": {\n    \"message\": \"Invalid auth method selected.\",\n    \"code\": 41\n  }\n}", "Gemini CLI has no authentication"},
		{Claude, 1, `{"type":"result","is_error":true,"result":"API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}"}`, "the model API refused"},
		{Claude, 1, `{"type":"result","is_error":true,"result":"Invalid API key · Please run /login"}`, "the agent is not signed in"},
		{Claude, 1, "API Error (Connection error.) fetch failed", "the agent could not reach"},
		{Codex, 1, `{"type":"error","message":"quota exceeded for this organization"}`, "the model API refused"},
		{Claude, 1, "request failed with status code 529", "the model API refused"},
		{Opencode, 1, "HTTP 401 Unauthorized", "the agent is not signed in"},
		{Gemini, 1, "Error: connect ECONNREFUSED 127.0.0.1:443", "the agent could not reach"},
		{Codex, 1, "Not inside a trusted directory and --skip-git-repo-check was not specified.", "Codex does not trust"},
		{Custom, 1, "FAIL: TestServer (0.01s)\n    server_test.go:12: got 500", ""},
		// Exit 41 alone says Gemini CLI has no authentication, and 55 that
		// it does not trust the folder: another exit code is an attempt.
		{Gemini, 1, "{\n  \"error\": {\n    \"message\": \"Tool run_shell_command failed: exit status 1\",\n    \"code\": 1\n  }\n}", ""},
		{Gemini, 1, "Gemini CLI is not running in a trusted directory.", ""},
		{Claude, 0, "rate limit", ""},
		{Claude, 1, "--- FAIL: TestRetry: after 429 retries the count is 3", ""},
	} {
		f, line, ok := profiles[tc.profile].CouldNotStart(tc.code, tc.output)
		if ok != (tc.want != "") || ok && (len(f.What) < len(tc.want) || f.What[:len(tc.want)] != tc.want || line == "") {
			t.Errorf("%s, exit %d, %.50q: %v %q %q; want %q", tc.profile, tc.code, tc.output, ok, f.What, line, tc.want)
		}
	}
}
