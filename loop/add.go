package loop

import (
	"context"
	"strconv"
	"time"

	"github.com/orchestrate-dev/orchestrate/queue"
)

// NewIssue is an issue to file.
type NewIssue struct {
	// Fields by name; the seed's defaults fill the ones not given.
	Fields map[string]string
	// Sections by title (Summary, Verification Step, Suggested Fix, …).
	Sections map[string]string
}

// Defaults returns the seed's fields of a new issue, as of now.
func Defaults(now time.Time, maxRetries int) map[string]string {
	return map[string]string{
		queue.FieldType:                 "bug",
		queue.FieldPriority:             "medium",
		queue.FieldStatus:               queue.StatusPending,
		queue.FieldSource:               "manual",
		queue.FieldCategory:             "",
		queue.FieldCreated:              now.UTC().Format(time.RFC3339),
		queue.FieldAutoRetry:            "false",
		queue.FieldRetryCount:           "0",
		queue.FieldMaxRetries:           strconv.Itoa(maxRetries),
		queue.FieldFailureSignature:     "",
		queue.FieldPreviousSignatures:   "[]",
		queue.FieldSignatureRepeatCount: "0",
		queue.FieldHalted:               "false",
		queue.FieldBlocking:             "false",
	}
}

// AddIssue files a new issue and returns its ID.
func (w Workspace) AddIssue(ctx context.Context, now time.Time, ni NewIssue) (string, error) {
	for k, v := range ni.Fields {
		if err := queue.CheckValue(k, v); err != nil {
			return "", err
		}
	}
	fields := Defaults(now, queue.DefaultMaxRetries)
	for k, v := range ni.Fields {
		for d := range fields {
			if queue.CanonicalName(k) == d {
				delete(fields, d)
			}
		}
		fields[k] = v
	}
	var id string
	err := w.update(ctx, func(q *queue.Queue) error {
		id = q.Add(now, fields, ni.Sections).ID
		return nil
	})
	return id, err
}
