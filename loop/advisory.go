package loop

import (
	"fmt"
	"strings"

	"github.com/orchestrate-dev/orchestrate/config"
)

// AdvisoryMessage tells the person about the advisory gates that failed
// while every blocking gate passed: they do not keep the agent working,
// but they are not silent either. "" when none failed.
func AdvisoryMessage(gr *GateRun) string {
	if gr == nil || gr.Evaluation == nil {
		return ""
	}
	var lines []string
	for i := range gr.Evaluation.Results {
		r := &gr.Evaluation.Results[i]
		if !r.Failed() || r.Enforcement() != config.Advisory {
			continue
		}
		line := fmt.Sprintf("  - %s (advisory): %s", r.Name(), r.Reason())
		if a, ok := gr.Issues[r.Name()]; ok && a.ID != "" {
			line += "; " + a.ID
		}
		if r.LogPath != "" {
			line += "; output: " + r.LogPath
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return ""
	}
	return "orchestrate: the blocking quality gates pass, so the agent may stop; advisory gates failed:\n" + strings.Join(lines, "\n")
}
