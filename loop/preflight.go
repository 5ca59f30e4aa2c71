package loop

import (
	"errors"
	"fmt"

	"github.com/orchestrate-dev/orchestrate/config"
)

// ErrNoGates is returned by Run, before any agent is launched, when the
// config has no quality gate: nothing would check the agent's work, and
// the run could only fail after it.
var ErrNoGates = errors.New("no quality gate to check the agent's work")

// NoGatesAdvice says what to do about a config with no gates.
const NoGatesAdvice = "add gates: entries (a name and a command each) or gates.preset, then run orchestrate validate --explain"

// checkGates refuses a run with no gate to check it.
func (w Workspace) checkGates(cfg *config.Config) error {
	if len(cfg.Gates) > 0 {
		return nil
	}
	return fmt.Errorf("%s: %w (gates: [] or none): %s", w.Path(ConfigFile), ErrNoGates, NoGatesAdvice)
}
