package loop

import (
	"bytes"
	"io"

	"github.com/orchestrate-dev/orchestrate/agentcli"
)

// stallWatch reads an agent's output as it comes, and stops the launch
// when the agent says, for the Stall-th time, that it keeps waiting for
// something that will not come (agentcli.StartFailure.Stall: codex retrying
// a model API it cannot reach, for as long as it runs). A line that says
// the agent has worked ends the watch: what happens after is an attempt
// like any other, bounded by agent.timeout. The launch's output then says
// why, and the run tells it apart as an agent that could not work.
type stallWatch struct {
	stalls  []agentcli.StartFailure
	seen    []int
	stop    func()
	partial []byte
	done    bool
	// stalled is the failure that stopped the launch, and the line that
	// said it for the last time; nil while none did.
	stalled *agentcli.StartFailure
	line    string
}

// newStallWatch returns the watch of stalls, which calls stop once.
func newStallWatch(stalls []agentcli.StartFailure, stop func()) *stallWatch {
	return &stallWatch{stalls: stalls, seen: make([]int, len(stalls)), stop: stop}
}

// writer is the watch as gate.Options.Watch takes it: nil when there is
// nothing to watch for.
func (w *stallWatch) writer() io.Writer {
	if len(w.stalls) == 0 {
		return nil
	}
	return w
}

func (w *stallWatch) Write(p []byte) (int, error) {
	if w.done {
		return len(p), nil
	}
	data := p
	if len(w.partial) > 0 {
		data = append(w.partial, p...)
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		w.see(data[:i])
		data = data[i+1:]
		if w.done {
			return len(p), nil
		}
	}
	// A line longer than this says nothing the watch looks for.
	if len(data) > 64<<10 {
		data = nil
	}
	w.partial = append(w.partial[:0], data...)
	return len(p), nil
}

func (w *stallWatch) see(l []byte) {
	for i, f := range w.stalls {
		if f.Worked(l) {
			w.done = true
			return
		}
		if f.Says(l) {
			if w.seen[i]++; w.seen[i] >= f.Stall {
				w.done, w.stalled, w.line = true, &w.stalls[i], string(l)
				w.stop()
				return
			}
		}
	}
}
