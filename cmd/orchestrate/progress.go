package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/gate"
)

// progressRenderer shows the progress of an evaluation on a writer, usually stderr.
// Live, for a terminal, it keeps one line per running gate with its elapsed
// time at the bottom, redrawn in place, and prints a line for each gate that
// is done above it. Not live, it prints a plain line per event. Whether
// stderr is a terminal is for the caller to decide.
//
//	r := newProgressRenderer(os.Stderr, isTerminal)
//	defer r.Close()
//	opts.Progress = r.Handle
type progressRenderer struct {
	w    io.Writer
	live bool
	now  func() time.Time

	mu      sync.Mutex
	running []runningGate // in start order
	drawn   int           // lines of the running block on screen
	stop    chan struct{}
	closed  bool
}

type runningGate struct {
	index int
	name  string
	start time.Time
}

// refreshEvery is how often a live renderer redraws the elapsed times.
const refreshEvery = 200 * time.Millisecond

// newProgressRenderer returns a renderer writing to w. A live one redraws itself
// until Close.
func newProgressRenderer(w io.Writer, live bool) *progressRenderer {
	r := &progressRenderer{w: w, live: live, now: time.Now, stop: make(chan struct{})}
	if live {
		go r.tick()
	}
	return r
}

func (r *progressRenderer) tick() {
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.Refresh()
		case <-r.stop:
			return
		}
	}
}

// Handle takes an event; it is meant for the options' Progress.
func (r *progressRenderer) Handle(e gate.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	var done string
	switch e.Kind {
	case gate.GateStarted:
		r.running = append(r.running, runningGate{e.Index, e.Gate, e.Time})
		if !r.live {
			fmt.Fprintf(r.w, "… %s: running\n", e.Gate)
			return
		}
	case gate.GateFinished, gate.GateSkipped:
		for i, g := range r.running {
			if g.index == e.Index {
				r.running = append(r.running[:i], r.running[i+1:]...)
				break
			}
		}
		if e.Result != nil {
			done = doneLine(e.Result)
		}
		if !r.live {
			fmt.Fprintln(r.w, done)
			return
		}
	}
	r.redraw(done)
}

// Refresh redraws the running gates' elapsed times; a live renderer calls
// it by itself.
func (r *progressRenderer) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live && !r.closed {
		r.redraw("")
	}
}

// Close stops the redrawing and clears the running lines.
func (r *progressRenderer) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	close(r.stop)
	if r.live && r.drawn > 0 {
		fmt.Fprint(r.w, clearLines(r.drawn))
		r.drawn = 0
	}
}

// redraw replaces the running block with done (if any) and the block anew,
// in one write so that the terminal never shows half of it.
func (r *progressRenderer) redraw(done string) {
	var b strings.Builder
	b.WriteString(clearLines(r.drawn))
	if done != "" {
		b.WriteString(done + "\n")
	}
	now := r.now()
	for _, g := range r.running {
		fmt.Fprintf(&b, "⋯ %s  %s\n", g.name, elapsed(now.Sub(g.start)))
	}
	r.drawn = len(r.running)
	io.WriteString(r.w, b.String())
}

// clearLines moves the cursor up n lines and clears from there down.
func clearLines(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dA\r\x1b[J", n)
}

func doneLine(r *gate.Result) string {
	d := elapsed(r.Duration)
	switch r.Outcome {
	case gate.Pass:
		return fmt.Sprintf("✔ %s  pass  %s", r.Name(), d)
	case gate.Skipped:
		return fmt.Sprintf("- %s  %s", r.Name(), r.Err)
	case gate.AwaitingApproval:
		return fmt.Sprintf("? %s  %s", r.Name(), r.Err)
	}
	mark, mode := "✘", ""
	if e := r.Enforcement(); e != config.Blocking {
		mark, mode = "!", " ("+string(e)+")"
	}
	return fmt.Sprintf("%s %s  %s: %s%s  %s", mark, r.Name(), r.Outcome, r.Reason(), mode, d)
}

func elapsed(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
