package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/orchestrate-dev/orchestrate/analytics"
	"github.com/orchestrate-dev/orchestrate/claim"
	"github.com/orchestrate-dev/orchestrate/internal/fsx"
	"github.com/orchestrate-dev/orchestrate/loop"
	"github.com/orchestrate-dev/orchestrate/prompts"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// mcpIssue is an issue as status --json and issue show --json print it:
// its fields typed, and with issue_show its sections.
type mcpIssue struct {
	ID       string            `json:"id" jsonschema:"the issue's ID, ISSUE-YYYYMMDD-NNN"`
	Status   string            `json:"status" jsonschema:"pending, in_progress, resolved, stuck, skipped"`
	Line     int               `json:"line" jsonschema:"the line of its heading in issue_queue.md"`
	Fields   map[string]any    `json:"fields" jsonschema:"its table's fields, by their names as written; counts are numbers, flags booleans, signature lists arrays, unset values null"`
	Sections map[string]string `json:"sections,omitempty" jsonschema:"its sections by title (Summary, Failure Details, …); issue_show only"`
}

// mcpClaim is a claim of an issue, as status shows it.
type mcpClaim struct {
	ID     string `json:"id"`
	Holder string `json:"holder" jsonschema:"NAME@HOST/PID"`
	Epoch  int    `json:"epoch" jsonschema:"the claim's epoch: every change its holder makes carries it"`
	Since  string `json:"since,omitempty" jsonschema:"RFC 3339"`
	Until  string `json:"until,omitempty" jsonschema:"RFC 3339: when the lease ends"`
	Lapsed bool   `json:"lapsed"`
}

// mcpStatus is the status tool's result.
type mcpStatus struct {
	Session  map[string]any `json:"session,omitempty" jsonschema:"session_state.md's fields, typed"`
	Issues   []mcpIssue     `json:"issues,omitempty"`
	Counts   map[string]int `json:"counts" jsonschema:"the number of issues of each status"`
	Claims   []mcpClaim     `json:"claims"`
	Problems []string       `json:"problems" jsonschema:"what is malformed in the files, as file:line: message"`
}

// mcpHistory is the history_summary tool's result: history.csv's headline
// numbers, as the analytics page shows them.
type mcpHistory struct {
	Rows               int64   `json:"rows"`
	First              string  `json:"first,omitempty" jsonschema:"the earliest event, RFC 3339"`
	Last               string  `json:"last,omitempty" jsonschema:"the latest event, RFC 3339"`
	IssuesFiled        int     `json:"issues_filed"`
	FixedAutonomously  int     `json:"fixed_autonomously"`
	AutonomousFixRate  float64 `json:"autonomous_fix_rate"`
	FixedByLoop        int     `json:"fixed_by_loop"`
	MeanAttemptsToPass float64 `json:"mean_attempts_to_pass"`
	SucceededRuns      int     `json:"succeeded_runs"`
	FalsePositives     int     `json:"false_positives"`
	Malformed          int64   `json:"malformed" jsonschema:"rows skipped as unreadable"`
}

type mcpNoArgs struct{}

type mcpIssueArgs struct {
	ID string `json:"id" jsonschema:"the issue's ID, ISSUE-YYYYMMDD-NNN"`
}

func addReadTools(s *mcp.Server, e *env) {
	addJSONTool[mcpStatus](s, e, &mcp.Tool{Name: "status", Annotations: mcpReadOnly,
		Description: "The queue's issues (status, fields), the claims on them, the counts by status, and the session state: what orchestrate status --json shows."},
		mcpStatusTool)
	addTool(s, e, &mcp.Tool{Name: "issue_show", Annotations: mcpReadOnly,
		Description: "One issue with its fields and sections (Summary, Failure Details with the failing output, …): what orchestrate issue show ID --json shows."},
		false, mcpIssueShow)
	addTool(s, e, &mcp.Tool{Name: "history_summary", Annotations: mcpReadOnly,
		Description: "history.csv's headline numbers, as the analytics page shows them: issues filed, fixed by the loop, fix rate, attempts to pass."},
		false, mcpHistorySummary)
}

// mcpStatusTool writes status --json's object, with the counts, the
// claims and the problems after its session and issues.
func mcpStatusTool(e *env) ([]byte, error) {
	ws := e.ws()
	if err := ws.Exists(); err != nil {
		return nil, err
	}
	q, st, err := loadStatus(ws)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeStatusJSON(&b, st, q); err != nil {
		return nil, err
	}
	rest, err := json.Marshal(statusRest(e, ws, q, st))
	if err != nil {
		return nil, err
	}
	head := bytes.TrimRight(b.Bytes(), "}\n")
	return append(append(append(head, ",\n  "...), rest[1:len(rest)-1]...), "\n}\n"...), nil
}

