package loop

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/fsx"
)

// maxTranscriptTail is how much of a transcript's end LastAssistantText
// reads: the last message is there, and a long session's file is not read
// whole on every stop.
const maxTranscriptTail = 2 << 20

// LastAssistantText returns the text of the last assistant message of a
// Claude Code transcript (JSON lines; an assistant line is
// {"type": "assistant", "message": {"content": [{"type": "text", "text":
// …}, …]}}), a subagent's (isSidechain) left out: what the agent last said
// of its work, for the report's agent fixes. "" when there is none, or the
// file is not such a transcript.
func LastAssistantText(path string) string {
	if path == "" {
		return ""
	}
	// The agent client names the file: never a FIFO that would hang the
	// hook, nor a link, nor more than its tail.
	f, err := fsx.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return ""
	}
	off := max(st.Size()-maxTranscriptTail, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	lines := bytes.Split(data, []byte("\n"))
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // the first is cut
	}
	for i := len(lines) - 1; i >= 0; i-- {
		var entry struct {
			Type        string `json:"type"`
			IsSidechain bool   `json:"isSidechain"`
			Message     struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(lines[i], &entry) != nil || entry.Type != "assistant" || entry.IsSidechain {
			continue
		}
		var text string
		if json.Unmarshal(entry.Message.Content, &text) == nil {
			if text = strings.TrimSpace(text); text != "" {
				return text
			}
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(entry.Message.Content, &blocks) != nil {
			continue
		}
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	return ""
}
