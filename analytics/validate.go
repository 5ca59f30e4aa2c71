package analytics

import (
	"fmt"
	"strings"
	"unicode"
)

// ValidID reports whether s may be a run ID or an issue ID in a history
// row and in a path (runs/<run-id>/): 1 to 128 letters, digits, '.', '_',
// '-' and ':', starting with a letter or a digit. Nothing else read from a
// workspace gets that far: not a path, not a shell command.
func ValidID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !ok && (i == 0 || !strings.ContainsRune("._-:", c)) {
			return false
		}
	}
	return true
}

// checkEvent refuses values that a history row must not hold: IDs that
// are not IDs, and a gate name with control characters or one a
// spreadsheet would run as a formula (=, +, -, @ first).
func checkEvent(e *Event) error {
	for _, f := range []struct{ name, v string }{{"run_id", e.RunID}, {"issue_id", e.IssueID}} {
		if f.v != "" && !ValidID(f.v) {
			return fmt.Errorf("%s %q is not valid (letters, digits, '.', '_', '-', ':')", f.name, f.v)
		}
	}
	if strings.ContainsFunc(e.Gate, unicode.IsControl) || strings.ContainsAny(e.Gate[:min(1, len(e.Gate))], "=+-@") {
		return fmt.Errorf("gate name %q is not valid in a history row (control characters, or =, +, - or @ first)", e.Gate)
	}
	return nil
}
