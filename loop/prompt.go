package loop

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/internal/textclean"
	"github.com/orchestrate-dev/orchestrate/prompts"
	"github.com/orchestrate-dev/orchestrate/queue"
)

// The templates of the prompts orchestrate run sends the agent, in
// prompts/ (each overridable in .orchestrator/prompts/).
const (
	// PromptAgent starts an agent on the task and the open issues.
	PromptAgent = "agent.md"
	// PromptContinue starts a fresh agent on work another one began
	// (seed 003's continuation prompt).
	PromptContinue = "continuation.md"
	// PromptResume sends the same agent, resumed, the gates' feedback.
	PromptResume = "resume.md"
)

// PromptData is what the prompt templates are executed with.
type PromptData struct {
	Task      string // the task, as given; may be empty when only issues are open
	Title     string // its first line, or a title saying what the issues are
	Loop      int    // this loop, from 1
	MaxLoops  int    // 0 when only the retry limits bound the run
	Fresh     bool   // a fresh agent, rather than the same one resumed
	Workspace string // the workspace directory, relative to the repository
	Gates     []string

	Issues []PromptIssue // the open issues, in queue order

	// What earlier loops of this run did: the last evaluation's feedback,
	// the end of the last agent's output (its own summary, as a rule), the
	// files changed so far (git diff --stat, in a git repository), and one
	// line per earlier loop.
	Feedback     string
	WorkSummary  string
	FilesChanged string
	Attempts     []PromptAttempt

	// For a resumed agent, in a git repository: Unchanged when the tree is
	// as it left it; else ChangedSince names the files changed since.
	// Outside a repository both are zero: it cannot be told.
	Unchanged    bool
	ChangedSince string
}

// PromptIssue is an open issue in a prompt.
type PromptIssue struct {
	ID, Status, Priority, Summary, Gate string
	RetryCount, MaxRetries              int
	Verification, SuggestedFix          string
	FailureDetails                      string // its last failure's output, as the queue keeps it
}

// PromptAttempt is one earlier loop of the run.
type PromptAttempt struct {
	Loop   int
	Agent  string   // "fresh", "resumed", or "no": the gates ran alone
	Failed []string // the blocking gates that failed, with their signatures' first characters
}

// renderPrompt executes the template name, the user's override or the
// embedded one, with d.
func (w Workspace) renderPrompt(name string, d PromptData) (string, error) {
	text, err := prompts.Load(w.Path(PromptsDir), name)
	if err != nil {
		return "", err
	}
	t, err := template.New(name).Funcs(promptFuncs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("parsing prompt template %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("rendering prompt %s: %w", name, err)
	}
	return textclean.Text(b.String()), nil // text, whatever the queue or a gate held
}

var promptFuncs = template.FuncMap{
	"join": strings.Join,
	"trim": strings.TrimSpace,
}

// openIssues returns the issues an agent is to work on: those not
// resolved, skipped or stuck, and not a human gate's approval request,
// which is a person's.
func openIssues(q *queue.Queue, maxRetries int) []PromptIssue {
	var out []PromptIssue
	for _, is := range q.Issues {
		st := is.Status()
		if st != queue.StatusPending && st != queue.StatusInProgress || isApproval(is) {
			continue
		}
		p := PromptIssue{
			ID: is.ID, Status: st, Summary: summaryOf(is),
			RetryCount: is.Int(queue.FieldRetryCount, 0),
			MaxRetries: is.Int(queue.FieldMaxRetries, maxRetries),
		}
		p.Priority, _ = is.Get(queue.FieldPriority)
		p.Gate, _ = is.Get(FieldGate)
		p.Verification = sectionText(is, queue.SectionVerification)
		p.SuggestedFix = sectionText(is, queue.SectionSuggestedFix)
		p.FailureDetails = sectionText(is, queue.SectionFailureDetails)
		out = append(out, p)
	}
	return out
}

func sectionText(is *queue.Issue, title string) string {
	if s := is.Section(title); s != nil {
		return strings.TrimSpace(s.Body())
	}
	return ""
}

// titleOf is what a continuation prompt names the task by: its heading
// or its first sentence, cut short.
func titleOf(task string, issues []PromptIssue) string {
	if task = strings.TrimSpace(task); task != "" {
		first, _, _ := strings.Cut(task, "\n\n")
		if strings.HasPrefix(first, "#") {
			first, _, _ = strings.Cut(first, "\n")
			return strings.TrimSpace(strings.TrimLeft(first, "#"))
		}
		title := strings.Join(strings.Fields(first), " ")
		if i := strings.Index(title, ". "); i >= 0 {
			title = title[:i+1]
		}
		if r := []rune(title); len(r) > 100 {
			title = string(r[:99]) + "…"
		}
		return title
	}
	switch len(issues) {
	case 0:
		return "make the quality gates pass"
	case 1:
		return "fix " + issues[0].ID
	}
	return fmt.Sprintf("fix the %d open issues", len(issues))
}

// workSummary is the end of an agent's output, which is where agents put
// their account of what they did.
func workSummary(out string) string {
	s, _ := gate.Excerpt(out, 30, 3<<10)
	return strings.TrimSpace(s)
}
