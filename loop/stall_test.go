package loop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An agent that keeps saying it cannot reach its model API, and never
// exits (codex: "Reconnecting... waiting for network"), is stopped at the
// profile's third such line: the run stops at once, quoting it, and counts
// nothing. Before, it ran until agent.timeout (30 minutes), then the gates
// ran and the task's issue was counted. One that finished a model turn
// first is not stopped by the watch: its timeout ends it, an attempt like
// any other.
func TestRunAgentStalled(t *testing.T) {
	t.Parallel()
	const reconnect = `echo '{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}'`
	for _, tc := range []struct {
		name, timeout, agent string
		stops                bool
	}{
		{"no-turn", "10m", `echo '{"type":"thread.started","thread_id":"t-1"}'; while :; do ` + reconnect + `; sleep 0.05; done`, true},
		// The third reconnect stops the launch at once; after the second
		// it goes on, and a turn done then makes it an attempt.
		{"third", "10m", `echo '{"type":"thread.started","thread_id":"t-1"}'; ` + reconnect + `; ` + reconnect + `; ` + reconnect + `; sleep 10`, true},
		{"second", "2s", `echo '{"type":"thread.started","thread_id":"t-1"}'; ` + reconnect + `; ` + reconnect + `; sleep 0.2; ` +
			`echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}'; sleep 30`, false},
		{"after-a-turn", "3s", `echo '{"type":"thread.started","thread_id":"t-1"}'; ` +
			`echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}'; while :; do ` + reconnect + `; sleep 0.05; done`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			w := Workspace{Dir: filepath.Join(root, DefaultDir)}
			os.MkdirAll(w.Dir, 0o755)
			cfg := "agent:\n  profile: codex\n  timeout: " + tc.timeout + "\n  command: |\n    echo run >> launches; " + tc.agent + "\nretry:\n  max_retries: 1\n" +
				"gates:\n  - name: check\n    command: 'echo not yet; exit 1'\n"
			if err := os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			// A generous bound on the whole run: the watch ends the first
			// case in well under a second (its agent's timeout is 10
			// minutes), the timeout the second in 3 s a launch.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := w.Run(ctx, RunOptions{Task: "x"})
			if ctx.Err() != nil {
				t.Fatalf("the run did not end: %v", res)
			}
			launches, _ := os.ReadFile(filepath.Join(root, "launches"))
			q, _ := os.ReadFile(w.Path(QueueFile))
			if tc.stops {
				if err == nil || !strings.Contains(err.Error(), "the agent could not work: codex could not reach its model API") ||
					!strings.Contains(err.Error(), `Reconnecting... waiting for network`) || !strings.Contains(err.Error(), "nothing was counted") {
					t.Fatalf("Run: %v", err)
				}
				if string(launches) != "run\n" || res.Outcome != RunError || strings.Contains(string(q), "## ISSUE-") {
					t.Errorf("launched %q, outcome %s, queue:\n%s", launches, res.Outcome, q)
				}
				return
			}
			if err != nil || !strings.Contains(string(q), "## ISSUE-") || len(res.Agents) == 0 || res.Agents[0].Outcome != "timeout" {
				t.Errorf("Run: %v, agents %+v; queue:\n%s\nwant the attempt ended by its timeout, counted, and its issue filed", err, res.Agents, q)
			}
		})
	}
}

// opencode, after retrying on its own, says once that it cannot connect
// (its words, captured from opencode 1.18.33 against a closed port) and
// ends, its exit code saying nothing: the line stops the launch, and the
// run stops as for an agent that could not work, counting nothing.
func TestRunOpencodeCannotConnect(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	w := Workspace{Dir: filepath.Join(root, DefaultDir)}
	os.MkdirAll(w.Dir, 0o755)
	line := `{"type":"error","timestamp":1795776596457,"sessionID":"ses_de364560dffeLJuAi2UlAEk6uN","error":{"name":"APIError","data":{"message":"Cannot connect to API: Unable to connect. Is the computer able to access the url?","isRetryable":true,"metadata":{"url":"http://127.0.0.1:9/v1/chat/completions"}}}}`
	if err := os.WriteFile(filepath.Join(root, "said.jsonl"), []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "agent:\n  profile: opencode\n  command: 'cat said.jsonl; sleep 5'\ngates:\n  - name: check\n    command: 'echo not yet; exit 1'\n"
	if err := os.WriteFile(w.Path(ConfigFile), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := w.Run(context.Background(), RunOptions{Task: "x"})
	if err == nil || !strings.Contains(err.Error(), "the agent could not work: opencode could not reach its model API") ||
		!strings.Contains(err.Error(), "Cannot connect to API") || !strings.Contains(err.Error(), "nothing was counted") {
		t.Fatalf("Run: %v", err)
	}
	if q, _ := os.ReadFile(w.Path(QueueFile)); res.Outcome != RunError || strings.Contains(string(q), "## ISSUE-") {
		t.Errorf("outcome %s, queue:\n%s", res.Outcome, q)
	}
}
