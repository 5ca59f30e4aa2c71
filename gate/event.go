package gate

import "time"

// EventKind says what happened to a gate.
type EventKind int

const (
	GateStarted EventKind = iota
	GateFinished
	GateSkipped
)

// Event is a gate starting, finishing or being skipped, for live progress.
type Event struct {
	Kind   EventKind
	Index  int // the gate's place in the config
	Gate   string
	Time   time.Time
	Result *Result // for GateFinished and GateSkipped
}
