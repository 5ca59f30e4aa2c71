package results

import (
	"strings"

	"github.com/orchestrate-dev/orchestrate/internal/lazyre"
	"github.com/orchestrate-dev/orchestrate/signature"
)

var (
	// "file:line:col: message" (go vet, staticcheck, golangci-lint, ruff,
	// flake8, eslint -f unix), "file:line: message".
	reLintRow = lazyre.New(`^([^\s:][^:]*?):(\d+):(?:(\d+):)? (.+)$`)
	// tsc: "calc.ts(4,7): error TS2322: message".
	reTscRow = lazyre.New(`^(\S[^(]*)\((\d+),(\d+)\): (?:error|warning) (TS\d+): (.+)$`)
	// eslint's stylish rows under their file: "  2:7  error  message  rule".
	reStylishRow  = lazyre.New(`^\s+\d+:\d+\s+(?:error|warning)\s+(.+?)\s\s+(\S+)$`)
	reStylishFile = lazyre.New(`^(/\S+|\S+\.[A-Za-z]\w*)$`)
	// A rule at the head of the message: ruff's and flake8's "F401 [*] msg".
	reRuleHead = lazyre.New(`^([A-Z]{1,4}\d{2,5}) (?:\[\*\] )?(.+)$`)
	// A rule at its end: staticcheck's "msg (S1000)", golangci-lint's
	// "msg (errcheck)", eslint -f unix's "msg [Error/no-undef]".
	reRuleTail   = lazyre.New(`^(.+) \(([A-Za-z][\w-]*)\)$`)
	reRuleESLint = lazyre.New(`^(.+) \[(?:Error|Warning)/(\S+)\]$`)
)

// lint reads a linter's findings: a unit is "file: rule: message" ("file:
// message" when no rule is said), without the line and column, which move
// with every edit above them; its block the finding's row and the indented
// lines after it.
type lint struct {
	u    *units
	opt  signature.Options
	rows int
	file string       // eslint stylish's file
	cur  *boundedText // the finding whose indented lines follow
}

func newLint(opt signature.Options) *lint { return &lint{u: newUnits(), opt: opt} }

func (l *lint) runner() string   { return "lint" }
func (l *lint) recognized() bool { return l.rows > 0 }

func (l *lint) line(s string) {
	if s != "" && s[0] != ' ' && s[0] != '\t' {
		l.cur = nil
		l.row(s)
		return
	}
	// A line that begins with a blank is a stylish row or a finding's
	// next line; a cheap look first, as most lines of a long output are
	// neither.
	if l.file != "" && (strings.Contains(s, "error") || strings.Contains(s, "warning")) {
		if m := reStylishRow.FindStringSubmatch(s); m != nil {
			l.finding(l.file, m[2], m[1], s)
			return
		}
	}
	if l.cur != nil && s != "" {
		l.cur.add(s)
		return
	}
	l.cur = nil
}

// row reads a line that begins with no blank: a finding's row (it holds
// a colon, a line number after the first), or stylish's file line (one
// word). Each pattern is tried only on a line that holds what it needs.
func (l *lint) row(s string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if strings.Contains(s, "): ") {
			if m := reTscRow.FindStringSubmatch(s); m != nil {
				l.finding(m[1], m[4], m[5], s)
				return
			}
		}
		if m := matchIf(i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9', reLintRow, s); m != nil && !strings.Contains(m[1], " ") {
			msg, rule := splitRule(m[4])
			l.finding(m[1], rule, msg, s)
			return
		}
	}
	if !strings.ContainsAny(s, " \t") {
		if m := reStylishFile.FindStringSubmatch(s); m != nil {
			l.file = m[1]
		}
	}
}

// finding files one finding.
func (l *lint) finding(file, rule, msg, row string) {
	l.rows++
	file = strings.TrimPrefix(relative(l.opt, file), "./")
	id := file + ": " + strings.TrimSpace(msg)
	if rule != "" {
		id = file + ": " + rule + ": " + strings.TrimSpace(msg)
	}
	b, fresh := l.u.fail(id)
	l.cur = nil
	if b != nil {
		b.add(row)
		if fresh {
			l.cur = b
		}
	}
}

// splitRule returns a message without its rule, and the rule.
func splitRule(msg string) (string, string) {
	if m := reRuleHead.FindStringSubmatch(msg); m != nil {
		return m[2], m[1]
	}
	if m := reRuleESLint.FindStringSubmatch(msg); m != nil {
		return m[1], m[2]
	}
	if m := reRuleTail.FindStringSubmatch(msg); m != nil {
		return m[1], m[2]
	}
	return msg, ""
}

func (l *lint) finish() *units { return l.u }
