package loop

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/gate"
	"github.com/orchestrate-dev/orchestrate/queue"
)

const approvalQueue = `# Queue

## ISSUE-20241213-001

| Field | Value |
|-------|-------|
| Type | approval |
| Status | pending |
| Gate | sign-off |
| Approved | |

## ISSUE-20241213-002

| Field | Value |
|-------|-------|
| Type | bug |
| Status | pending |
`

func TestApprovalState(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status, approved string
		want             gate.ApprovalState
	}{
		{"pending", "", gate.ApprovalPending},
		{"in_progress", "", gate.ApprovalPending},
		{"pending", "true", gate.ApprovalGiven},
		{"pending", "yes", gate.ApprovalGiven},
		{"resolved", "", gate.ApprovalGiven},
		{"resolved", "1", gate.ApprovalGiven},
		{"pending", "false", gate.ApprovalRejected},
		{"in_progress", "no", gate.ApprovalRejected},
		{"resolved", "false", approvalClosed},
		{"skipped", "", approvalClosed},
		{"stuck", "", approvalClosed},
		{"pending", "maybe", gate.ApprovalPending},
	} {
		text := strings.Replace(strings.Replace(approvalQueue, "| Status | pending |\n| Gate", "| Status | "+tt.status+" |\n| Gate", 1),
			"| Approved | |", "| Approved | "+tt.approved+" |", 1)
		is := queue.Parse([]byte(text)).Issue("ISSUE-20241213-001")
		if got := approvalState(is); got != tt.want {
			t.Errorf("approvalState(Status %s, Approved %q) = %s; want %s", tt.status, tt.approved, got, tt.want)
		}
	}
}

func TestApproveRejectWait(t *testing.T) {
	t.Parallel()
	w := Workspace{Dir: t.TempDir()}
	if err := os.WriteFile(w.Path(QueueFile), []byte(approvalQueue), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 12, 13, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()

	// Nothing decided: WaitApprovals waits until ctx ends.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := w.WaitApprovals(short, []string{"ISSUE-20241213-001"}, 10*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitApprovals(undecided) = %v; want the deadline", err)
	}

	// A person decides while it waits.
	done := make(chan error, 1)
	go func() { done <- w.WaitApprovals(ctx, []string{"ISSUE-20241213-001"}, 10*time.Millisecond) }()
	time.Sleep(50 * time.Millisecond)
	d, err := w.Reject(ctx, now, "ISSUE-20241213-001", "Rename it.\nAnd test it.")
	if err != nil || d.Gate != "sign-off" || d.Approved || d.Status != queue.StatusPending || !d.Changed {
		t.Fatalf("Reject = %+v, %v", d, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WaitApprovals after the rejection = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitApprovals did not see the rejection")
	}
	q, _ := queue.Load(w.Path(QueueFile))
	is := q.Issue("ISSUE-20241213-001")
	if approvalState(is) != gate.ApprovalRejected || is.Section(SectionComment).Body() != "Rename it.\nAnd test it." {
		t.Errorf("after Reject: %s, comment %q", approvalState(is), is.Section(SectionComment).Body())
	}

	d, err = w.Approve(ctx, now, "ISSUE-20241213-001", "")
	if err != nil || !d.Approved || d.Status != queue.StatusResolved || !d.Changed {
		t.Fatalf("Approve = %+v, %v", d, err)
	}
	if d, err = w.Approve(ctx, now, "ISSUE-20241213-001", ""); err != nil || d.Changed {
		t.Errorf("Approve again = %+v, %v; want no change", d, err)
	}
	var notApproval *NotApprovalError
	if _, err := w.Approve(ctx, now, "ISSUE-20241213-002", ""); !errors.As(err, &notApproval) || notApproval.Type != "bug" {
		t.Errorf("Approve(a bug) = %v; want a *NotApprovalError", err)
	}
	var noIssue *NoIssueError
	if _, err := w.Reject(ctx, now, "ISSUE-20991231-001", "x"); !errors.As(err, &noIssue) {
		t.Errorf("Reject(unknown) = %v; want a *NoIssueError", err)
	}
	history, _ := os.ReadFile(filepath.Join(w.Dir, HistoryFile))
	for _, want := range []string{",approval,ISSUE-20241213-001,sign-off,,rejected,,,,Rename it.", ",approval,ISSUE-20241213-001,sign-off,,approved,"} {
		if !strings.Contains(string(history), want) {
			t.Errorf("history.csv has no %q:\n%s", want, history)
		}
	}
}
