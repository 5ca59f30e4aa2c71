package main

import (
	"encoding/json"
	"testing"
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
