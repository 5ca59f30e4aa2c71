package loop

import (
	"github.com/orchestrate-dev/orchestrate/config"
	"github.com/orchestrate-dev/orchestrate/queue"
	"github.com/orchestrate-dev/orchestrate/session"
)

// wouldRetry reports whether the auto-retry check would trigger a retry
// now, without writing anything: what run asks at its --max-loops limit,
// so that it neither announces nor counts a loop it will not run. The
// sentinel and auto_retry_enabled are the check's to report: with either,
// it says false.
func (w Workspace) wouldRetry(cfg *config.Config) (bool, error) {
	state, err := session.Load(w.Path(StateFile))
	if err != nil {
		return false, err
	}
	if len(state.Problems) > 0 {
		return false, &queue.ValidationError{Path: w.Path(StateFile), Problems: state.Problems}
	}
	if w.disabled(state) != "" {
		return false, nil
	}
	q, err := w.loadQueue()
	if err != nil {
		return false, err
	}
	sel := func(is *queue.Issue) bool {
		s, _ := is.Get(FieldSession)
		return s == ""
	}
	// retryStep changes the issues it retries in q, which is not written.
	retried, _, _ := retryStep(q, cfg, sel, state.TotalAutoRetries() >= cfg.Retry.GlobalCap)
	return len(retried) > 0, nil
}
