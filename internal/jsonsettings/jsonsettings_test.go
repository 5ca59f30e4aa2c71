package jsonsettings

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
	specs := []Hook{
		{Event: "SessionStart", Sub: "session-start", Command: "orchestrate hook session-start", Nums: []Number{{"timeout", 60}}},
		{Event: "Stop", Sub: "stop", Command: "orchestrate hook stop", Nums: []Number{{"timeout", 600}, {"loop_limit", 10}}},
	}
	f.Fuzz(func(t *testing.T, data []byte, flat bool) {
		out, _, err := MergeHooks(data, flat, specs)
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
		again, changed, err := MergeHooks(out, flat, specs)
		if err != nil || changed || string(again) != string(out) {
			t.Fatalf("merging %q again: changed %v, %v:\n%s\nthen\n%s", data, changed, err, out, again)
		}
	})
}

// TestMergeHooks pins the merge: other keys and hooks kept in their order,
// our hook found whatever the path to orchestrate and its timeout raised
// only when smaller (one below and equal are the boundary), a missing
// hook appended, Cursor's flat list with "version": 1, and a file with
// everything already there left as it was, byte for byte.
func TestMergeHooks(t *testing.T) {
	start := Hook{Event: "SessionStart", Sub: "session-start", Command: "orchestrate hook session-start", Nums: []Number{{"timeout", 60}}}
	stop := Hook{Event: "Stop", Sub: "stop", Command: "orchestrate hook stop", Nums: []Number{{"timeout", 600}, {"loop_limit", 0}}}
	for _, c := range []struct {
		name, in string
		flat     bool
		want     string // "" for unchanged
	}{
		{"raise", `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send"}, {"type": "command", "command": "/usr/local/bin/orchestrate hook stop", "timeout": 599}]}], "SessionStart": [{"hooks": [{"type": "command", "command": "orchestrate hook session-start", "timeout": 60}]}]}}`, false,
			`{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send"
          },
          {
            "type": "command",
            "command": "/usr/local/bin/orchestrate hook stop",
            "timeout": 600
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "orchestrate hook session-start",
            "timeout": 60
          }
        ]
      }
    ]
  }
}
`},
		{"kept", `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "orchestrate hook session-start", "timeout": 61}]}], "Stop": [{"hooks": [{"command": "orchestrate hook stop", "timeout": 600}]}]}}`, false, ""},
		{"flat", `{}`, true, `{
  "version": 1,
  "hooks": {
    "SessionStart": [
      {
        "command": "orchestrate hook session-start",
        "timeout": 60
      }
    ],
    "Stop": [
      {
        "command": "orchestrate hook stop",
        "timeout": 600
      }
    ]
  }
}
`},
	} {
		out, changed, err := MergeHooks([]byte(c.in), c.flat, []Hook{start, stop})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.want == "" {
			if changed || string(out) != c.in {
				t.Errorf("%s: changed %v:\n%s", c.name, changed, out)
			}
			continue
		}
		if !changed || string(out) != c.want {
			t.Errorf("%s: changed %v, got\n%s\nwant\n%s", c.name, changed, out, c.want)
		}
	}
	for _, bad := range []string{`[]`, `{"a": 1, "a": 2}`, `{"hooks": {"Stop": {}}}`, `{"hooks": 3}`, `{} {}`, `{"a": }`} {
		if _, _, err := MergeHooks([]byte(bad), false, []Hook{stop}); err == nil {
			t.Errorf("MergeHooks(%s): no error", bad)
		}
	}
}
