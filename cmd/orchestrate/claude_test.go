package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzMergeHooks: any hooks file is an error, or a JSON object that has
// our hooks, that a second merge leaves as it is, and whose other keys are
// all still there.
func FuzzMergeHooks(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/orchestrate hook stop", "timeout": 5}]}]}}`,
		`{"hooks": {"stop": [{"command": "orchestrate hook stop --agent cursor", "loop_limit": 5}]}}`,
		`{"hooks": {"Stop": {}}}`, `[]`, `{"a":1,"a":2}`, `{"hooks": {"Stop": [1, "x", null, {"hooks": 3}]}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	specs := []hookSpec{
		{event: "SessionStart", sub: "session-start", command: "orchestrate hook session-start", nums: []numMember{{"timeout", 60}}},
		{event: "Stop", sub: "stop", command: "orchestrate hook stop", nums: []numMember{{"timeout", 600}, {"loop_limit", 10}}},
	}
	f.Fuzz(func(t *testing.T, data []byte, flat bool) {
		out, _, err := mergeHooks(data, flat, specs)
		if err != nil {
			return
		}
		var before, after map[string]json.RawMessage
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("merged %q into %q: not a JSON object: %v", data, out, err)
		}
		if json.Unmarshal(data, &before) == nil {
			for k := range before {
				if _, ok := after[k]; !ok {
					t.Fatalf("merged %q into %q: the key %q is gone", data, out, k)
				}
			}
		}
		if !strings.Contains(string(after["hooks"]), "hook session-start") || !strings.Contains(string(after["hooks"]), "hook stop") {
			t.Fatalf("merged %q into %q: our hooks are not there", data, out)
		}
		again, changed, err := mergeHooks(out, flat, specs)
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("merging %q again: changed %v, %v:\n%s\nthen\n%s", data, changed, err, out, again)
		}
	})
}
