package loop

import (
	"fmt"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// SessionContext is what an agent session is told after its conversation
// was compacted (Claude Code's SessionStart with source compact): the
// open issues its Stop hook filed, one line each, so that it keeps them in
// mind. "" when it has none.
func (w Workspace) SessionContext(session string) (string, error) {
	// As the Stop hook reads it: only the issues that hold the session's
	// key, so that neither the queue's size nor a problem in another
	// issue is this session's business.
	key := SessionKey(session)
	q, err := queue.LoadSome(w.Path(QueueFile), key)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, is := range q.Issues {
		if s, _ := is.Get(FieldSession); s != key || !open(is) {
			continue
		}
		gate, _ := is.Get(FieldGate)
		line := fmt.Sprintf("- %s (%s, gate %s, attempt %d of %d)", is.ID, is.Status(), textclean.Line(gate),
			is.Int(queue.FieldRetryCount, 0), is.Int(queue.FieldMaxRetries, queue.DefaultMaxRetries))
		if sec := is.Section("Summary"); sec != nil {
			if first, _, _ := strings.Cut(strings.TrimSpace(sec.Body()), "\n"); first != "" {
				line += ": " + textclean.Line(first)
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return "", nil
	}
	return "orchestrate: the open issues of this session in .orchestrator/issue_queue.md; " +
		"when you stop, the quality gates run again and a failure comes back as feedback:\n" +
		strings.Join(lines, "\n"), nil
}
