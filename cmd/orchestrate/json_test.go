package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

func TestAppendJSONString(t *testing.T) {
	for _, v := range []string{"", "plain", `a "quoted" \ back`, "tab\tnl\ncr\r", "\x00\x1f", "café ☕", "\u2028\u2029", "bad \xff byte", "<script>&"} {
		got := string(appendJSONString(nil, v))
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("appendJSONString(%q) = %s: not JSON: %v", v, got, err)
			continue
		}
		want, _ := json.Marshal(v)
		var wantBack string
		json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("appendJSONString(%q) reads back %q; want %q", v, back, wantBack)
		}
	}
}

// TestAppendJSONValue pins how a field's value is typed, at each boundary:
// a count from 0 (a negative one is malformed and stays a string), the
// spellings of a flag, a list, unset as null, and an untyped field as its
// string whatever it looks like.
func TestAppendJSONValue(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"Retry-Count", "0", `0`},
		{"Retry-Count", "12", `12`},
		{"retry count", "`3`", `3`},
		{"Retry-Count", "-1", `"-1"`},
		{"Max-Retries", "many", `"many"`},
		{"Signature-Repeat-Count", "2", `2`},
		{"total_auto_retries", "0", `0`},
		{"Halted", "yes", `true`},
		{"Halted", "0", `false`},
		{"Auto-Retry", "maybe", `"maybe"`},
		{"auto_retry_enabled", "false", `false`},
		{"Approved", "true", `true`},
		{"Escalated", "false", `false`},
		{"Blocking", "TRUE", `true`},
		{"Previous-Signatures", "[]", `[]`},
		{"Previous-Signatures", "[ab, cd]", `["ab", "cd"]`},
		{"Recent-Signatures", "`[ab]`", `["ab"]`},
		{"Retry-Count", "", `null`},
		{"Halted", " null ", `null`},
		{"last_retry_reason", "null", `null`},
		{"Summary", "", `null`},
		{"Priority", "3", `"3"`},
		{"Owner", "true", `"true"`},
		{"Created", " 2024 ", `" 2024 "`},
	} {
		got := string(appendJSONValue(nil, c.name, c.value))
		if got != c.want {
			t.Errorf("appendJSONValue(%q, %q) = %s; want %s", c.name, c.value, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("appendJSONValue(%q, %q) = %s: not JSON", c.name, c.value, got)
		}
	}
}

// TestIssueJSONOneShape checks that status --json and issue show --json
// print an issue alike: the same members in the same order, the same
// values; issue show adds its sections, in the order of the file.
func TestIssueJSONOneShape(t *testing.T) {
	q := queue.Parse([]byte(`# Issue Queue

## ISSUE-20241213-001

| Field | Value |
|-------|-------|
| Type | bug |
| Status | stuck |
| Retry-Count | 3 |
| Halted | yes |
| Previous-Signatures | [ab, cd] |
| Category | |
| Owner | ana "the fixer" |

### Summary
Tests fail

### Failure Details
boom
`))
	if len(q.Problems) > 0 || len(q.Issues) != 1 {
		t.Fatalf("test queue: %v", q.Problems)
	}
	var status, show bytes.Buffer
	if err := writeStatusJSON(&status, session.Parse(nil), q); err != nil {
		t.Fatal(err)
	}
	if err := writeIssueJSON(&show, q.Issues[0], nil); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Session map[string]any   `json:"session"`
		Issues  []map[string]any `json:"issues"`
	}
	var is map[string]any
	if err := json.Unmarshal(status.Bytes(), &st); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, status.String())
	}
	if err := json.Unmarshal(show.Bytes(), &is); err != nil {
		t.Fatalf("issue show --json is not JSON: %v\n%s", err, show.String())
	}
	if got := st.Session["total_auto_retries"]; got != 0.0 {
		t.Errorf("session total_auto_retries = %#v; want the number 0", got)
	}
	if got := st.Session["last_retry_reason"]; got != nil {
		t.Errorf("session last_retry_reason = %#v; want null", got)
	}
	sections := is["sections"]
	delete(is, "sections")
	if !reflect.DeepEqual(st.Issues[0], is) {
		t.Errorf("the issue differs:\nstatus:     %v\nissue show: %v", st.Issues[0], is)
	}
	wantFields := map[string]any{"Type": "bug", "Status": "stuck", "Retry-Count": 3.0, "Halted": true,
		"Previous-Signatures": []any{"ab", "cd"}, "Category": nil, "Owner": `ana "the fixer"`}
	if !reflect.DeepEqual(is["fields"], wantFields) {
		t.Errorf("fields = %#v; want %#v", is["fields"], wantFields)
	}
	if want := map[string]any{"Summary": "Tests fail", "Failure Details": "boom"}; !reflect.DeepEqual(sections, want) {
		t.Errorf("sections = %#v; want %#v", sections, want)
	}
	// The order: the members' names as they appear in each output.
	names := regexp.MustCompile(`"([^"]+)": `)
	order := func(s string) (out []string) {
		for _, m := range names.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	statusIssue := status.String()[strings.Index(status.String(), `"id"`):]
	showIssue, _, _ := strings.Cut(show.String(), `"sections"`)
	if a, b := order(statusIssue), order(showIssue); !slices.Equal(a, b) {
		t.Errorf("member order differs:\nstatus:     %v\nissue show: %v", a, b)
	}
	if got := order(show.String()[strings.Index(show.String(), `"sections"`):]); !slices.Equal(got, []string{"sections", "Summary", "Failure Details"}) {
		t.Errorf("sections in order %v; want the file's", got)
	}
}

// TestEveryCommandJSONOnMistake: every command but the hooks, given --json
// and a flag it does not have, prints exactly one JSON object on stdout
// that says the usage mistake and exit code 2.
func TestEveryCommandJSONOnMistake(t *testing.T) {
	dir := t.TempDir()
	for _, c := range commands {
		if protocolOut[c.name] {
			continue
		}
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{"--dir", dir, c.name, "--json", "--no-such-flag"}, strings.NewReader(""), &stdout, &stderr)
		if code, _ := codeOf(err); code != exitUsage {
			t.Errorf("%s --json --no-such-flag: exit %d, want %d (%v)", c.name, code, exitUsage, err)
		}
		dec := json.NewDecoder(&stdout)
		var got struct {
			Outcome  string `json:"outcome"`
			ExitCode int    `json:"exit_code"`
			Error    string `json:"error"`
		}
		if err := dec.Decode(&got); err != nil {
			t.Errorf("%s --json --no-such-flag: stdout is not a JSON object: %v", c.name, err)
			continue
		}
		if dec.More() {
			t.Errorf("%s --json --no-such-flag: more than one JSON value on stdout", c.name)
		}
		if got.Outcome != "usage" || got.ExitCode != exitUsage || got.Error == "" {
			t.Errorf("%s --json --no-such-flag: %+v", c.name, got)
		}
	}
}
