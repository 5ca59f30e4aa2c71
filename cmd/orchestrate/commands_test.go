package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCommandTable pins the table of commands: sorted by name (help lists
// them in its order), each name once, each with its summary, usage and run.
func TestCommandTable(t *testing.T) {
	if !slices.IsSortedFunc(commands, func(a, b *command) int { return strings.Compare(a.name, b.name) }) {
		t.Errorf("the command table is not sorted by name")
	}
	seen := map[string]bool{}
	for _, c := range commands {
		if seen[c.name] {
			t.Errorf("command %q is in the table twice", c.name)
		}
		seen[c.name] = true
		if c.summary == "" || c.run == nil || !strings.Contains(c.usage, "orchestrate "+c.name) {
			t.Errorf("command %q lacks a summary, a run function or a usage naming it", c.name)
		}
		if lookup(c.name) != c {
			t.Errorf("lookup(%q) does not find its table entry", c.name)
		}
	}
}
