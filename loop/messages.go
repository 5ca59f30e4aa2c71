package loop

import (
	"fmt"
	"strings"
)

const rule = "═══════════════════════════════════════════════════════════════"

// box frames a message as the seed's output messages are framed.
func box(title string, body ...string) string {
	var b strings.Builder
	b.WriteString(rule + "\n" + title + "\n" + rule + "\n\n")
	for _, l := range body {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + rule + "\n")
	return b.String()
}

// SucceededMessage is the seed's AUTO-RETRY SUCCEEDED message.
func SucceededMessage(r Resolution) string {
	lines := []string{fmt.Sprintf("Issue fixed after %d retry attempt(s).", r.Retries)}
	if r.Retries == 0 {
		lines[0] = "Issue fixed on its first attempt, without a retry."
	}
	orig := r.ID
	if r.Summary != "" {
		orig = r.Summary + " (" + r.ID + ")"
	}
	lines = append(lines, "Original issue: "+orig)
	return box("✅ AUTO-RETRY SUCCEEDED", lines...)
}

// FormatOutput puts a command's output in a fenced code block for an
// issue's Failure Details: whole when short, its head and tail when long.
func FormatOutput(out []byte) string {
	const head, tail, maxLine = 20, 60, 400
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(out), "\r\n", "\n"), "\n"), "\n")
	if len(lines) > head+tail+1 {
		omitted := len(lines) - head - tail
		lines = append(append(lines[:head:head], fmt.Sprintf("… %d lines omitted …", omitted)), lines[len(lines)-tail:]...)
	}
	for i, l := range lines {
		if r := []rune(l); len(r) > maxLine {
			lines[i] = string(r[:maxLine]) + "…"
		}
	}
	body := strings.Join(lines, "\n")
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	return fence + "\n" + body + "\n" + fence
}

// ApproveCommand and RejectCommand are the commands a person runs to
// decide on the approval request id.
func ApproveCommand(id string) string { return "orchestrate approve " + id }

// RejectCommand: see ApproveCommand.
func RejectCommand(id string) string {
	return "orchestrate reject " + id + ` --comment "what to change"`
}

// AwaitingApprovalMessage says that a human gate waits on the approval
// request id, and how to decide on it.
func AwaitingApprovalMessage(gate, id string) string {
	return fmt.Sprintf("awaiting approval: gate %s, in %s\n  %s\n  %s\n", gate, id, ApproveCommand(id), RejectCommand(id))
}
