package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
)

func TestRendererPlain(t *testing.T) {
	var b bytes.Buffer
	r := newProgressRenderer(&b, false)
	ff := progressGate("tests", "echo failing; exit 1")
	ff.Serial, ff.FailFast = true, true
	lint := progressGate("lint", "true")
	_, err := gate.Evaluate(context.Background(), []config.Gate{ff, lint}, gate.Options{Progress: r.Handle})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := regexpDurations(b.String())
	want := "… tests: running\n" +
		"✘ tests  fail: exit code 1  N.Ns\n" +
		"- lint  skipped: fail_fast gate \"tests\" did not pass\n"
	if got != want {
		t.Errorf("plain progress =\n%s\nwant\n%s", got, want)
	}
}

func TestRendererLive(t *testing.T) {
	var b bytes.Buffer
	r := &progressRenderer{w: &b, live: true, stop: make(chan struct{})} // no ticker: the test refreshes
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	r.now = func() time.Time { return now }

	r.Handle(gate.Event{Kind: gate.GateStarted, Gate: "tests", Time: t0})
	r.Handle(gate.Event{Kind: gate.GateStarted, Index: 1, Gate: "lint", Time: t0})
	now = t0.Add(1500 * time.Millisecond)
	r.Refresh()
	lint := gate.Result{Gate: progressGate("lint", ""), Outcome: gate.Pass, Duration: 2 * time.Second}
	now = t0.Add(2 * time.Second)
	r.Handle(gate.Event{Kind: gate.GateFinished, Index: 1, Gate: "lint", Result: &lint})
	adv := gate.Result{Gate: config.Gate{Name: "tests", Enforcement: config.Advisory}, Outcome: gate.Fail, ExitCode: 2, Duration: 3 * time.Second}
	now = t0.Add(3 * time.Second)
	r.Handle(gate.Event{Kind: gate.GateFinished, Gate: "tests", Result: &adv})
	r.Close()
	r.Handle(gate.Event{Kind: gate.GateStarted, Gate: "late"}) // after Close: ignored

	want := "⋯ tests  0.0s\n" +
		"\x1b[1A\r\x1b[J⋯ tests  0.0s\n⋯ lint  0.0s\n" +
		"\x1b[2A\r\x1b[J⋯ tests  1.5s\n⋯ lint  1.5s\n" +
		"\x1b[2A\r\x1b[J✔ lint  pass  2.0s\n⋯ tests  2.0s\n" +
		"\x1b[1A\r\x1b[J! tests  fail: exit code 2 (advisory)  3.0s\n"
	if got := b.String(); got != want {
		t.Errorf("live progress =\n%q\nwant\n%q", got, want)
	}
}

func progressGate(name, command string) config.Gate {
	return config.Gate{Name: name, Command: command, Timeout: 30 * time.Second, Enforcement: config.Blocking}
}

// regexpDurations replaces the durations, which vary, by N.Ns.
func regexpDurations(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.LastIndex(line, "  "); i >= 0 && strings.HasSuffix(line, "s") && strings.Contains(line[i:], ".") {
			line = line[:i] + "  N.Ns"
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