// statusRest is what the status tool shows beyond status --json: the
// counts, the claims, the problems.
func statusRest(e *env, ws loop.Workspace, q *queue.Queue, st *session.State) mcpStatus {
	out := mcpStatus{Counts: map[string]int{}, Claims: []mcpClaim{}, Problems: []string{}}
	now := e.now()
	for _, is := range q.Issues {
		out.Counts[is.Status()]++
		if l := claim.Of(is); l.Holder != "" {
			out.Claims = append(out.Claims, mcpClaim{ID: is.ID, Holder: l.Holder, Epoch: l.Epoch,
				Since: rfc3339(l.Since), Until: rfc3339(l.Until), Lapsed: l.Lapsed(now)})
		}
	}
	for _, p := range q.Problems {
		out.Problems = append(out.Problems, p.Format(ws.Path(loop.QueueFile)))
	}
	for _, p := range st.Problems {
		out.Problems = append(out.Problems, p.Format(ws.Path(loop.StateFile)))
	}
	return out
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func mcpIssueShow(e *env, in mcpIssueArgs) (mcpIssue, error) {
	if err := checkName("id", in.ID); err != nil {
		return mcpIssue{}, err
	}
	path := e.ws().Path(loop.QueueFile)
	q, err := queue.Load(path)
	if err != nil {
		return mcpIssue{}, err
	}
	is := q.Issue(in.ID)
	if is == nil {
		return mcpIssue{}, &loop.NoIssueError{Path: path, ID: in.ID}
	}
	var b bytes.Buffer
	if err := writeIssueJSON(&b, is, nil); err != nil {
		return mcpIssue{}, err
	}
	var out mcpIssue
	return out, json.Unmarshal(b.Bytes(), &out)
}

func mcpHistorySummary(e *env, _ mcpNoArgs) (mcpHistory, error) {
	ws := e.ws()
	if err := ws.Exists(); err != nil {
		return mcpHistory{}, err
	}
	f, err := os.Open(ws.Path(loop.HistoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return mcpHistory{}, nil
	}
	if err != nil {
		return mcpHistory{}, err
	}
	defer f.Close()
	m, err := analytics.Compute(f)
	if err != nil {
		return mcpHistory{}, err
	}
	return mcpHistory{Rows: m.Rows, First: rfc3339(m.First), Last: rfc3339(m.Last),
		IssuesFiled: m.IssuesFiled, FixedAutonomously: m.FixedAutonomously, AutonomousFixRate: m.AutonomousFixRate,
		FixedByLoop: m.FixedByLoop, MeanAttemptsToPass: m.MeanAttemptsToPass, SucceededRuns: m.SucceededRuns,
		FalsePositives: m.FalsePositives, Malformed: m.Malformed}, nil
}

// mcpResources are the workspace's files a client may read: name, file,
// MIME type.
var mcpResources = [][3]string{
	{"queue", loop.QueueFile, "text/markdown"},
	{"session", loop.StateFile, "text/markdown"},
	{"page", loop.AnalyticsFile, "text/html"},
}

// addPromptsAndResources serves the prompt templates (orchestrate prompt
// NAME: the workspace's own version, or the bundled one) as prompts, and
// the queue, the session state and the analytics page as resources.
func addPromptsAndResources(s *mcp.Server, e *env) {
	for _, name := range prompts.Names() {
		s.AddPrompt(&mcp.Prompt{Name: strings.ReplaceAll(strings.TrimSuffix(name, ".md"), "/", "_"),
			Description: "orchestrate's " + name + " template, as orchestrate prompt " + name + " prints it"},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				text, err := prompts.Load(e.ws().Path(loop.PromptsDir), name)
				if err != nil {
					return nil, err
				}
				return &mcp.GetPromptResult{Description: name, Messages: []*mcp.PromptMessage{
					{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
			})
	}
	for _, r := range mcpResources {
		uri := "orchestrate://" + r[0]
		s.AddResource(&mcp.Resource{URI: uri, Name: r[0], MIMEType: r[2], Description: "the workspace's " + r[1]},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				data, _, err := fsx.ReadFileMax(e.ws().Path(r[1]), 64<<20)
				if errors.Is(err, fs.ErrNotExist) {
					return nil, mcp.ResourceNotFoundError(uri)
				}
				if err != nil {
					return nil, err
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: r[2], Text: string(data)}}}, nil
			})
	}
}
