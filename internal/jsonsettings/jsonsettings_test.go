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

// FuzzFindHooks: any file is an error or a list of our hooks; after a
// merge, FindHooks finds exactly the hooks merged in.
func FuzzFindHooks(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`,
		`{"hooks": {"stop": [{"command": "orchestrate hook stop --agent cursor", "timeout": 5}]}}`,
		`{"hooks": {"Stop": {}}}`, `[]`, `{"hooks": {"Stop": [1, "x", null, {"hooks": 3}]}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	specs := []Hook{
		{Event: "SessionStart", Sub: "session-start", Command: "orchestrate hook session-start"},
		{Event: "Stop", Sub: "stop", Command: "orchestrate hook stop", Nums: []Number{{"timeout", 600}}},
	}
	f.Fuzz(func(t *testing.T, data []byte, flat bool) {
		found, err := FindHooks(data, flat)
		if err != nil {
			return
		}
		for _, h := range found {
			if !isOurHook(h.Command, h.Sub) {
				t.Fatalf("FindHooks(%q) found %+v, not ours", data, h)
			}
		}
		out, _, err := MergeHooks(data, flat, specs)
		if err != nil {
			return
		}
		after, err := FindHooks(out, flat)
		if err != nil {
			t.Fatalf("FindHooks of a merged file %q: %v", out, err)
		}
		subs := map[string]bool{}
		for _, h := range after {
			subs[h.Sub] = true
			if h.Event == "Stop" && h.Timeout < 600 {
				t.Fatalf("merged %q: the stop hook's timeout is %v", out, h.Timeout)
			}
		}
		if !subs["stop"] || !subs["session-start"] {
			t.Fatalf("FindHooks(%q) = %+v: a merged hook is missing", out, after)
		}
	})
}

// TestFindHooks: our hooks, whatever the path to orchestrate, with their
// timeouts; no one else's; both shapes.
func TestFindHooks(t *testing.T) {
	groups := `{"hooks": {
	  "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}, {"type": "command", "command": "/opt/bin/orchestrate hook stop", "timeout": 750}]}],
	  "SessionStart": [{"hooks": [{"type": "command", "command": "orchestrate hook session-start"}]}],
	  "PreToolUse": [{"hooks": [{"type": "command", "command": "orchestrate hook stopped"}]}]}}`
	found, err := FindHooks([]byte(groups), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Found{
		{Event: "SessionStart", Sub: "session-start", Command: "orchestrate hook session-start"},
		{Event: "Stop", Sub: "stop", Command: "/opt/bin/orchestrate hook stop", Timeout: 750},
	}
	if len(found) != len(want) || found[0] != want[0] || found[1] != want[1] {
		t.Errorf("FindHooks = %+v; want %+v", found, want)
	}
	flat := `{"version": 1, "hooks": {"stop": [{"command": "orchestrate hook stop --agent cursor", "loop_limit": 10}]}}`
	found, err = FindHooks([]byte(flat), true)
	if err != nil || len(found) != 1 || found[0].Sub != "stop" || found[0].Event != "stop" {
		t.Errorf("FindHooks(cursor's) = %+v, %v", found, err)
	}
	if _, err := FindHooks([]byte(`{"hooks": 1}`), false); err == nil {
		t.Errorf("FindHooks of hooks that are not an object: no error")
	}
}
